# Pinned versions of the local control plane, as named sets. Pick one with JOB_SWEEPER_VERSIONS:
#
#   newest (default)  the newest Kubernetes with Helm 4: what users deploying today run
#   oldest            the oldest Kubernetes we support with Helm 3
#
# The binary cache is keyed by all of a set's versions, so a bump (or another set) builds into a
# fresh directory and never mixes versions. The local S3 server is the same in both sets: it is
# built once into a directory keyed by its own version. Sourced by build.sh; cluster.ts reads the
# selected set through `build.sh --versions`.
JOB_SWEEPER_VERSIONS=${JOB_SWEEPER_VERSIONS:-newest}
case "$JOB_SWEEPER_VERSIONS" in
  newest)
    K8S_VERSION=v1.37.2
    ETCD_VERSION=v3.6.16
    KWOK_VERSION=v0.8.0
    HELM_VERSION=v4.3.2
    ;;
  oldest)
    K8S_VERSION=v1.34.4
    ETCD_VERSION=v3.6.16
    KWOK_VERSION=v0.8.0
    HELM_VERSION=v3.21.4
    ;;
  *)
    echo "Invalid JOB_SWEEPER_VERSIONS '$JOB_SWEEPER_VERSIONS': expected newest or oldest" >&2
    return 1 2>/dev/null || exit 1
    ;;
esac

# versitygw (Apache-2.0), an S3 server over a directory (its posix backend): both sets.
VERSITYGW_VERSION=v1.8.0

# The real node's runtime (issue 25), the same in both sets: containerd and runc (containerd's
# RELEASES.md pairs 2.3+/2.4+ with Kubernetes 1.37; 1.34 runs on it too), and the CNCF distribution
# registry the node pulls its images from. The kubelet is each set's own, from its Kubernetes module.
CONTAINERD_VERSION=v2.4.2
RUNC_VERSION=v1.5.3
REGISTRY_VERSION=v3.0.0

JOB_SWEEPER_CACHE=${JOB_SWEEPER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/job-sweeper}
JOB_SWEEPER_BIN="$JOB_SWEEPER_CACHE/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION-helm-$HELM_VERSION/bin"
JOB_SWEEPER_S3_BIN="$JOB_SWEEPER_CACHE/versitygw-$VERSITYGW_VERSION/bin"
JOB_SWEEPER_NODE_BIN="$JOB_SWEEPER_CACHE/node-containerd-$CONTAINERD_VERSION-runc-$RUNC_VERSION-registry-$REGISTRY_VERSION/bin"
