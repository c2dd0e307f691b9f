"""A real Neovim (headless, built-in LSP client) attached to `metis-memory lsp` with the
configuration docs/editors.md gives, reading back what Neovim holds: the same diagnostics
(codes and ranges) and code actions as a client with VS Code's capabilities gets."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import client_capabilities

from support.lsp_session import MetisClient
from support.lsp_values import file_uri
from support.memory_files import write_memory

ROOT = Path(__file__).resolve().parents[3]
CONFIG = ROOT / "examples" / "neovim" / "metis.lua"
HERE = Path(__file__).resolve().parent
SERVER = [sys.executable, "-m", "metis_memory", "lsp"]
NVIM = "/usr/bin/nvim" if Path("/usr/bin/nvim").exists() else shutil.which("nvim")
"""Debian's Neovim (0.7 on bookworm): the oldest client the docs/editors.md config supports."""

# Over the soft cap, with CJK and emoji before the boundary, a duplicate and a secret.
MEMORY = (
    "# Workspace memory\n\n"
    "- 构建: make test runs ruff, mypy and pytest 🧪\n"
    "- Deploys go through the staging branch\n"
    "- deploys go through the staging branch\n"
    "- CI token: ghp_"
    + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    + "\n"
    + "".join(f"- fact {i}: the café uses ünïcode — 日本語 ✓\n" for i in range(45))
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    write_memory(tmp_path, "MEMORY.md", MEMORY)
    return tmp_path


def _key(code: Any, rng: dict[str, Any]) -> tuple[Any, ...]:
    return (
        code,
        rng["start"]["line"],
        rng["start"]["character"],
        rng["end"]["line"],
        rng["end"]["character"],
    )


async def _vscode_view(client: MetisClient, workspace: Path) -> tuple[list[Any], list[str]]:
    """Diagnostics and code-action titles as a VS Code-capable client sees them, less
    `window/showDocument`, which Neovim 0.7 does not support (so it is not offered "Show
    consolidation proposal"; tests/lsp/test_every_client.py covers that difference)."""
    path = workspace / ".metis" / "MEMORY.md"
    capabilities = client_capabilities("visual-studio-code")
    assert capabilities.window is not None
    capabilities.window.show_document = None
    await client.start_session([workspace], capabilities=capabilities)
    client.open(path)
    await client.wait_until(lambda: "secret" in client.codes(path), "the secret diagnostic")
    diagnostics = client.diagnostics[file_uri(path)]
    actions = await client.actions(path, (0, 0), (MEMORY.count("\n"), 0))
    titles = [a.title for a in actions or []]
    raw = [json.loads(json.dumps(client.protocol._converter.unstructure(d))) for d in diagnostics]
    return raw, titles


def _neovim_view(
    workspace: Path,
    expected: int,
    out: Path,
    file: Path | None = None,
    probe: str = "probe.lua",
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    assert NVIM is not None
    env = {
        **os.environ,
        **(env or {}),
        "METIS_OUT": str(out),
        "METIS_EXPECT_DIAGNOSTICS": str(expected),
    }
    cmd_lua = "lua vim.g.metis_memory_cmd = " + _lua_list(SERVER)
    proc = subprocess.run(
        [
            NVIM,
            "--headless",
            "--clean",
            "--cmd",
            cmd_lua,
            "--cmd",
            f"luafile {HERE / 'capture.lua'}",
            "-u",
            str(CONFIG),
            "-c",
            f"luafile {HERE / probe}",
            str(file or workspace / ".metis" / "MEMORY.md"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert out.exists(), f"Neovim wrote no result (exit {proc.returncode}): {proc.stderr[-2000:]}"
    result: dict[str, Any] = json.loads(out.read_text())
    assert result["error"] is None, result["error"]
    return result


def _lua_list(items: list[str]) -> str:
    return "{" + ", ".join(json.dumps(i) for i in items) + "}"


@pytest.mark.skipif(
    NVIM is None,
    reason="nvim not found: `make test` installs Debian's neovim; install it to run this test",
)
async def test_neovim_sees_the_same_diagnostics_and_code_actions(
    client: MetisClient, workspace: Path, tmp_path: Path
) -> None:
    raw, titles = await _vscode_view(client, workspace)
    codes = sorted(d["code"] for d in raw)
    assert {"over-soft-cap", "duplicate-entry", "secret"} <= set(codes)

    nvim = _neovim_view(workspace, len(raw), tmp_path / "nvim.json")

    assert sorted(_key(d["code"], d["range"]) for d in nvim["raw"]) == sorted(
        _key(d["code"], d["range"]) for d in raw
    )
    assert sorted(d["code"] for d in nvim["diagnostics"]) == codes
    lines = MEMORY.split("\n")
    for d in nvim["diagnostics"]:
        # Neovim holds byte columns; they must point at the same characters.
        match = next(
            r for r in raw if r["code"] == d["code"] and r["range"]["start"]["line"] == d["lnum"]
        )
        line = lines[d["lnum"]]
        prefix_units = match["range"]["start"]["character"]
        prefix = _utf16_prefix(line, prefix_units)
        assert d["col"] == len(prefix.encode("utf-8"))
    assert sorted(nvim["actions"]) == sorted(titles)
    assert titles, "the server offered no code action"


def _utf16_prefix(line: str, units: int) -> str:
    count = 0
    for i, ch in enumerate(line):
        if count >= units:
            return line[:i]
        count += 2 if ord(ch) > 0xFFFF else 1
    return line


@pytest.mark.skipif(NVIM is None, reason="Neovim is installed by `make test` (python-test-deps)")
def test_neovim_shows_where_codex_stops_reading_a_nested_agents_md(tmp_path: Path) -> None:
    """The docs/editors.md config attaches to AGENTS.md too, rooted at the git root, so the chain
    above the file counts: the deep file is cut where the shared 32 KiB run out."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "AGENTS.md").write_text("r" * 30_000)
    deep = repo / "svc" / "AGENTS.md"
    deep.parent.mkdir()
    deep.write_text("".join(f"- use the Makefile, rule {i:03d}\n" for i in range(100)))
    nvim = _neovim_view(repo, 1, tmp_path / "out.json", deep)
    (diagnostic,) = nvim["diagnostics"]
    assert diagnostic["code"] == "over-budget"
    assert (diagnostic["lnum"], diagnostic["col"]) == (95, 13)
    assert diagnostic["message"].startswith("Codex reads only the first 2,768 B of AGENTS.md")


@pytest.mark.skipif(NVIM is None, reason="Neovim is installed by `make test` (python-test-deps)")
def test_neovim_sees_a_referenced_file_come_and_go_without_a_keystroke(tmp_path: Path) -> None:
    """Neovim cannot watch files for a server (0.7 has no `didChangeWatchedFiles`; 0.10 and
    0.11 do not offer it on Linux): the server watches the named path itself."""
    workspace = tmp_path / "ws"
    memory = write_memory(workspace, "MEMORY.md", "- Rate limiting: `ratelimit/bucket.go`.\n")
    target = workspace / "ratelimit" / "bucket.go"
    nvim = _neovim_view(
        workspace,
        1,
        tmp_path / "out.json",
        memory,
        "stale_probe.lua",
        {"METIS_TARGET": str(target)},
    )
    assert nvim["steps"] == [
        "stale on open",
        "fresh once the file exists",
        "stale once it is deleted",
    ]
    assert nvim["modified"] is False  # no keystroke did it


def test_the_editors_page_shows_the_configuration_this_test_runs() -> None:
    readme = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    assert f"```lua\n{CONFIG.read_text(encoding='utf-8')}```" in readme
