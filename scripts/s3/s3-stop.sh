#!/usr/bin/env bash
# Stop the S3 test server started by s3-start.sh and remove its folder.
set -euo pipefail
ROOT="${WS_S3_ROOT:-${TMPDIR:-/tmp}/workspace-search-s3}"
[ -f "$ROOT/pid" ] && kill "$(cat "$ROOT/pid")" 2>/dev/null || true
rm -rf "$ROOT"
