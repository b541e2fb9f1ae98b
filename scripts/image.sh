#!/usr/bin/env bash
# job-sweeper's image (image/Containerfile): assembles its build context from the bundle and checks
# that it holds exactly what the image should (the Containerfile and dist/cli, nothing of src/,
# node_modules or the tests), then builds it where an engine is at hand.
#
# Usage:
#   scripts/image.sh context DIR        assemble and check the build context in DIR (emptied first)
#   scripts/image.sh build DIR TAG      the same, then build it with docker (or podman) as TAG
# The release workflow runs `context` and builds and pushes DIR with docker/build-push-action.
# JOB_SWEEPER_IMAGE_FROM: the bundled CLI to take instead of dist/cli (the tests use it).
set -euo pipefail
# DIR and JOB_SWEEPER_IMAGE_FROM are taken from where the script is called, then it works from the repository.
[ $# -ge 2 ] && set -- "$1" "$(realpath -m -- "$2")" "${@:3}"
from=$(realpath -m -- "${JOB_SWEEPER_IMAGE_FROM:-$(dirname "$0")/../dist/cli}")
cd "$(dirname "$0")/.."

# What the context holds, one path a line: this is the whole image beside Node. A new file in
# dist/cli fails here until it is added on purpose.
CLI_FILES=(index.js job-sweeper.mjs licenses.txt package.json)

assemble() { # DIR
  local dir=$1
  [ -f "$from/job-sweeper.mjs" ] || { echo "image: $from/job-sweeper.mjs is missing: run npm run bundle" >&2; exit 1; }
  # DIR is emptied: only a directory this script made (or an empty one), never another.
  if [ -e "$dir" ] && [ -n "$(ls -A "$dir")" ] && [ ! -f "$dir/Containerfile" ]; then
    echo "image: $dir exists and is not a build context this script made: name a new or empty directory" >&2
    exit 2
  fi
  rm -rf "$dir"
  mkdir -p "$dir/rootfs/opt/job-sweeper"
  cp image/Containerfile "$dir/Containerfile"
  cp -R "$from/." "$dir/rootfs/opt/job-sweeper/"
  local actual expected
  actual=$( (cd "$dir" && find . \( -type f -o -type l \) | sed 's|^\./||') | LC_ALL=C sort)
  expected=$( (echo Containerfile; printf 'rootfs/opt/job-sweeper/%s\n' "${CLI_FILES[@]}") | LC_ALL=C sort)
  if [ "$actual" != "$expected" ]; then
    echo "image: the build context $dir holds other files than expected (< expected, > found; from $from):" >&2
    diff <(echo "$expected") <(echo "$actual") >&2 || true
    exit 1
  fi
  echo "image: context $dir: Containerfile and ${#CLI_FILES[@]} files of $from"
}

case "${1:-}" in
  context)
    [ $# -eq 2 ] || { echo "usage: scripts/image.sh context DIR" >&2; exit 2; }
    assemble "$2"
    ;;
  build)
    [ $# -eq 3 ] || { echo "usage: scripts/image.sh build DIR TAG" >&2; exit 2; }
    assemble "$2"
    engine=$(command -v docker || command -v podman || true)
    [ -n "$engine" ] || { echo "image: no docker or podman here: the context in $2 is ready, build it elsewhere" >&2; exit 1; }
    "$engine" build --file "$2/Containerfile" --tag "$3" "$2"
    ;;
  *)
    echo "usage: scripts/image.sh context DIR | build DIR TAG" >&2
    exit 2
    ;;
esac
