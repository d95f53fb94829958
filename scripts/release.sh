#!/usr/bin/env bash
# Release build: static benthos-paimon binaries (CGO_ENABLED=0) stamped
# with the version, commit and commit date, plus SHA256SUMS.
#
#   scripts/release.sh [-o DIR] [OS/ARCH ...]
#
# Default platforms: linux/amd64 linux/arm64 darwin/amd64 darwin/arm64.
# Default DIR: dist. Binaries are DIR/benthos-paimon-OS-ARCH.
# VERSION, COMMIT and DATE come from the environment when set (the
# Dockerfile passes them, having no .git), else from git (scripts/stamp.sh,
# which `make build` stamps its binary with too).
#
# `make release` and the Dockerfile's build stage both run this script,
# so a container and a downloaded binary are built the same way
# (TestDockerfileBuildsWithReleaseScript checks the Dockerfile).
set -euo pipefail

out=dist
if [ "${1:-}" = "-o" ]; then
  out=$2
  shift 2
fi
platforms=("$@")
if [ ${#platforms[@]} -eq 0 ]; then
  platforms=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64)
fi

cd "$(dirname "$0")/.."
# shellcheck source=scripts/stamp.sh
. scripts/stamp.sh
ldflags="-s -w $STAMP_LDFLAGS"

mkdir -p "$out"
names=()
for p in "${platforms[@]}"; do
  os=${p%/*}
  arch=${p#*/}
  name=benthos-paimon-$os-$arch
  echo "== $name ($VERSION, commit $COMMIT)" >&2
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$out/$name" .
  names+=("$name")
done

if command -v sha256sum >/dev/null; then
  sum=(sha256sum)
else
  sum=(shasum -a 256) # macOS
fi
(cd "$out" && "${sum[@]}" "${names[@]}" > SHA256SUMS)
echo "== $out/SHA256SUMS" >&2
