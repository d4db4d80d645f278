#!/usr/bin/env bash
# Audits and time travel with the audit index (issue #23 §8): on a large store (default 10 M
# events, `herald-bench populate`), the audit index is built (`herald index`), then for one
# account of median size, objects, notifications, groups and `state --at SEQ --account A`
# points chosen evenly through its history are each run best of 3 with the index and best
# of 3 replaying the whole history (`audit --no-index`, `state --no-snapshots`), in the same
# run, their outputs compared byte for byte. Prints one row per target (milliseconds, peak
# resident memory) and a summary against the targets: ≤ 50 ms, ≤ 64 MiB, ≥ 20× the replay.
#
# usage: Tools/audit-bench.sh [--store DIR] [--events N] [--targets K]
#   --store DIR   use (and keep) this store; populated when it does not exist yet
#   --events N    events of a populated store (default 10000000)
#   --targets K   objects, and as many notifications and groups (default 6)
# Also run by `Tools/bench.sh --audit`. Never run by CI (wall-clock figures never gate CI).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
events=10000000
targets=6
store=""
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    --store) store=$2; shift ;;
    --events) events=$2; shift ;;
    --targets) targets=$2; shift ;;
    *) echo "audit-bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
echo "· building herald and herald-bench (release, Benchmarks/ package)" >&2
rm -f "$root/Benchmarks/.build/release.yaml" "$root"/Benchmarks/.build/*/release/description.json
(cd "$root/Benchmarks" && swift build -c release --product herald >&2 && swift build -c release --product herald-bench >&2)
bin="$(cd "$root/Benchmarks" && swift build -c release --show-bin-path)"
keep=true
if [ -z "$store" ]; then
  store=$(mktemp -d "${TMPDIR:-/tmp}/herald-audit-bench.XXXXXX")/store
  keep=false
  trap 'rm -rf "$(dirname "$store")"' EXIT
fi
if [ ! -f "$store/data.mdb" ]; then
  echo "· populating $store with $events events" >&2
  "$bin/herald-bench" populate --store "$store" --events "$events" --tail 10000 >&2
fi
echo "· building the audit index" >&2
"$bin/herald" index --store "$store" >&2
# Page walks are remembered per unchanged file (HERALD_CACHE_DIR): the first read of a copy
# walks every page, later ones do not. Measured warm, after one untimed read.
export HERALD_CACHE_DIR=${HERALD_CACHE_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/herald-audit-bench-cache.XXXXXX")}
sleep 2
python3 - "$bin/herald" "$store" "$targets" <<'PY'
import json, os, subprocess, sys, time

herald, store, count = sys.argv[1], sys.argv[2], int(sys.argv[3])

def run(arguments):
    """Wall seconds, peak RSS (KiB) and stdout of one run. The peak is /usr/bin/time's: a
    child forked from this (large) Python process would report the parent's RSS as its own
    high-water mark (Linux keeps maxrss across fork and exec)."""
    start = time.perf_counter()
    process = subprocess.run(["/usr/bin/time", "-f", "%M", herald] + arguments + ["--store", store],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if process.returncode != 0:
        sys.exit(f"audit-bench: herald {' '.join(arguments)} exited {process.returncode}")
    return elapsed, int(process.stderr.decode().split()[-1]), process.stdout

def best(arguments, runs=3):
    results = [run(arguments) for _ in range(runs)]
    outputs = {r[2] for r in results}
    if len(outputs) != 1:
        sys.exit(f"audit-bench: herald {' '.join(arguments)} gave different outputs")
    return min(r[0] for r in results), min(r[1] for r in results), results[0][2]

stats = json.loads(run(["stats", "--json"])[2])
records = stats["records"]
index = json.loads(run(["index", "--json"])[2])
accounts = sorted(stats["byAccount"].items(), key=lambda item: item[1])
account, account_events = accounts[len(accounts) // 2]
print(f"store: {records} records, {len(accounts)} accounts; audited account {account} ({account_events} events)")
print(f"audit index: {index['buckets']} buckets of target windows, {index['seqChunks']} seq chunks, "
      f"{index['bytes'] / 1048576:.1f} MiB = {index['bytes'] / records:.1f} B per record")

# Targets evenly through the account's history: its notify events (objects), and the
# notifications and groups their audits name.
lines = run(["export", "--account", account])[2].decode().splitlines()
notifies = [json.loads(line) for line in lines if '"type":"notify"' in line]
objects = [notifies[(i * len(notifies)) // count + len(notifies) // (2 * count)] for i in range(count)]
cases = [(f"object #{o['id']} of {o['chat']}", ["audit", "--account", account, "--chat", o["chat"], "--object", str(o["id"]), "--json"], ["--no-index"]) for o in objects]
notifications, groups = [], []
for case in list(cases):
    for line in run(case[1])[2].decode().splitlines():
        for effect in json.loads(line).get("effects", []):
            if effect.get("kind") == "created":
                notifications.append(effect["notificationId"])
                groups.append(effect["groupId"])
for n in sorted(set(notifications))[:count]:
    cases.append((f"notification {n}", ["audit", "--account", account, "--notification", str(n), "--json"], ["--no-index"]))
for g in sorted(set(groups))[:count]:
    cases.append((f"group {g}", ["audit", "--account", account, "--group", str(g), "--json"], ["--no-index"]))
for i in range(count):
    seq = (2 * i + 1) * records // (2 * count)
    cases.append((f"state --at {seq}", ["state", "--account", account, "--at", str(seq), "--json"], ["--no-snapshots"]))

run(cases[0][1])  # one untimed read: the page walk of the copy, remembered from here on
print(f"{'target':<34} {'indexed':>9} {'RSS':>8} {'replay':>9} {'RSS':>8} {'speed-up':>9}  same  ≤50ms ≤64MiB ≥20×")
met = 0
rows = []
for name, arguments, slow in cases:
    fast_s, fast_rss, fast_out = best(arguments)
    slow_s, slow_rss, slow_out = best(arguments + slow)
    same = fast_out == slow_out
    ratio = slow_s / fast_s
    checks = (fast_s <= 0.050, fast_rss <= 64 * 1024, ratio >= 20)
    met += all(checks) and same
    rows.append(fast_s)
    print(f"{name:<34} {fast_s * 1000:7.1f}ms {fast_rss / 1024:6.1f}Mi {slow_s * 1000:7.0f}ms {slow_rss / 1024:6.1f}Mi {ratio:8.1f}×  {'yes' if same else 'NO '}  "
          + "  ".join("pass " if c else "short" for c in checks))
    if not same:
        sys.exit(f"audit-bench: {name}: the indexed output differs from the replay's")
rows.sort()
print(f"{met} of {len(cases)} targets meet every line; indexed median {rows[len(rows) // 2] * 1000:.1f} ms, worst {rows[-1] * 1000:.1f} ms")
PY
$keep && echo "· store kept at $store" >&2 || true
