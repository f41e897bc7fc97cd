#!/usr/bin/env bash
# Build (or reuse) deploy/Dockerfile's image without a Docker engine, for
# tests/e2e/test_install_story.py: scripts/e2e/dockerfile_chroot.py interprets the Dockerfile over
# a Debian root made with debootstrap. Both are cached under
# ${EKSMLLINT_IMAGE_CACHE:-~/.cache/eksmllint-image}/ (the root once, the image per source tree),
# so a second run costs nothing. Prints the image folder on success.
#
# A cold build takes about 6 minutes (debootstrap 3, then the steps, mostly pip install); needs root.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="${EKSMLLINT_IMAGE_CACHE:-$HOME/.cache/eksmllint-image}"

# While this runs, $cache/build.pid names it: the test waits for a build in progress (.ci/run
# starts one in the background) instead of building a second time beside it.
mkdir -p "$cache"
echo $$ >"$cache/build.pid"
trap 'rm -f "$cache/build.pid"' EXIT

args=()
[[ -n "${EKSMLLINT_PYTHON_IMAGE:-}" ]] && args+=(--build-arg "PYTHON_IMAGE=$EKSMLLINT_PYTHON_IMAGE")
python3 "$here/dockerfile_chroot.py" build "${args[@]}" "$root/deploy/Dockerfile" "$root"
