#!/usr/bin/env bash
# npm run demo — the whole story on the embedded local cluster: a chart with a plain migration
# Job, the immutable-Job upgrade failure, job-sweeper's pre phase, and the upgrade that follows.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
[ -f dist/index.js ] || npm run -s bundle

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "Starting the local cluster (the first run builds Kubernetes from source: many minutes)"
npm run -s cluster:up
# shellcheck source=/dev/null
source .cluster/env
trap 'say "Stopping the local cluster"; npm run -s cluster:down' EXIT

ns=demo-$RANDOM
chart=test/chart/migrate-demo
kubectl create namespace "$ns" >/dev/null

say "helm install: release app with migration v1"
helm install app "$chart" -n "$ns" --set migrationVersion=1 --wait-for-jobs --wait >/dev/null
kubectl get jobs -n "$ns"

say "helm upgrade to migration v2 without job-sweeper: fails on the immutable Job"
if helm upgrade app "$chart" -n "$ns" --set migrationVersion=2 2>&1 | cut -c1-200; then
  echo "unexpected: the upgrade went through" >&2
  exit 1
fi

say "job-sweeper pre phase (release: app)"
work=$(mktemp -d)
: >"$work/output"
: >"$work/summary"
: >"$work/state"
env INPUT_RELEASE=app INPUT_NAMESPACE="$ns" 'INPUT_HARVEST-LOGS=all' "INPUT_LOGS-DIR=$work/logs" \
  GITHUB_OUTPUT="$work/output" GITHUB_STEP_SUMMARY="$work/summary" GITHUB_STATE="$work/state" RUNNER_TEMP="$work" \
  scripts/node24 dist/index.js

say "helm upgrade to migration v2 after job-sweeper"
helm upgrade app "$chart" -n "$ns" --set migrationVersion=2 --wait-for-jobs --wait >/dev/null
kubectl get jobs -n "$ns"

say "The job summary job-sweeper wrote"
cat "$work/summary"
say "Saved logs (in $work/logs)"
find "$work/logs" -type f
kubectl get events -n "$ns" --field-selector reason=JobSwept
