#!/usr/bin/env bash
# Stop the private cluster started by pg-start.sh (pg_ctl stop signals the postmaster by its PID file).
set -euo pipefail
DATA="${PGVEC_DATA:-${TMPDIR:-/tmp}/workspace-search-pg}"; DATA="$(cd "$DATA" && pwd)"
runuser -u postgres -- "${PG_BIN:-/usr/lib/postgresql/15/bin}/pg_ctl" -D "$DATA" -m fast -w stop
[ "${1:-}" = "--wipe" ] && rm -rf "$DATA" || true
