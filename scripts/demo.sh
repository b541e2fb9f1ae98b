#!/usr/bin/env bash
# npm run demo — the whole story on the embedded local cluster: a chart with a plain migration
# Job, the immutable-Job upgrade failure, job-sweeper's pre phase (waiting on the migration still
# running, its log live), the upgrade that follows, and the post phase giving one succeeded and
# one failed Job their TTLs by outcome. Where the machine runs the cluster's real node, the Jobs
# run there, in real containers (their logs are theirs); elsewhere on kwok's fake node.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
[ -f dist/cli/job-sweeper.mjs ] || npm run -s bundle

bold() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
job_sweeper() { scripts/node24 dist/cli/job-sweeper.mjs "$@"; }

bold "Starting the local cluster (the first run on a machine builds Kubernetes from source: about 8 minutes on 2 cores)"
started_here=false
[ -f .cluster/cluster.json ] || started_here=true
npm run -s cluster:up
# shellcheck source=/dev/null
source .cluster/env
ns=demo-$RANDOM
cleanup() {
  if $started_here; then
    bold "Stopping the local cluster"
    npm run -s cluster:down
  else
    kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

chart=test/chart/migrate-demo
logs=$(mktemp -d)/logs
on_node=()
if [ -n "${JOB_SWEEPER_REAL_NODE:-}" ]; then
  on_node=(--set realNode=true --set image="$JOB_SWEEPER_TEST_IMAGE")
  echo "The Jobs run on the real node $JOB_SWEEPER_REAL_NODE (kubelet, containerd): their logs are real containers' logs."
else
  echo "This machine runs no real node (npm run cluster:up said why): the Jobs run on kwok's fake node, which serves a stand-in log."
fi
kubectl create namespace "$ns" >/dev/null

bold "helm install: release app, migration v1 (it runs for 30s)"
helm install app "$chart" -n "$ns" "${on_node[@]}" --set migrationVersion=1 --set migrationRunFor=30s >/dev/null
kubectl wait --for=jsonpath='{.status.active}'=1 "job/app-migrate" -n "$ns" --timeout=60s >/dev/null
kubectl get jobs -n "$ns"

bold "helm upgrade to migration v2, without job-sweeper: it fails on the immutable Job"
if out=$(helm upgrade app "$chart" -n "$ns" "${on_node[@]}" --set migrationVersion=2 2>&1); then
  echo "unexpected: the upgrade went through" >&2
  exit 1
fi
echo "${out:0:160}…"

bold "job-sweeper pre --release app (before helm upgrade): waits on the running migration, its log live"
job_sweeper pre --release app --namespace "$ns" --harvest-logs all --logs-dir "$logs"

bold "helm upgrade to migration v2 (with a data-seed Job that fails), after job-sweeper"
helm upgrade app "$chart" -n "$ns" "${on_node[@]}" --set migrationVersion=2 --set seedJob.enabled=true --set seedJob.fail=true >/dev/null
echo "Release \"app\" has been upgraded."

bold "job-sweeper post --ttl 1h --failure-grace 24h --wait-for-jobs 1m (after the deployment)"
status=0
job_sweeper post --release app --namespace "$ns" --ttl 1h --failure-grace 24h --wait-for-jobs 1m --logs-dir "$logs" || status=$?
echo "(exit code $status: the seed Job failed, so the post phase fails the step — and keeps the Job for 24h)"

bold "What the cluster now holds"
kubectl get jobs -n "$ns" -o custom-columns='JOB:.metadata.name,SUCCEEDED:.status.succeeded,FAILED:.status.failed,TTL-SECONDS:.spec.ttlSecondsAfterFinished,POLICY:.metadata.annotations.job-sweeper\.io/failure-grace'
kubectl get events -n "$ns" --field-selector reason=JobSwept

bold "Saved logs, in $logs"
find "$logs" -type f | sed "s#^$logs/#  #"
seed_log=$(find "$logs" -path '*app-seed*' -name '*.log' | head -n 1)
if [ -n "$seed_log" ]; then
  bold "The failed seed's saved log (${seed_log#"$logs"/})"
  cat "$seed_log"
fi
