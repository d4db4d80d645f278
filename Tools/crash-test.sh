#!/bin/sh
# Crash tests at scale: SIGKILLs `herald ingest`, `herald compact` and `herald snapshot` at
# random moments (HERALD_CRASH_KILLS ingest kills, default 1000, plus a quarter as many
# compaction/snapshot kills) and checks that every acknowledged event survives, seqs stay
# contiguous, verify passes and the state equals a full replay.
# Time: HERALD_CRASH_KILLS=120 takes about 2 minutes; the default 1000 takes well over half an
# hour, because every kill is followed by a full check in the debug test build on a store that
# keeps growing.
set -eu
cd "$(dirname "$0")/.."
swift build --build-tests
HERALD_CRASH_KILLS="${HERALD_CRASH_KILLS:-1000}" swift test --skip-build --filter HeraldStoreTests.CrashTests
