#!/usr/bin/env bash
# Install Debian packages only when missing; `apt-get update` runs at most once per call,
# and only when something is to be installed (so a second run is instant and offline).
# Usage: scripts/apt-install.sh PKG...
set -euo pipefail
missing=()
for pkg in "$@"; do
  if [ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" != "install ok installed" ]; then
    missing+=("$pkg")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "apt: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
