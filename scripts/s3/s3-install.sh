#!/usr/bin/env bash
# Build the S3-compatible test server (tools/s3-server: s3s-fs with its
# conditional writes serialised; see its main.rs) into a cache kept between
# runs (WS_S3_CACHE, default ~/.cache/workspace-search/s3-server), and print
# the binary's path. A rebuild happens only when its sources change.
set -euo pipefail
cd "$(dirname "$0")/../.."
CACHE="${WS_S3_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/workspace-search/s3-server}"
mkdir -p "$CACHE"
CARGO_TARGET_DIR="$CACHE/target" cargo build --release --locked --quiet \
  --manifest-path tools/s3-server/Cargo.toml >&2
echo "$CACHE/target/release/ws-s3-test-server"
