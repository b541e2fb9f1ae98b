#!/usr/bin/env bash
# Lints the GitHub workflows with actionlint, built from its Go module into the same per-machine
# cache as the local cluster's binaries (built once, about a minute on 2 cores; then instant).
#
# Usage: scripts/actionlint.sh [actionlint flags]   lints .github/workflows/ and examples/ workflows
set -euo pipefail
cd "$(dirname "$0")/.."
ACTIONLINT_VERSION=v1.7.12

# shellcheck source=scripts/tools.sh
source scripts/tools.sh
cache=${JOB_SWEEPER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/job-sweeper}
bin="$cache/actionlint-$ACTIONLINT_VERSION/actionlint"
if [ ! -x "$bin" ]; then
  # Go >= 1.26 on PATH (or /usr/local/go/bin), or a message that says what is found and what is needed.
  require_go
  echo "[actionlint] building github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION" >&2
  started=$(date +%s)
  GOBIN=$(dirname "$bin") CGO_ENABLED=0 GOTOOLCHAIN=local go install -ldflags "-s -w -X main.version=$ACTIONLINT_VERSION" \
    "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
  echo "[actionlint] built in $(( $(date +%s) - started ))s" >&2
fi

# The examples that are whole workflows (they have jobs:), besides the repository's own.
workflows=(.github/workflows/*.yml)
for f in examples/*.yml; do
  grep -q '^jobs:' "$f" && workflows+=("$f")
done
exec "$bin" "$@" "${workflows[@]}"
