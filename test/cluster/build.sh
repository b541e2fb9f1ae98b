#!/usr/bin/env bash
# Builds the local control plane's binaries from the Go module proxy into a cache outside the repo.
#
# Idempotent and resumable: every binary is built only when it is missing, so a run that was
# interrupted (or ran in the background) picks up where it stopped. The cache directory is keyed
# by all pinned versions; the local S3 server (versitygw), the same in both sets, has a directory
# keyed by its own version, so the second set finds it built. GOCACHE/GOMODCACHE are Go's own and
# survive between runs.
#
# Usage: test/cluster/build.sh             build what is missing, print the bin directory last
#        test/cluster/build.sh --print     print the bin directory only (builds nothing)
#        test/cluster/build.sh --print-s3  print versitygw's bin directory only (builds nothing)
#        test/cluster/build.sh --print-node  print the real node's bin directory (containerd, runc,
#                                            the registry, pause, forward) only (builds nothing)
#        test/cluster/build.sh --versions  print the selected set's versions as NAME=value lines
# JOB_SWEEPER_VERSIONS selects the set of versions (see versions.sh); the default is the newest.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.sh
source "$here/versions.sh"
# shellcheck source=../../scripts/tools.sh
source "$here/../../scripts/tools.sh"

bin="$JOB_SWEEPER_BIN"
s3bin="$JOB_SWEEPER_S3_BIN"
nodebin="$JOB_SWEEPER_NODE_BIN"
case "${1:-}" in
  --print) echo "$bin"; exit 0 ;;
  --print-s3) echo "$s3bin"; exit 0 ;;
  --print-node) echo "$nodebin"; exit 0 ;;
  --versions)
    printf '%s\n' "JOB_SWEEPER_VERSIONS=$JOB_SWEEPER_VERSIONS" "K8S_VERSION=$K8S_VERSION" \
      "ETCD_VERSION=$ETCD_VERSION" "KWOK_VERSION=$KWOK_VERSION" "HELM_VERSION=$HELM_VERSION" \
      "VERSITYGW_VERSION=$VERSITYGW_VERSION" \
      "CONTAINERD_VERSION=$CONTAINERD_VERSION" "RUNC_VERSION=$RUNC_VERSION" "REGISTRY_VERSION=$REGISTRY_VERSION"
    exit 0
    ;;
esac

all_binaries=(etcd kwok helm kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet)
node_binaries=(containerd containerd-shim-runc-v2 ctr runc registry pause forward)
# pause and forward are this repository's code: rebuilt when their source changes.
node_src() { (cd "$here/node" && cat go.mod ./*/*.go) | sha256sum | cut -c1-16; }
have_all() {
  local b
  for b in "${all_binaries[@]}"; do [ -x "$bin/$b" ] || return 1; done
  # The real node's runtime only where the host can run it (its absence is said below).
  if real_node_host >/dev/null; then
    [ "$(cat "$nodebin/.node-src" 2>/dev/null)" = "$(node_src)" ] || return 1
    for b in "${node_binaries[@]}"; do [ -x "$nodebin/$b" ] || return 1; done
  fi
  [ -x "$s3bin/versitygw" ]
}
# The tests' outside tools (Chromium, unzip), installed like the real node's packages where this
# machine lets a script install them; elsewhere the tests that need them are skipped, and npm test
# names what is missing at its start and its end (test/cluster/prerequisites.ts).
if [ -n "$(missing_packages tests)" ] && can_install; then
  install_groups tests || true
fi
# Nothing to build: no lock, so a set that is ready never waits for another set's build.
if have_all; then
  echo "$bin"
  exit 0
fi

require_go
export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local
mkdir -p "$bin" "$s3bin" "$nodebin" "$JOB_SWEEPER_CACHE/work"

# One build at a time per machine: jest's global setup and `npm run cluster:up` may race.
exec 9>"$JOB_SWEEPER_CACHE/build.lock"
if ! flock -n 9; then
  echo "[cluster-build] another build is running; waiting for it" >&2
  flock 9
fi

started=$(date +%s)
say() { echo "[cluster-build +$(( $(date +%s) - started ))s] $*" >&2; }

missing() {
  local b
  for b in "$@"; do [ -x "$bin/$b" ] || return 0; done
  return 1
}

build_kubernetes() {
  missing kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet || return 0
  local mod="$JOB_SWEEPER_CACHE/work/kubernetes-$K8S_VERSION"
  local minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  local patch=${K8S_VERSION##*.}
  rm -rf "$mod" && mkdir -p "$mod"
  say "kubernetes $K8S_VERSION: reading its go.mod from the module proxy"
  local gomod
  gomod=$(cd "$mod" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
  [ -f "$gomod" ] || { say "could not download k8s.io/kubernetes@$K8S_VERSION's go.mod"; return 1; }
  # The staging modules are required at v0.0.0 and replaced with ./staging/src/...; point each at
  # its published v0.<minor>.<patch> instead. The list is generated: it changes between minors.
  local goline godebug replaces
  goline=$(grep -m1 -E '^go [0-9]' "$gomod")
  godebug=$(awk '/^godebug \($/{b=1} b{print} b&&/^\)/{b=0} /^godebug [^(]/{print}' "$gomod")
  replaces=$(grep -oE '^[[:space:]]*k8s\.io/[a-z0-9-]+ => \./staging/src/k8s\.io/[a-z0-9-]+' "$gomod" \
    | awk -v v="v0.$minor.$patch" '{print "replace " $1 " => " $1 " " v}')
  [ -n "$replaces" ] || { say "no staging replace lines found in $gomod"; return 1; }
  {
    echo "module jobsweeper.local/kubernetes-build"
    echo
    echo "$goline"
    [ -z "$godebug" ] || { echo; echo "$godebug"; }
    echo
    echo "$replaces"
  } >"$mod/go.mod"
  say "kubernetes: $(echo "$replaces" | wc -l) staging modules pinned to v0.$minor.$patch; resolving dependencies"
  local c tools=()
  for c in kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet; do
    tools+=("k8s.io/kubernetes/cmd/$c@$K8S_VERSION") # a version on each: a bare path means @latest
  done
  (cd "$mod" && go get -tool "${tools[@]}")
  local ld="-s -w"
  local p
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  for c in kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet; do
    [ -x "$bin/$c" ] && continue
    say "building $c $K8S_VERSION (the first one compiles most of Kubernetes; minutes on 2 cores)"
    (cd "$mod" && go build -ldflags "$ld" -o "$bin/$c.tmp" "k8s.io/kubernetes/cmd/$c")
    mv "$bin/$c.tmp" "$bin/$c"
    say "built $c"
  done
}

build_etcd() {
  missing etcd || return 0
  # etcd's server module has replace lines too (go install refuses it): build from a wrapper
  # module, kept apart from Kubernetes' because both pull grpc/otel at different versions.
  local mod="$JOB_SWEEPER_CACHE/work/etcd-$ETCD_VERSION"
  mkdir -p "$mod"
  printf 'module jobsweeper.local/etcd-build\n\ngo 1.24\n' >"$mod/go.mod"
  say "etcd $ETCD_VERSION: resolving dependencies"
  (cd "$mod" && go get -tool "go.etcd.io/etcd/server/v3@$ETCD_VERSION")
  say "building etcd $ETCD_VERSION"
  (cd "$mod" && go build -ldflags "-s -w" -o "$bin/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$bin/etcd.tmp" "$bin/etcd"
  say "built etcd"
}

build_plain() { # name module/package version [ldflags] [directory: the set's bin by default]
  local dir=${5:-$bin}
  [ -x "$dir/$1" ] && return 0
  say "building $1 $3"
  local tmp="$JOB_SWEEPER_CACHE/work/gobin-$1"
  mkdir -p "$tmp"
  GOBIN="$tmp" go install -ldflags "-s -w ${4:-}" "$2@$3"
  mv "$tmp/$1" "$dir/$1"
  say "built $1"
}

say "cache: $bin"
build_etcd
build_plain kwok sigs.k8s.io/kwok/cmd/kwok "$KWOK_VERSION"
# Helm's module path carries its major version (helm.sh/helm/v3, helm.sh/helm/v4).
helm_major=${HELM_VERSION#v}; helm_major=${helm_major%%.*}
build_plain helm "helm.sh/helm/v$helm_major/cmd/helm" "$HELM_VERSION" "-X helm.sh/helm/v$helm_major/internal/version.version=$HELM_VERSION"
build_kubernetes
# The local S3 server, for the logs job-sweeper saves (about 1.5 minutes on 2 cores with cold Go caches).
build_plain versitygw github.com/versity/versitygw/cmd/versitygw "$VERSITYGW_VERSION" "-X main.Version=$VERSITYGW_VERSION" "$s3bin"
# The real node runs only as root on a cgroup v1 host; elsewhere (GitHub's hosted runners, a
# contributor's own account) its runtime is not built. Where it can run, the Debian packages it
# needs (gcc for runc's cgo, libseccomp's headers, the CNI plugins, a static busybox) are installed
# when missing (scripts/tools.sh: as root, or with passwordless sudo); without them the node is not
# built, the rest of the build goes on, and the reason is kept in $nodebin/.not-built, which
# test/cluster/node.ts reports as the line that names what the tests that need the node miss.
node_packages() {
  local why missing
  rm -f "$nodebin/.not-built"
  if ! why=$(real_node_host); then
    echo "$why" >"$nodebin/.not-built"
    say "the real node's runtime is not built: $why; the tests that need it are skipped"
    return 1
  fi
  { install_groups node 2>&1 || true; } | while read -r line; do say "$line"; done
  missing=$(missing_packages node)
  [ -z "$missing" ] && return 0
  echo "its runtime was not built: Debian's $missing missing (apt-get install $missing)" >"$nodebin/.not-built"
  say "the real node's runtime is not built: it needs Debian's $missing (apt-get install $missing); the rest of the build goes on, and the tests that need the node are skipped"
  return 1
}

# The real node's runtime, shared by both sets: containerd (CGO off, as its static release builds),
# runc (CGO and libseccomp: Debian's libseccomp-dev, which .ci/run installs), the registry, and the
# two small programs of test/cluster/node (the sandbox image's pause, and forward).
build_node() {
  node_packages || return 0
  build_plain containerd github.com/containerd/containerd/v2/cmd/containerd "$CONTAINERD_VERSION" "-X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" "$nodebin"
  build_plain containerd-shim-runc-v2 github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 "$CONTAINERD_VERSION" "-X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" "$nodebin"
  build_plain ctr github.com/containerd/containerd/v2/cmd/ctr "$CONTAINERD_VERSION" "" "$nodebin"
  if [ ! -x "$nodebin/runc" ]; then
    CGO_ENABLED=1 GOFLAGS="$GOFLAGS -tags=seccomp" build_plain runc github.com/opencontainers/runc "$RUNC_VERSION" "-X main.version=${RUNC_VERSION#v}" "$nodebin"
  fi
  build_plain registry github.com/distribution/distribution/v3/cmd/registry "$REGISTRY_VERSION" "" "$nodebin"
  local p src
  src=$(node_src)
  [ "$(cat "$nodebin/.node-src" 2>/dev/null)" = "$src" ] || rm -f "$nodebin/pause" "$nodebin/forward"
  for p in pause forward; do
    [ -x "$nodebin/$p" ] && continue
    say "building $p (test/cluster/node)"
    (cd "$here/node" && go build -ldflags "-s -w" -o "$nodebin/$p.tmp" "./$p")
    mv "$nodebin/$p.tmp" "$nodebin/$p"
  done
  echo "$src" >"$nodebin/.node-src"
}
build_node
say "all binaries ready ($(du -shc "$bin" "$s3bin" "$nodebin" | tail -n 1 | cut -f1))"
echo "$bin"
