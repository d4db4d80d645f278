#!/bin/sh
# Crash tests at scale: SIGKILLs `herald ingest`, `herald compact` and `herald snapshot` at
# random moments (HERALD_CRASH_KILLS ingest kills, default 1000, plus a quarter as many
# compaction/snapshot kills) and checks that every acknowledged event survives, seqs stay
# contiguous, verify passes and the state equals a full replay.
# Each round checks only what it added against a reference projection advanced alongside, and
# `verify` rereads the whole log every tenth round, so the time grows about linearly with the
# kill count.
set -eu
cd "$(dirname "$0")/.."
swift build --build-tests
HERALD_CRASH_KILLS="${HERALD_CRASH_KILLS:-1000}" swift test --skip-build --filter HeraldStoreTests.CrashTests
