#!/usr/bin/env bash
# Writes screenshots of the web console's pages (sign-in, accounts, shade, timeline, store,
# a damaged copy) to a folder, default Tools/screenshots/: the browser tests run with
# HERALD_CONSOLE_SCREENSHOTS set, in headless Chromium (Tools/setup.sh installs it).
# Usage: Tools/console-screenshots.sh [FOLDER]
set -euo pipefail
cd "$(dirname "$0")/.."
folder="${1:-Tools/screenshots}"
mkdir -p "$folder"
folder="$(cd "$folder" && pwd)"
HERALD_CONSOLE_SCREENSHOTS="$folder" swift test --filter ConsoleBrowserTests
ls -l "$folder"/*.png
