#!/usr/bin/env bash
# Builds helm from source with the Go toolchain into .engram/cache/helm-<version>/helm, once:
# the machines reach the Go module proxy but no release downloads, and a cached binary is
# reused by every later `make lint`. Usage: install-helm.sh [version] (prints the binary's path).
set -euo pipefail

version="${1:-v4.3.2}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir="$root/.engram/cache/helm-$version"
binary="$dir/helm"

if [ -x "$binary" ]; then
  echo "$binary"
  exit 0
fi
command -v go >/dev/null 2>&1 || {
  echo "[engram] helm: the Go toolchain is needed to build helm $version (go not found)" >&2
  exit 1
}
case "$version" in
  v3.*) module="helm.sh/helm/v3/cmd/helm" ;;
  *) module="helm.sh/helm/v4/cmd/helm" ;;
esac

# Build into a scratch directory and move the binary in last, so an interrupted build never
# leaves a half-written helm that the cache check above would trust.
scratch="$(mktemp -d "$root/.engram/cache/helm-build.XXXXXX" 2>/dev/null || { mkdir -p "$root/.engram/cache" && mktemp -d "$root/.engram/cache/helm-build.XXXXXX"; })"
trap 'rm -rf "$scratch"' EXIT
echo "[engram] helm: building $module@$version with $(go version | cut -d' ' -f3) (a few minutes, once)" >&2
started=$(date +%s)
GOBIN="$scratch" CGO_ENABLED=0 go install "$module@$version" >&2
mkdir -p "$dir"
mv "$scratch/helm" "$binary"
echo "[engram] helm: built in $(( $(date +%s) - started )) s: $binary" >&2
echo "$binary"
