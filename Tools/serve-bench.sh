#!/usr/bin/env bash
# `herald serve` under load, with wrk (Debian: apt-get install -y wrk) on loopback: durable
# ingest (`POST /v1/events`, one event per request, each answered once its group commit is
# on disk) at 64 connections, requests/s and latency percentiles; and, measured in the same
# run on the same disk, the library's own group-commit rate with 64 producer threads
# (`herald-bench producers`), the figure the service is held against (≥ 0.5×).
#
# usage: Tools/serve-bench.sh [--seconds N] [--connections N] [--library-events N]
# (--library-events: events per producer of the library baseline, default 3000, so that it
# runs for seconds, not a fraction of one, and the ratio it prints last is less noisy.)
# Builds release binaries through the Benchmarks/ package (as Tools/bench.sh does). Temporary
# stores go under ${TMPDIR:-/tmp} and are removed at the end. Never run by CI.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=20
connections=64
library_events=3000
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --library-events) library_events=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "serve-bench.sh: unknown option $1" >&2; exit 1 ;;
  esac
done
command -v wrk >/dev/null || { echo "serve-bench.sh: wrk not found (apt-get install -y wrk)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/herald-serve-bench.XXXXXX")
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

if [ -z "${HERALD_BIN:-}" ]; then
  echo "· building herald and herald-bench (release, Benchmarks/ package)" >&2
  rm -f "$root/Benchmarks/.build/release.yaml" "$root"/Benchmarks/.build/*/release/description.json
  (cd "$root/Benchmarks" && swift build -c release --product herald >&2 && swift build -c release --product herald-bench >&2)
  bin=$(cd "$root/Benchmarks" && swift build -c release --show-bin-path)
else
  bin=$HERALD_BIN
fi

echo "· library baseline: $connections producer threads, durable appends" >&2
baseline=$("$bin/herald-bench" producers --store "$work/library" "$connections" "$library_events")
echo "library:  $baseline"

echo "· herald serve, wrk -c $connections -d ${seconds}s" >&2
HERALD_ADMIN_TOKEN=bench "$bin/herald" serve --store "$work/served" --listen 127.0.0.1:0 --log-level warning \
  --snapshot-seconds 0 > "$work/serve.out" &
server=$!
for _ in $(seq 100); do grep -q "listening on" "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/.*listening on [^ ]*:\([0-9]*\),.*/\1/p' "$work/serve.out")
[ -n "$port" ] || { echo "serve-bench.sh: the server did not start" >&2; exit 2; }

wrk -t 2 -c "$connections" -d "${seconds}s" --latency -s "$root/Tools/serve-bench.lua" "http://127.0.0.1:$port" | tee "$work/wrk.out"
echo "store:    $(curl -s -H 'Authorization: Bearer bench' "http://127.0.0.1:$port/v1/stats" | head -c 200)"
rate=$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$work/wrk.out")
library=$(echo "$baseline" | sed -n 's/.*: \([0-9]*\) events\/s.*/\1/p')
[ -n "$rate" ] && [ -n "$library" ] && echo "ratio:    $(awk -v r="$rate" -v l="$library" 'BEGIN { printf "%.2f", r / l }') (service requests/s over library events/s)"
