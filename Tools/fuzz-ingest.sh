#!/bin/sh
# Runs the ingest fuzz suite (Tests/HeraldIngestTests/Fuzz.swift) with many more cases than CI.
# Usage: Tools/fuzz-ingest.sh [cases-per-adapter] [seed]
# Defaults: 1 000 000 cases per adapter, the suite's fixed seed. Release mode for speed.
set -eu
cd "$(dirname "$0")/.."
HERALD_FUZZ_CASES="${1:-1000000}"
export HERALD_FUZZ_CASES
if [ $# -ge 2 ]; then
    HERALD_FUZZ_SEED="$2"
    export HERALD_FUZZ_SEED
fi
echo "fuzzing every ingest adapter with $HERALD_FUZZ_CASES cases each" >&2
HERALD_FUZZ_VERBOSE=1 exec swift test -c release -Xswiftc -enable-testing --filter 'HeraldIngestTests.Fuzz'
