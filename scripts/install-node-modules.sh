#!/usr/bin/env bash
# The project's npm packages in ./node_modules: `npm ci` once per lock file into the shared
# developer cache (dev-cache.sh), then hard links from there into the clone. A fresh clone's
# `npm ci` took 25-30 CPU-s (16,000 files, and keytar compiled by node-gyp); the links take
# about a second. Keyed on what `npm ci` reads: the lock file and package.json's dependency
# fields (so a dependency added without its lock entry still fails as `npm ci` fails), and
# the Node.js and machine that built the native modules.
# Usage: scripts/install-node-modules.sh   (from the project root)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/dev-cache.sh
source "$HERE/dev-cache.sh"

KEY=$( {
  cat package-lock.json
  node -p 'const p = require("./package.json"); JSON.stringify([p.dependencies, p.devDependencies, p.optionalDependencies, p.overrides, p.engines])'
  node --version
  uname -m
} | sha256sum | cut -c1-16)

install_node_modules() {
  cp package.json package-lock.json "$1/"
  (cd "$1" && npm --no-audit --no-fund --loglevel=error ci)
}
dev_cache_install .cache/node-modules "node-modules-$KEY" install_node_modules

# Linked aside, then renamed into place: an interrupted run leaves no half tree behind.
# Tools only read these files (npm itself replaces a package's folder rather than write into
# it); on another filesystem, where links cannot reach, the files are copied.
rm -rf node_modules.partial
cp -al .cache/node-modules/node_modules node_modules.partial 2>/dev/null \
  || { rm -rf node_modules.partial && cp -a .cache/node-modules/node_modules node_modules.partial; }
rm -rf node_modules
mv node_modules.partial node_modules
