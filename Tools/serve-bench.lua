-- wrk script of Tools/serve-bench.sh and Benchmarks/replicated-serve-bench.sh: one canonical
-- notify event per request (POST /v1/events, token "bench"), unique per connection and request.
local counter = 0
local thread_id = 0
function setup(thread) thread:set("id", thread_id); thread_id = thread_id + 1 end
function init(args) counter = 0 end
request = function()
  counter = counter + 1
  local body = string.format(
    '{"type":"notify","account":"tg:%d","chat":"user:%d","kind":"message","id":%d,"date":1754385290,"title":"Alice","body":"hello %d"}',
    id, counter % 50, counter, counter)
  return wrk.format("POST", "/v1/events", {["Authorization"] = "Bearer bench", ["Content-Type"] = "application/x-ndjson"}, body)
end
done = function(summary, latency, requests)
  io.write(string.format("non-2xx: %d\n", summary.errors.status))
  for _, p in ipairs({50, 90, 99, 99.9}) do
    io.write(string.format("p%s: %.2f ms\n", p, latency:percentile(p) / 1000))
  end
end
