#!/bin/sh
# Crash tests at scale: SIGKILLs `herald ingest`, `herald compact` and `herald snapshot` at
# random moments (HERALD_CRASH_KILLS ingest kills, default 1000, plus a quarter as many
# compaction/snapshot kills) and checks that every acknowledged event survives, seqs stay
# contiguous, verify passes and the state equals a full replay.
# Each round checks only what it added against a reference projection advanced alongside, and
# `verify` rereads the whole log every tenth round. The default took 32 minutes on 2 cores
# (3 to build, 8 for the 1,000 ingest kills, 21 for the 250 compaction and snapshot kills,
# whose rounds each compact a store that grows by 700 events a round);
# HERALD_CRASH_KILLS=200 takes about 3.
set -eu
cd "$(dirname "$0")/.."
swift build --build-tests
HERALD_CRASH_KILLS="${HERALD_CRASH_KILLS:-1000}" swift test --skip-build --filter HeraldStoreTests.CrashTests
