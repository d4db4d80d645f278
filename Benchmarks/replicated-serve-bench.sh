#!/usr/bin/env bash
# `herald serve` with the replicated log (PostgreSQL under Patroni, synchronous standby, through
# HAProxy: Tools/cluster.sh without Herald partitions) against the local log, in the same run,
# interleaved: for each round and each number of connections (durable producers, one event
# per request, each answered after its commit), a fresh local store, then a fresh store on a
# fresh log id. Prints requests/s, latency, and where the time goes: CPU seconds of herald and
# of PostgreSQL (all three nodes) per 1,000 requests, and records per PostgreSQL transaction
# (the group commit's size).
#
# usage: Benchmarks/replicated-serve-bench.sh [--seconds N] [--rounds N] [--connections "1 8 64"]
# Builds the release herald through this package (as Tools/serve-bench.sh does) unless
# HERALD_BIN names a directory holding one. Run as root (Tools/cluster.sh starts PostgreSQL as
# the postgres user); needs wrk and Tools/setup.sh's packages. Never run by CI.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=10
rounds=2
connections="1 8 64"
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "replicated-serve-bench.sh: unknown option $1" >&2; exit 1 ;;
  esac
done
command -v wrk >/dev/null || { echo "replicated-serve-bench.sh: wrk not found (apt-get install -y wrk)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/herald-replicated-bench.XXXXXX")
chmod 755 "$work"
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  [ -f "$work/cluster/cluster.env" ] && HERALD_CLUSTER_DIR="$work/cluster" "$root/Tools/cluster.sh" down >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

if [ -z "${HERALD_BIN:-}" ]; then
  echo "· building herald (release, Benchmarks/ package)" >&2
  (cd "$root/Benchmarks" && swift build -c release --product herald >&2)
  bin=$(cd "$root/Benchmarks" && swift build -c release --show-bin-path)
else
  bin=$HERALD_BIN
fi

echo "· PostgreSQL: Tools/cluster.sh (three nodes under Patroni, HAProxy), no Herald partitions" >&2
HERALD_CLUSTER_DIR="$work/cluster" HERALD_CLUSTER_PARTITIONS=0 "$root/Tools/cluster.sh" up >&2
# shellcheck source=/dev/null
. "$work/cluster/cluster.env"
export PGPASSWORD=$SUPERUSER_PASSWORD
sql() { psql -h 127.0.0.1 -p "$PG_PROXY_PORT" -U postgres -d herald -X -Atqc "$1"; }


# CPU seconds (user + system) used so far by `pids`.
cpu() {
  local total=0 pid ticks
  for pid in "$@"; do
    ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null) || continue
    total=$((total + ticks))
  done
  awk -v t="$total" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz }'
}

# The cluster's PostgreSQL processes: the three postmasters and their children.
postgres_pids() {
  local node pid
  for node in pg1 pg2 pg3; do
    pid=$(head -1 "$work/cluster/$node/data/postmaster.pid" 2>/dev/null) || continue
    echo "$pid"
    ps -o pid= --ppid "$pid" 2>/dev/null || true
  done
}

# One measurement: `herald serve` (local, or replicated on log id `id`) under wrk -c `c`.
measure() {
  local mode=$1 c=$2 id=$3 store=$work/store-$3
  local args=(serve --store "$store" --listen 127.0.0.1:0 --log-level warning --snapshot-seconds 0)
  [ "$mode" = local ] || args+=(--replicated-log "$POSTGRES_URL" --log-id "$id")
  HERALD_ADMIN_TOKEN=bench "$bin/herald" "${args[@]}" > "$work/serve.out" 2>&1 &
  server=$!
  local port=
  for _ in $(seq 300); do
    port=$(sed -n 's/.*listening on [^ ]*:\([0-9]*\),.*/\1/p' "$work/serve.out")
    [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  [ -n "$port" ] || { cat "$work/serve.out" >&2; echo "replicated-serve-bench.sh: the server did not start" >&2; exit 2; }
  local pg_pids commits_before herald_cpu pg_cpu
  mapfile -t pg_pids < <(postgres_pids)
  commits_before=$(sql "SELECT xact_commit FROM pg_stat_database WHERE datname = 'herald'")
  herald_cpu=$(cpu "$server") pg_cpu=$(cpu "${pg_pids[@]}")
  local threads=$c
  [ "$threads" -le 2 ] || threads=2
  wrk -t "$threads" -c "$c" -d "${seconds}s" --latency -s "$root/Tools/serve-bench.lua" "http://127.0.0.1:$port" > "$work/wrk.out"
  herald_cpu=$(awk -v a="$herald_cpu" -v b="$(cpu "$server")" 'BEGIN { print b - a }')
  pg_cpu=$(awk -v a="$pg_cpu" -v b="$(cpu "${pg_pids[@]}")" 'BEGIN { print b - a }')
  local commits records rate p50 p99 errors per_txn
  commits=$(( $(sql "SELECT xact_commit FROM pg_stat_database WHERE datname = 'herald'") - commits_before ))
  kill "$server"; wait "$server" 2>/dev/null || true; server=
  rate=$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$work/wrk.out")
  p50=$(sed -n 's/^p50: \([0-9.]*\) ms/\1/p' "$work/wrk.out"); p99=$(sed -n 's/^p99: \([0-9.]*\) ms/\1/p' "$work/wrk.out")
  errors=$(sed -n 's/^non-2xx: //p' "$work/wrk.out")
  per_txn=-
  if [ "$mode" != local ]; then
    records=$(sql "SELECT count(*) FROM herald_records WHERE log_id = '$id'")
    # Every transaction of the database in the run counts (heartbeats too): a lower bound.
    per_txn=$(awk -v r="$records" -v t="$commits" 'BEGIN { if (t > 0) printf "%.1f", r / t; else print "-" }')
  fi
  local requests
  requests=$(awk -v r="$rate" -v s="$seconds" 'BEGIN { printf "%d", r * s }')
  printf '%-10s %5d %10.0f %8s %8s %6s %12s %12s %9s\n' "$mode" "$c" "$rate" "$p50" "$p99" "$errors" \
    "$(awk -v x="$herald_cpu" -v n="$requests" 'BEGIN { printf "%.3f", n ? x * 1000 / n : 0 }')" \
    "$(awk -v x="$pg_cpu" -v n="$requests" 'BEGIN { printf "%.3f", n ? x * 1000 / n : 0 }')" "$per_txn" | tee -a "$work/table"
  rm -rf "$store"
}

echo "· $rounds rounds × connections $connections, ${seconds}s each, local then replicated" >&2
printf '%-10s %5s %10s %8s %8s %6s %12s %12s %9s\n' log conns "req/s" "p50 ms" "p99 ms" non2xx \
  "herald cpu/k" "pg cpu/k" "rec/txn"
for round in $(seq "$rounds"); do
  for c in $connections; do
    measure local "$c" "local-r$round-c$c"
    measure replicated "$c" "bench-r$round-c$c"
  done
done
# The median of the req/s of `mode` at `c` connections.
median() {
  awk -v m="$1" -v c="$2" '$1 == m && $2 == c { print $3 }' "$work/table" | sort -n \
    | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
echo "ratio (replicated / local, medians of the rounds):"
for c in $connections; do
  awk -v c="$c" -v l="$(median local "$c")" -v r="$(median replicated "$c")" \
    'BEGIN { printf "  %3d connections: local %.0f, replicated %.0f req/s: %.2f×\n", c, l, r, r / l }'
done
