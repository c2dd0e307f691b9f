"""Connect Agents' detection (hosts/detect.py) against what a cloned repository or an odd
environment can hold: a folder sign reached through a symlink out of the workspace, a
relative CODEX_HOME, PATH entries that are relative (the folder the server runs in)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from metis_memory.hosts.detect import detect


def test_a_folder_sign_behind_a_symlinked_folder_is_not_followed(
    tmp_path: Path, workspace: Path
) -> None:
    """`.github` leading out of the workspace: what is beyond it is not this folder's."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "copilot-instructions.md").write_text("x")
    (elsewhere / "hooks").mkdir()
    (workspace / ".github").symlink_to(elsewhere)
    found = detect(workspace, {"HOME": str(tmp_path / "home"), "PATH": ""})
    assert found["copilot"] == [] and found["copilot-cli"] == []
    # The name itself still counts where it is a sign (a symlinked .claude/ is Claude's).
    (workspace / ".claude").symlink_to(elsewhere)
    assert detect(workspace, {"PATH": ""})["claude"] == [".claude/ in this folder"]


def test_a_relative_codex_home_is_not_looked_up_from_where_the_server_runs(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "codex-here").mkdir()
    monkeypatch.chdir(tmp_path)
    env = {"HOME": str(tmp_path / "home"), "PATH": "", "CODEX_HOME": "codex-here"}
    assert detect(workspace, env)["codex"] == []


@pytest.mark.skipif(os.name == "nt", reason="POSIX PATH")
@pytest.mark.parametrize("entry", ["", ".", "bin"])
def test_a_relative_path_entry_is_not_this_machine(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch, entry: str
) -> None:
    """A repository's own `claude` (or `bin/claude`) is not Claude Code on this machine."""
    for folder in (workspace, workspace / "bin"):
        folder.mkdir(exist_ok=True)
        (folder / "claude").write_text("#!/bin/sh\n")
        (folder / "claude").chmod(0o755)
    monkeypatch.chdir(workspace)
    env = {"HOME": str(tmp_path / "home"), "PATH": os.pathsep.join([entry, "/nonexistent"])}
    assert detect(workspace, env)["claude"] == []


@pytest.mark.parametrize(
    "qwen_home", ["\0", "/nonexistent/\0/x", "~/\0", "~x", "/" + "x" * 5000, "~/" + "x" * 5000]
)
def test_an_odd_qwen_home_finds_nothing_and_raises_nothing(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch, qwen_home: str
) -> None:
    """QWEN_HOME replaces `~/.qwen` (as CODEX_HOME does `~/.codex`): one with a NUL, a
    relative one (`~x` is not the home folder), or a name longer than the system takes is
    not a folder here."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "home" / ".qwen").mkdir(parents=True)
    (tmp_path / "~x").mkdir()
    env = {"HOME": str(tmp_path / "home"), "PATH": "", "QWEN_HOME": qwen_home}
    assert detect(workspace, env)["qwen"] == []
