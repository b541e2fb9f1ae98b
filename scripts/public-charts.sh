#!/usr/bin/env bash
# The public charts test/public-charts*.test.ts upgrades, downloaded with the go command as the Go
# modules they ship in (pinned versions), into a cache shared per machine like the cluster's
# binaries. No chart source enters this repository. Offline once cached: a pinned version in the
# module cache is read without the network, and a prepared chart directory is used as it is.
#
# Only charts inside real Go modules (a go.mod of their own) are taken: the Go module proxy is for
# Go modules, not a way to bring in repositories that are not Go modules (chart monorepos).
#
# Usage: scripts/public-charts.sh   downloads what is missing, prints NAME=DIRECTORY per chart
set -euo pipefail

# Go >= 1.26 on PATH (or /usr/local/go/bin), or a message that says what is found and what is needed.
# shellcheck source=tools.sh
source "$(dirname "${BASH_SOURCE[0]}")/tools.sh"
require_go
cache=${JOB_SWEEPER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/job-sweeper}/public-charts
# The module cache is Go's own, under ours; -modcacherw so that `rm -rf` of the cache works.
export GOMODCACHE="$cache/mod" GOFLAGS=-modcacherw GOTOOLCHAIN=local GO111MODULE=on

# NAME MODULE@VERSION DIRECTORY-IN-MODULE
charts=(
  # Loki's chart 6.55.0: a StatefulSet whose singleBinary.persistence.size shapes its volumeClaimTemplates.
  "loki-6.55.0 github.com/grafana/loki/v3@v3.7.8 production/helm/loki"
  # metrics-server's chart 3.12.2 (app 0.7.2) and 3.13.1 (app 0.8.1), one release apart.
  "metrics-server-3.12.2 sigs.k8s.io/metrics-server@v0.8.0 charts/metrics-server"
  "metrics-server-3.13.1 sigs.k8s.io/metrics-server@v0.9.0 charts/metrics-server"
  # Kyverno's chart 3.3.6 (app v1.13.4): four Deployments whose selectors carry the chart's full name.
  "kyverno-3.3.6 github.com/kyverno/kyverno@v1.13.4 charts/kyverno"
  # Kyverno's chart 2.7.2 (app v1.9.2) and 3.0.0 (app v1.10.0): the cleanup controller's Deployment
  # keeps its name while its selector labels change between the two.
  "kyverno-2.7.2 github.com/kyverno/kyverno@v1.9.2 charts/kyverno"
  "kyverno-3.0.0 github.com/kyverno/kyverno@v1.10.0 charts/kyverno"
)

# Loki's chart requires three charts it takes from chart repositories (minio, grafana-agent-operator,
# rollout-operator), each behind a condition the tests leave off. Helm refuses a chart whose
# dependencies are missing from charts/ even when disabled, so the prepared copy gets an empty
# chart of each name and version: never rendered, since its condition is false.
loki_stubs=("minio 5.4.0" "grafana-agent-operator 0.5.2" "rollout-operator 0.43.0")

mkdir -p "$cache/charts"
work=$(mktemp -d "$cache/work.XXXXXX")
trap 'rm -rf "$work"' EXIT

for entry in "${charts[@]}"; do
  read -r name module dir <<<"$entry"
  prepared="$cache/charts/$name"
  if [ ! -f "$prepared/Chart.yaml" ]; then
    echo "[public-charts] $name: go mod download $module" >&2
    src=$(cd "$work" && go mod download -json "$module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
    [ -f "$src/$dir/Chart.yaml" ] || { echo "[public-charts] $module has no chart at $dir" >&2; exit 1; }
    # A copy (the module cache stays as downloaded), renamed into place whole.
    rm -rf "$work/$name"
    cp -r "$src/$dir" "$work/$name"
    chmod -R u+w "$work/$name"
    if [ "${name%%-*}" = loki ]; then
      for stub in "${loki_stubs[@]}"; do
        read -r dep version <<<"$stub"
        mkdir -p "$work/$name/charts/$dep"
        printf 'apiVersion: v2\nname: %s\nversion: %s\ndescription: empty stand-in (its condition is off in the tests)\n' "$dep" "$version" >"$work/$name/charts/$dep/Chart.yaml"
      done
    fi
    rm -rf "$prepared"
    mv "$work/$name" "$prepared"
  fi
  echo "$name=$prepared"
done
