#!/usr/bin/env bash
# Formats (or, with --check, lints) every Swift file with the toolchain's swift-format and
# the repository's .swift-format.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--check" ]; then
  swift format lint --recursive --parallel Sources Tests
else
  swift format format --in-place --recursive --parallel Sources Tests
fi
