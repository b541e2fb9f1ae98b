#!/usr/bin/env bash
# Runs nektos/act (an independent implementation of the GitHub Actions runner), built from its Go
# module into the same per-machine cache as the local cluster's binaries and actionlint (built
# once; then instant). test/act.test.ts runs workflows of test/act/ with it in host mode.
#
# Usage: scripts/act.sh --build-only   builds it (if missing) and prints the binary's path
#        scripts/act.sh [act flags]    runs it (with ACT_DISABLE_VERSION_CHECK=1: no network)
set -euo pipefail
ACT_VERSION=v0.2.89

# shellcheck source=tools.sh
source "$(dirname "${BASH_SOURCE[0]}")/tools.sh"
cache=${JOB_SWEEPER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/job-sweeper}
bin="$cache/act-$ACT_VERSION/act"
if [ ! -x "$bin" ]; then
  # Go >= 1.26 on PATH (or /usr/local/go/bin), or a message that says what is found and what is needed.
  require_go
  echo "[act] building github.com/nektos/act@$ACT_VERSION" >&2
  started=$(date +%s)
  # Into a private directory, then renamed: a second build at the same time (CI's stage and a
  # test run) never sees half a binary.
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/act-build.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  GOBIN="$tmp" CGO_ENABLED=0 GOTOOLCHAIN=local go install -ldflags "-s -w -X main.version=${ACT_VERSION#v}" \
    "github.com/nektos/act@$ACT_VERSION"
  mkdir -p "$(dirname "$bin")"
  mv -f "$tmp/act" "$bin"
  echo "[act] built in $(( $(date +%s) - started ))s" >&2
fi

if [ "${1:-}" = --build-only ]; then
  echo "$bin"
  exit 0
fi
# Nothing outside this machine is reachable (no version check, no artifact or cache server).
export ACT_DISABLE_VERSION_CHECK=1
exec "$bin" "$@"
