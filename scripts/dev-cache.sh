#!/usr/bin/env bash
# The developer cache shared by every clone on a machine: the big, versioned installs that
# take minutes cold (code-server compiles native modules for ~2 min; the agent hosts are
# 1.1 GB), kept outside the clone as Playwright keeps its browsers, so a fresh clone, a
# worktree or CI on the same machine reuses them. Each install lives in a folder named for
# its version or lock hash, is built under a lock, and is complete only once stamped; the
# clone's .cache/NAME is a symlink to it. Nothing here is state: deleting it costs a reinstall.
#
# Sourced by the install scripts:  dev_cache_install LINK DIR_NAME FUNCTION
#   runs `FUNCTION DIR` once (under a lock) unless $METIS_DEV_CACHE/DIR_NAME is complete,
#   then points LINK at it.
# Run:  scripts/dev-cache.sh root      prints the root ($METIS_DEV_CACHE, else
#                                      $XDG_CACHE_HOME/metis-memory-dev, else ~/.cache/...)

DEV_CACHE_ROOT=${METIS_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/metis-memory-dev}
case "$DEV_CACHE_ROOT" in /*) ;; *) DEV_CACHE_ROOT="$PWD/$DEV_CACHE_ROOT" ;; esac  # links must be absolute
# Another version's folder unused this long is removed when a version is installed.
DEV_CACHE_KEEP_DAYS=14

dev_cache_install() {
  local link=$1 name=$2 fn=$3
  local dir="$DEV_CACHE_ROOT/$name" lock fd
  mkdir -p "$DEV_CACHE_ROOT" "$(dirname "$link")"
  if [ ! -f "$dir/.complete" ]; then
    lock="$DEV_CACHE_ROOT/.$name.lock"
    exec {fd}>"$lock"
    # Another clone installing the same version: wait for it (at most 15 min), then reuse.
    flock -w 900 "$fd" || { echo "dev cache: $lock still held after 15 min" >&2; return 1; }
    if [ ! -f "$dir/.complete" ]; then
      rm -rf "$dir" && mkdir -p "$dir"
      "$fn" "$dir"
      touch "$dir/.complete"
      find "$DEV_CACHE_ROOT" -mindepth 1 -maxdepth 1 -type d -name "${name%-*}-*" \
        ! -name "$name" -mtime +"$DEV_CACHE_KEEP_DAYS" -exec rm -rf {} + 2>/dev/null || true
    fi
    exec {fd}>&-
  fi
  touch -c "$dir"  # last used, for the pruning above
  if [ -L "$link" ] && [ "$(readlink "$link")" = "$dir" ]; then return 0; fi
  # An install from before the shared cache, or a link to another version. Replaced by a
  # rename, so two runs linking at once cannot leave a link inside the shared folder.
  if [ -e "$link" ] && [ ! -L "$link" ]; then rm -rf "$link"; fi
  ln -sfn "$dir" "$link.$$"
  mv -Tf "$link.$$" "$link"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  case "${1:-}" in
    root) echo "$DEV_CACHE_ROOT" ;;
    *) echo "usage: scripts/dev-cache.sh root" >&2; exit 2 ;;
  esac
fi
