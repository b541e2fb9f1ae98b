# Pinned versions of the local control plane. The binary cache is keyed by all of them, so a bump
# builds into a fresh directory and never mixes versions. Sourced by build.sh; read by cluster.ts.
K8S_VERSION=v1.34.4
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0
HELM_VERSION=v3.21.4

JOB_SWEEPER_CACHE=${JOB_SWEEPER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/job-sweeper}
JOB_SWEEPER_BIN="$JOB_SWEEPER_CACHE/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION-helm-$HELM_VERSION/bin"
