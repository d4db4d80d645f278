#!/usr/bin/env bash
# Herald's benchmark harness: builds release binaries, builds the C baselines (raw LMDB,
# SQLite WAL) from $HERALD_BASELINES (default ../shared/bench beside the repository), runs the macro benchmark
# (Benchmarks/ package, `herald-bench`) and prints one table: each target of the performance
# table, Herald's figure, the baseline measured in the same run at Herald's record size, the
# ratio, the target and pass/short.
#
# usage: Tools/bench.sh [--quick] [herald-bench options: --events N --single N
#                        --concurrent-per-producer N --ingest-lines N]
#   --quick   small sizes (200 k events, 2 k single appends); under 5 minutes once built.
#   default   10 M-event log (batched append, rebuild, restart), 5 k single appends,
#             8×2 500 concurrent appends, 1 M ingest lines, 1 M-event compaction.
#   both      end with the projection alone against its floor (1 M events, ~20 s).
# Temporary stores go under ${TMPDIR:-/tmp} and are removed at the end.
# Needs: gcc, liblmdb-dev, libsodium-dev, libsqlite3-dev. Never run by CI (wall-clock figures never gate CI).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
baselines=${HERALD_BASELINES:-$root/../shared/bench}
args=()
for arg in "$@"; do
  case $arg in
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) args+=("$arg") ;;
  esac
done
for file in lmdb_append.c sqlite_append.c; do
  [ -f "$baselines/$file" ] || { echo "bench.sh: $baselines/$file not found (set HERALD_BASELINES)" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/herald-bench-tools.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Both binaries are built by the Benchmarks package (it depends on the root package by path,
# so `herald` is built from the same sources with `-c release`), which compiles the shared
# dependencies (swift-crypto, BoringSSL) once instead of twice.
echo "· building herald and herald-bench (release, Benchmarks/ package)" >&2
# SwiftPM (6.3) keeps the build plan of a path dependency across builds and does not see
# source files added to or removed from the root package since: drop the cached plan so it is
# recomputed (a second or two; compiled objects are kept).
rm -f "$root/Benchmarks/.build/release.yaml" "$root"/Benchmarks/.build/*/release/description.json
(cd "$root/Benchmarks" && swift build -c release --product herald >&2 && swift build -c release --product herald-bench >&2)
bin="$(cd "$root/Benchmarks" && swift build -c release --show-bin-path)"
herald="$bin/herald"
bench="$bin/herald-bench"
echo "· building the C baselines" >&2
gcc -O2 -o "$work/lmdb_append" "$baselines/lmdb_append.c" -llmdb
gcc -O2 -o "$work/sqlite_append" "$baselines/sqlite_append.c" -lsqlite3

"$bench" run --herald "$herald" --lmdb-baseline "$work/lmdb_append" --sqlite-baseline "$work/sqlite_append" \
  --tmp "${TMPDIR:-/tmp}" ${args[@]+"${args[@]}"}

# The projection alone (issue #3's 5 M events/s row, which has no store baseline): its replay
# against the floor, the least work any projection of the workload must do per event
# (Tools/projection-bench/Sources/projection-bench/Floor.swift), interleaved in one process.
echo "· the projection alone and its floor: Tools/projection-bench, 1 M events" >&2
(cd "$root/Tools/projection-bench" && swift build -c release >&2 && ONLY=floor .build/release/projection-bench 1000000) | grep '^floor:'
