#!/usr/bin/env bash
# Install PostgreSQL 15 (Debian bookworm) + pgvector, non-interactively, as root.
# Debian bookworm ships no pgvector package, so this builds pgvector from Debian's own
# source package (trixie's pgvector 0.8.0-1) against postgresql-server-dev-15.
# Uses a private apt config for the deb-src line, so /etc/apt is not touched.
# Env: WORK (scratch folder, default ./.vec-data/pg-build); FORCE=1 rebuilds even if installed;
#      DEBIAN_MIRROR (default: the first URIs: of the system's debian.sources)
set -euo pipefail
WORK="${WORK:-${TMPDIR:-/tmp}/workspace-search-pg-build}"
mkdir -p "$WORK" && WORK="$(cd "$WORK" && pwd)"
export DEBIAN_FRONTEND=noninteractive
PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config

if [ -z "${FORCE:-}" ] && [ -f /usr/share/postgresql/15/extension/vector.control ] && [ -x "$PG_CONFIG" ]; then
  echo "pgvector already installed for PostgreSQL 15"; exit 0
fi
apt-get update -q
apt-get install -y -q --no-install-recommends postgresql-15 postgresql-server-dev-15 make gcc

# private apt config: deb-src for the suite that has pgvector
mkdir -p "$WORK/apt/lists/partial" "$WORK/apt/cache/archives/partial"
# same Debian mirror as the system's own apt sources (override with DEBIAN_MIRROR)
MIRROR="${DEBIAN_MIRROR:-$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)}"
[ -n "$MIRROR" ] || MIRROR="$(awk '$1=="deb"{print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)"
[ -n "$MIRROR" ] || { echo "set DEBIAN_MIRROR to the Debian archive URI" >&2; exit 1; }
echo "deb-src $MIRROR trixie main" > "$WORK/apt/sources.list"
APTOPT=(-o "Dir::Etc::sourcelist=$WORK/apt/sources.list" -o Dir::Etc::sourceparts=/nonexistent
        -o "Dir::State::Lists=$WORK/apt/lists" -o "Dir::Cache=$WORK/apt/cache")
apt-get "${APTOPT[@]}" update -q
(cd "$WORK" && apt-get "${APTOPT[@]}" source --download-only pgvector)
tarball=$(ls "$WORK"/pgvector_*.orig.tar.gz | head -1)
rm -rf "$WORK/src" && mkdir -p "$WORK/src" && tar xzf "$tarball" -C "$WORK/src" --strip-components=1
# OPTFLAGS="" avoids -march=native; with_llvm=no skips the JIT bitcode (no clang needed)
make -C "$WORK/src" -j2 PG_CONFIG="$PG_CONFIG" OPTFLAGS="" with_llvm=no
make -C "$WORK/src" install PG_CONFIG="$PG_CONFIG" with_llvm=no
echo "pgvector installed: $(grep default_version /usr/share/postgresql/15/extension/vector.control)"
