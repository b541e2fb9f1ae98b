#!/usr/bin/env bash
# The outside tools the build and the tests use, one rule for all: installed where this machine
# lets a script install them (root, or passwordless sudo, with apt-get), otherwise named with the
# command that gets them, and the tests that need them are skipped (test/cluster/prerequisites.ts
# says which, at the start and the end of npm test). Sourced by .ci/run, test/cluster/build.sh and
# the scripts that build Go tools; run by hand it installs what is missing:
#
# Usage: scripts/tools.sh install [tests|node]...   installs the Debian packages of each group
#                                                   (default: both) where it can; exit 1 if some
#                                                   are still missing
#        scripts/tools.sh missing [tests|node]...   prints the missing packages (nothing: all there)
#        scripts/tools.sh go                        checks Go (>= 1.26, GOTOOLCHAIN=local)
#        scripts/tools.sh real-node-host            exit 0 where the host can run the real node,
#                                                   else prints why not

# The oldest Go that builds every pinned module (Kubernetes 1.37's go.mod). GOTOOLCHAIN=local:
# an older go never downloads a newer one, it fails; this says so first, in words.
JOB_SWEEPER_GO_MIN=1.26

# Puts Go on PATH (its default tarball location too) and checks its version; exit 1 with what to do.
require_go() {
  command -v go >/dev/null || export PATH="/usr/local/go/bin:$PATH"
  if ! command -v go >/dev/null; then
    echo "job-sweeper's build needs Go >= $JOB_SWEEPER_GO_MIN on PATH (or in /usr/local/go/bin): none found; install Go $JOB_SWEEPER_GO_MIN or newer" >&2
    exit 1
  fi
  local found
  found=$(GOTOOLCHAIN=local go env GOVERSION 2>/dev/null || true)
  found=${found#go}
  if ! go_at_least "$found" "$JOB_SWEEPER_GO_MIN"; then
    echo "job-sweeper's build needs Go >= $JOB_SWEEPER_GO_MIN, and $(command -v go) is go${found:-?} (GOTOOLCHAIN=local: no newer toolchain is downloaded); install Go $JOB_SWEEPER_GO_MIN or newer first on PATH" >&2
    exit 1
  fi
}

# go_at_least 1.26.8 1.26 → true. Compares major and minor only (pre-releases like 1.27rc1 count as 1.27).
go_at_least() {
  local have=$1 want=$2 hmaj hmin wmaj wmin
  hmaj=${have%%.*}
  hmin=${have#*.}; hmin=${hmin%%[!0-9]*}
  wmaj=${want%%.*}
  wmin=${want#*.}; wmin=${wmin%%[!0-9]*}
  [[ $hmaj =~ ^[0-9]+$ && $hmin =~ ^[0-9]+$ ]] || return 1
  ((hmaj > wmaj || (hmaj == wmaj && hmin >= wmin)))
}

# Exit 0 where the real node can run (root, and a cgroup v1 memory hierarchy: the node is set up
# for cgroup v1 hosts); otherwise prints why not. GitHub's hosted runners are neither.
real_node_host() {
  local why=''
  [ "$(id -u)" = 0 ] || why='root'
  [ -f /sys/fs/cgroup/memory/cgroup.procs ] || why="${why:+$why and }a cgroup v1 host (this one has no /sys/fs/cgroup/memory: cgroup v2)"
  [ -z "$why" ] && return 0
  echo "the real node needs $why"
  return 1
}

# A browser the summary test can drive: $CHROMIUM, or one of the usual names.
have_chromium() {
  local c
  for c in "${CHROMIUM:-}" /usr/bin/chromium /usr/bin/chromium-browser /usr/bin/google-chrome; do
    [ -n "$c" ] && [ -x "$c" ] && return 0
  done
  return 1
}

# The Debian packages missing from a group: `tests` (headless Chromium for the job summary's browser
# test, unzip for the artifacts act's server holds), `node` (the real node: a C compiler for runc's
# cgo, libseccomp's headers, the CNI plugins, a static busybox for its shell image).
missing_packages() {
  local group missing=()
  for group in "$@"; do
    case "$group" in
      tests)
        have_chromium || missing+=(chromium)
        { command -v zipinfo && command -v unzip; } >/dev/null || missing+=(unzip)
        ;;
      node)
        command -v gcc >/dev/null || missing+=(gcc libc6-dev)
        [ -f /usr/include/seccomp.h ] || missing+=(libseccomp-dev)
        [ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
        { [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; } || missing+=(busybox-static)
        ;;
      *)
        echo "scripts/tools.sh: unknown group '$group': expected tests or node" >&2
        return 2
        ;;
    esac
  done
  echo "${missing[*]}"
}

# Exit 0 where a script may install Debian packages: apt-get, and root or passwordless sudo.
can_install() {
  command -v apt-get >/dev/null || return 1
  [ "$(id -u)" = 0 ] || { command -v sudo >/dev/null && sudo -n true 2>/dev/null; }
}

# Installs Debian packages with apt-get: directly as root, with sudo where it needs no password
# (GitHub's hosted runners), otherwise not at all (returns 1 and says the command that would).
# Calls nothing when no package is named.
install_packages() {
  [ $# -eq 0 ] && return 0
  local as=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
      as=(sudo -n)
    else
      echo "not installed (not root, no passwordless sudo): $*; get them with: sudo apt-get install $*" >&2
      return 1
    fi
  fi
  if ! command -v apt-get >/dev/null; then
    echo "not installed (no apt-get here): $*; install their equivalents with this system's package manager" >&2
    return 1
  fi
  echo "installing Debian's $*${as:+ (with sudo)}" >&2
  "${as[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  "${as[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# Installs what each group misses; exit 1 (and the missing packages named) if some still miss.
install_groups() {
  local missing
  missing=$(missing_packages "$@") || return 2
  [ -z "$missing" ] && return 0
  # shellcheck disable=SC2086
  install_packages $missing || true
  missing=$(missing_packages "$@")
  [ -z "$missing" ] && return 0
  echo "still missing: $missing" >&2
  return 1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  command=${1:-}
  shift || true
  [ $# -gt 0 ] || set -- tests node
  case "$command" in
    install) install_groups "$@" ;;
    missing) missing_packages "$@" ;;
    go) require_go && echo "go$(go env GOVERSION | sed 's/^go//') at $(command -v go)" ;;
    real-node-host) real_node_host ;;
    *)
      echo "usage: scripts/tools.sh install|missing [tests|node]... | go | real-node-host" >&2
      exit 2
      ;;
  esac
fi
