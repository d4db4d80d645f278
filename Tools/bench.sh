#!/usr/bin/env bash
# Herald's benchmark harness: builds release binaries, builds the C baselines (raw LMDB,
# SQLite WAL) from $HERALD_BASELINES (default Benchmarks/Baselines, a copy of the project's
# shared bench folder), runs the macro benchmark
# (Benchmarks/ package, `herald-bench`) and prints one table: each target of the performance
# table, Herald's figure, the baseline measured in the same run at Herald's record size, the
# ratio, the target and pass/short.
#
# usage: Tools/bench.sh [--quick] [herald-bench options: --events N --single N
#                        --concurrent-per-producer N --ingest-lines N]
#   --quick   small sizes (200 k events, 2 k single appends); under 5 minutes once built.
#   default   10 M-event log (batched append, rebuild, restart), 5 k single appends,
#             8×2 500 concurrent appends, 1 M ingest lines, 1 M-event compaction.
#   both      end with the projection alone against its floor (1 M events, ~20 s), then
#             against the C limit ($HERALD_BASELINES/limit, see "The limit" below).
#   --limit   only the comparison with the C limit (projection replay and apply on
#             projection-bench's streams, full rebuild of a 1 M-event store vs its export).
#   --audit [Tools/audit-bench.sh options]
#             only audits and state --at with the audit index on a 10 M-event store, against
#             a replay of the whole history in the same run (Tools/audit-bench.sh).
# Temporary stores go under ${TMPDIR:-/tmp} and are removed at the end.
# Needs: gcc, liblmdb-dev, libsodium-dev, libsqlite3-dev. Never run by CI (wall-clock figures never gate CI).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
baselines=${HERALD_BASELINES:-$root/Benchmarks/Baselines}
if [ "${1:-}" = --audit ]; then shift; exec "$(dirname "$0")/audit-bench.sh" "$@"; fi
args=()
limit_only=false
for arg in "$@"; do
  case $arg in
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    --limit) limit_only=true ;;
    *) args+=("$arg") ;;
  esac
done
for file in lmdb_append.c sqlite_append.c limit/floor_replay.c limit/benchgen.py limit/prep.py; do
  [ -f "$baselines/$file" ] || { echo "bench.sh: $baselines/$file not found (set HERALD_BASELINES)" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/herald-bench-tools.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Both binaries are built by the Benchmarks package (it depends on the root package by path,
# so `herald` is built from the same sources with `-c release`), which compiles the shared
# dependencies (swift-crypto, BoringSSL) once instead of twice.
echo "· building herald and herald-bench (release, Benchmarks/ package)" >&2
# SwiftPM (6.3) keeps the build plan of a path dependency across builds and does not see
# source files added to or removed from the root package since: drop the cached plans of both
# packages that depend on it (Benchmarks, Tools/projection-bench) so they are recomputed (a
# second or two; compiled objects are kept).
for package in Benchmarks Tools/projection-bench; do
  rm -f "$root/$package/.build/release.yaml" "$root/$package"/.build/*/release/description.json
done
(cd "$root/Benchmarks" && swift build -c release --product herald >&2 && swift build -c release --product herald-bench >&2)
bin="$(cd "$root/Benchmarks" && swift build -c release --show-bin-path)"
herald="$bin/herald"
bench="$bin/herald-bench"
echo "· building the C baselines" >&2
gcc -O2 -o "$work/lmdb_append" "$baselines/lmdb_append.c" -llmdb
gcc -O2 -o "$work/sqlite_append" "$baselines/sqlite_append.c" -lsqlite3

$limit_only || "$bench" run --herald "$herald" --lmdb-baseline "$work/lmdb_append" --sqlite-baseline "$work/sqlite_append" \
  --tmp "${TMPDIR:-/tmp}" ${args[@]+"${args[@]}"}

# The projection alone (issue #3's 5 M events/s row, which has no store baseline): its replay
# against the floor, the least work any projection of the workload must do per event
# (Tools/projection-bench/Sources/projection-bench/Floor.swift), interleaved in one process.
(cd "$root/Tools/projection-bench" && swift build -c release >&2)
projection_bench="$root/Tools/projection-bench/.build/release/projection-bench"
if ! $limit_only; then
  echo "· the projection alone and its floor: Tools/projection-bench, 1 M events" >&2
  ONLY=floor "$projection_bench" 1000000 | grep '^floor:'
fi

# The limit: SEMANTICS §2–§7 replayed in C with names interned beforehand
# ($baselines/limit/README.md), on the very events Herald replays. Its input is prepared
# untimed (benchgen.py writes projection-bench's stream, prep.py interns and packs it). Runs
# are interleaved, three rounds, best of each: only ratios from one run compare.
echo "· the C limit: building, preparing projection-bench's streams (untimed)" >&2
gcc -O2 -o "$work/floor_replay" "$baselines/limit/floor_replay.c"
gcc -O2 -DVIS=1 -o "$work/floor_replay_vis" "$baselines/limit/floor_replay.c"
limit_rate() { "$@" 3 | sed -n 's/.* = \([0-9.]*\) M events\/s.*/\1/p'; }
best() { printf '%s\n' "$@" | sort -g | tail -1; }
ratio_row() {  # label herald limit target
  awk -v l="$1" -v h="$2" -v b="$3" -v t="$4" 'BEGIN { r = h / b; printf "%-58s %6.2f M/s  limit %6.2f M/s  %5.2f×  target ≥ %s×  %s\n", l, h, b, r, t, (r >= t ? "pass" : "short") }'
}
for small in "" 10; do
  name=${small:+SMALL=$small}; name=${name:-100×100}
  python3 "$baselines/limit/benchgen.py" 1000000 ${small:+--small $small} > "$work/stream.jsonl"
  python3 "$baselines/limit/prep.py" "$work/stream.jsonl" "$work/stream.bin" 2>/dev/null
  rm -f "$work/stream.jsonl"
  replay=(); apply=(); plain=(); vis=(); memory=""
  for round in 1 2 3; do
    plain+=("$(limit_rate "$work/floor_replay" "$work/stream.bin")")
    out=$(SMALL=$small ONLY=floor "$projection_bench" 1000000)
    apply+=("$(sed -n 's/^apply: .* = \([0-9.]*\) M events\/s.*/\1/p' <<<"$out")")
    replay+=("$(sed -n 's/^floor: .*replay (best of 4[^)]*) \([0-9.]*\) M events\/s.*/\1/p' <<<"$out")")
    vis+=("$(limit_rate "$work/floor_replay_vis" "$work/stream.bin")")
  done
  memory=$(SMALL=$small ONLY=memory "$projection_bench" 1000000 | sed -n 's/.* -> \([0-9.]*\) bytes each.*/\1/p')
  ratio_row "projection replay, $name, vs C limit without view" "$(best "${replay[@]}")" "$(best "${plain[@]}")" 0.6
  ratio_row "apply with updates, $name, vs C limit with view" "$(best "${apply[@]}")" "$(best "${vis[@]}")" 0.5
  echo "memory per live notification, $name: $memory B (target ≤ 285 B)"
done

# Full rebuild of a 1 M-event store in a cold process (decoding included) against the limit
# replaying that store's export.
echo "· the C limit: a 1 M-event store, its export, rebuilds" >&2
store="$work/limit-store"
"$bench" populate --store "$store" --events 1000000 >&2
"$herald" export --store "$store" > "$work/store.jsonl"
python3 "$baselines/limit/prep.py" "$work/store.jsonl" "$work/store.bin" 2>/dev/null
rm -f "$work/store.jsonl"
rebuild=(); plain=()
for round in 1 2 3; do
  plain+=("$(limit_rate "$work/floor_replay" "$work/store.bin")")
  rebuild+=("$("$bench" rebuild --store "$store" | awk -F'[ =]' '{ printf "%.3f", $6 / $2 / 1e6 }')")
done
ratio_row "full rebuild, 1 M-event store, cold process, vs C limit" "$(best "${rebuild[@]}")" "$(best "${plain[@]}")" 0.7
