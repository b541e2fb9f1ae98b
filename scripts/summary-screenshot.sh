#!/usr/bin/env bash
# Regenerates docs/summary.png, the README's picture of a job summary: a rich pre phase rendered
# as GitHub-flavoured Markdown and screenshotted by headless Chromium (Debian's chromium package,
# or the browser CHROMIUM names; fonts-noto-color-emoji draws the headline's ✅ and ❌).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
scripts/node24 test/summary/screenshot.ts "$@"
