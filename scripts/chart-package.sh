#!/usr/bin/env bash
# Packages charts/job-sweeper for a release: a copy of it with the release's version (version and
# appVersion) and the digest of the image that release pushed written in, linted, its CronJob
# checked to run the image by that digest, then `helm package`d. The repository's chart is not
# changed. The release workflow pushes the package with helm push.
#
# Usage: scripts/chart-package.sh VERSION DIGEST OUTDIR   (prints the package's path)
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: scripts/chart-package.sh VERSION DIGEST OUTDIR" >&2; exit 2; }
version=$1 digest=$2
out=$(realpath -m -- "$3")
cd "$(dirname "$0")/.."
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || { echo "chart: version '$version': expected a semantic version like 0.2.0 or 0.2.0-rc.1" >&2; exit 2; }
[[ $digest =~ ^sha256:[0-9a-f]{64}$ ]] || { echo "chart: digest '$digest': expected sha256:<64 hex digits>" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chart="$work/job-sweeper"
cp -R charts/job-sweeper "$chart"
sed -i -e "s/^version: .*/version: $version/" -e "s/^appVersion: .*/appVersion: '$version'/" "$chart/Chart.yaml"
sed -i -e "s/^  digest: ''\$/  digest: '$digest'/" "$chart/values.yaml"
grep -qx "version: $version" "$chart/Chart.yaml" && grep -qx "appVersion: '$version'" "$chart/Chart.yaml" ||
  { echo "chart: could not write version $version into Chart.yaml" >&2; exit 1; }
grep -qx "  digest: '$digest'" "$chart/values.yaml" || { echo "chart: could not write the digest into values.yaml (its image.digest line changed?)" >&2; exit 1; }

# (helm lint takes a template's fail for a note: lint it with a scope, so that it renders.)
helm lint --strict "$chart" --set 'namespaces={default}' >&2
# helm template knows no cluster (Helm 3 assumes Kubernetes 1.20): the chart's lowest version; and
# the chart renders nothing without namespaces (or allNamespaces): one namespace.
image=$(helm template job-sweeper "$chart" --kube-version 1.34.0 --set 'namespaces={default}' | sed -n 's/^ *image: //p')
[ "$image" = "\"ghcr.io/job-sweeper/job-sweeper@$digest\"" ] || { echo "chart: the CronJob runs $image, not the image by digest $digest" >&2; exit 1; }
mkdir -p "$out"
helm package "$chart" --destination "$out" >&2
echo "$out/job-sweeper-$version.tgz"
