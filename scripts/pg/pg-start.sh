#!/usr/bin/env bash
# Start a private PostgreSQL cluster (15 from apt by default) on loopback, as root (runs the server as user postgres).
# Env: PGVEC_DATA (data dir, default ./.vec-data/pg), PGVEC_PORT (default 54329),
#      PG_BIN (server binaries, default /usr/lib/postgresql/15/bin; or the one pg-pypi-install.sh prints)
# Prints the connection string. Stop with pg-stop.sh.
set -euo pipefail
BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"
DATA="${PGVEC_DATA:-${TMPDIR:-/tmp}/workspace-search-pg}"; PORT="${PGVEC_PORT:-54329}"
id postgres >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin postgres
mkdir -p "$DATA" && DATA="$(cd "$DATA" && pwd)"
chown postgres:postgres "$DATA"; chmod 700 "$DATA"
as_pg() { runuser -u postgres -- "$@"; }
# postgres must be able to traverse the parent folders of $DATA
if ! as_pg test -x "$DATA"; then echo "user postgres cannot reach $DATA (chmod o+x its parents)"; exit 1; fi
if [ ! -f "$DATA/PG_VERSION" ]; then
  as_pg "$BIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
fi
as_pg "$BIN/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w -t 30 \
  -o "-c listen_addresses=127.0.0.1 -c port=$PORT -c unix_socket_directories=$DATA -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start >/dev/null
"$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -qAtc "SELECT 1 FROM pg_database WHERE datname='mastra'" | grep -q 1 \
  || "$BIN/createdb" -h 127.0.0.1 -p "$PORT" -U postgres mastra
"$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d mastra -qAtc "CREATE EXTENSION IF NOT EXISTS vector"
echo "postgresql://postgres@127.0.0.1:$PORT/mastra"
