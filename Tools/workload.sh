#!/bin/sh
# Prints a realistic, seeded workload as canonical JSONL (one event per line), the input the
# benchmarks use: 100 accounts, 10 000 chats, ~70 % notify, duplicate deliveries, reads,
# deletes with and without a chat, dismissals and chat settings.
# Usage: Tools/workload.sh --events N [--seed S] [--accounts A] [--chats C] > workload.jsonl
# Then, for example: herald ingest --store /tmp/w --format herald workload.jsonl
# The generator is `herald-workload` of the Benchmarks/ package (shared with herald-bench);
# it is built in release mode on first use.
set -eu
cd "$(dirname "$0")/../Benchmarks"
swift build -c release --product herald-workload >&2
exec "$(swift build -c release --show-bin-path)/herald-workload" "$@"
