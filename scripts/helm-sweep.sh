#!/bin/sh
# The command of the helm sweep plugin (plugin.yaml at the repository's root; docs/helm-plugin.md):
# runs its entry, dist/plugin/helm-sweep.mjs, on the Node.js on PATH. Helm sets HELM_PLUGIN_DIR to the
# plugin's directory (this checkout, for `helm plugin install <dir>`).
dir=${HELM_PLUGIN_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
if ! command -v node >/dev/null 2>&1; then
  echo "helm sweep: needs Node.js 22.19 or newer on PATH (node); none was found" >&2
  exit 2
fi
exec node "$dir/dist/plugin/helm-sweep.mjs" "$@"
