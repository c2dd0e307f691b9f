"""The Claude-format plugin in `integrations/claude-plugin/`: what it installs is what
`init --host claude` writes, and its hook runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from metis_memory.hosts.configs import SETUPS

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "integrations" / "claude-plugin"


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _init_writes(path: str) -> Any:
    edit = next(e for e in SETUPS["claude"].edits("metis-memory") if e.path == path)
    return json.loads(edit.apply(None))


def test_the_manifest_names_the_plugin() -> None:
    manifest = _load(PLUGIN / ".claude-plugin" / "plugin.json")
    assert manifest["name"] == "metis-memory"
    assert set(manifest) <= {"name", "version", "description", "author", "license", "keywords"}


def test_the_plugin_hooks_are_the_ones_init_writes() -> None:
    hooks = _load(PLUGIN / "hooks" / "hooks.json")
    assert hooks["hooks"] == _init_writes(".claude/settings.json")["hooks"]


def test_the_plugin_mcp_server_is_the_one_init_writes() -> None:
    assert _load(PLUGIN / ".mcp.json") == _init_writes(".mcp.json")


def test_the_repository_is_a_marketplace_listing_the_plugin() -> None:
    market = _load(ROOT / ".claude-plugin" / "marketplace.json")
    assert market["owner"]["name"]
    (entry,) = market["plugins"]
    assert entry["name"] == "metis-memory"
    assert (ROOT / entry["source"]).resolve() == PLUGIN
