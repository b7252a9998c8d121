#!/usr/bin/env bash
# Start the S3 test server built by s3-install.sh on 127.0.0.1 over a new
# folder, on a free port; print its endpoint. Env: WS_S3_SERVER_BIN (the
# binary), WS_S3_ROOT (its folder). Stop with s3-stop.sh.
set -euo pipefail
ROOT="${WS_S3_ROOT:-${TMPDIR:-/tmp}/workspace-search-s3}"
# A server left by a run that was killed goes first.
[ -f "$ROOT/pid" ] && kill "$(cat "$ROOT/pid")" 2>/dev/null || true
rm -rf "$ROOT" && mkdir -p "$ROOT/data"
setsid "$WS_S3_SERVER_BIN" "$ROOT/data" 0 > "$ROOT/server.out" 2> "$ROOT/server.log" < /dev/null &
echo $! > "$ROOT/pid"
for _ in $(seq 1 100); do
  grep -q '^listening' "$ROOT/server.out" 2>/dev/null && break
  sleep 0.1
done
grep -q '^listening' "$ROOT/server.out" || { echo "the S3 test server did not start: $(cat "$ROOT/server.log")" >&2; exit 1; }
echo "http://127.0.0.1:$(awk '/^listening/ { print $2 }' "$ROOT/server.out")"
