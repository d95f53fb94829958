#!/usr/bin/env bash
# The build stamps of internal/version: VERSION, COMMIT and DATE come
# from the environment when set (the Dockerfile passes them, having no
# .git), else from git: the tag (git describe; "dev" when no tag reaches
# HEAD), the short commit and its date ("unknown" without git).
#
# Sourced (scripts/release.sh), it sets VERSION, COMMIT, DATE and
# STAMP_LDFLAGS, the linker flags that stamp them; run (`make build`), it
# prints STAMP_LDFLAGS.
git_or() { git -C "$(dirname "${BASH_SOURCE[0]}")/.." "$@" 2>/dev/null || true; }
VERSION=${VERSION:-$(git_or describe --tags --dirty)}
COMMIT=${COMMIT:-$(git_or rev-parse --short=12 HEAD)}
DATE=${DATE:-$(git_or log -1 --format=%cI HEAD)}
VERSION=${VERSION:-dev}
COMMIT=${COMMIT:-unknown}
DATE=${DATE:-unknown}
stamp_pkg=github.com/benthos-paimon/benthos-paimon/internal/version
STAMP_LDFLAGS="-X $stamp_pkg.Version=$VERSION -X $stamp_pkg.Commit=$COMMIT -X $stamp_pkg.Date=$DATE"
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  echo "$STAMP_LDFLAGS"
fi
