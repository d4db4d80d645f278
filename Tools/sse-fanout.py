#!/usr/bin/env python3
"""SSE fan-out of `herald serve`: N subscribers follow one account's update stream; events are
posted one at a time and each subscriber's delivery delay after the 2xx of its POST (the
commit) is recorded. Prints p50/p99/max delivery delay and the server's resident memory per
idle subscriber. Standard library only.

usage: Tools/sse-fanout.py --port PORT --token TOKEN --pid SERVER_PID [--subscribers 1000] [--events 20]
"""
import argparse, asyncio, json, time, urllib.request


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def subscriber(port, token, received, ready):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write((f"GET /v1/accounts/fanout/updates HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                  "Accept: text/event-stream\r\n\r\n").encode())
    await writer.drain()
    ready.set_result(True) if not ready.done() else None
    while True:
        line = await reader.readline()
        if not line:
            return
        if line.startswith(b"id: "):
            received.setdefault(int(line[4:].strip()), []).append(time.monotonic())


def post(port, token, body):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/events", data=body.encode(), method="POST",
                                     headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())["seqs"][0]


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--events", type=int, default=20)
    args = parser.parse_args()
    loop = asyncio.get_running_loop()
    post(args.port, args.token, '{"type":"notify","account":"fanout","chat":"c","kind":"message","id":1,"date":1}')
    before = rss_kib(args.pid)
    received = {}
    readies = [loop.create_future() for _ in range(args.subscribers)]
    tasks = [asyncio.create_task(subscriber(args.port, args.token, received, ready)) for ready in readies]
    await asyncio.gather(*readies)
    await asyncio.sleep(2)
    after = rss_kib(args.pid)
    delays = []
    for index in range(args.events):
        body = '{"type":"notify","account":"fanout","chat":"c","kind":"message","id":%d,"date":1}' % (index + 2)
        seq = await loop.run_in_executor(None, post, args.port, args.token, body)
        acked = time.monotonic()
        deadline = acked + 5
        while len(received.get(seq, [])) < args.subscribers and time.monotonic() < deadline:
            await asyncio.sleep(0.001)
        times = received.get(seq, [])
        delays += [(t - acked) * 1000 for t in times]
        if len(times) < args.subscribers:
            print(f"seq {seq}: only {len(times)} of {args.subscribers} subscribers got it")
    delays.sort()
    pick = lambda q: delays[min(len(delays) - 1, int(q * len(delays)))]
    print(f"subscribers {args.subscribers}, events {args.events}, deliveries {len(delays)}")
    print(f"delivery after the POST's 2xx: p50 {pick(0.5):.1f} ms, p99 {pick(0.99):.1f} ms, max {delays[-1]:.1f} ms")
    print(f"server RSS {before} KiB before, {after} KiB with the subscribers idle: {(after - before) / args.subscribers:.1f} KiB each")
    for task in tasks:
        task.cancel()

asyncio.run(main())
