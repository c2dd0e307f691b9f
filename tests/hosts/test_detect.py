"""Which hosts Connect Agents ticks (hosts/detect.py): by their files in the folder, their
command on PATH, their folder in the home directory; names only, never read or followed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from metis_memory.hosts.configs import SETUPS
from metis_memory.hosts.detect import SIGNS, detect


def executable(folder: Path, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("#!/bin/sh\n")
    (folder / name).chmod(0o755)


def test_every_host_has_its_signs() -> None:
    assert set(SIGNS) == set(SETUPS)


def test_nothing_found_in_an_empty_folder_and_home(tmp_path: Path, workspace: Path) -> None:
    env = {"HOME": str(tmp_path / "home"), "PATH": str(tmp_path / "bin")}
    assert detect(workspace, env) == {name: [] for name in SETUPS}


def test_found_by_folder_files_path_and_home(tmp_path: Path, workspace: Path) -> None:
    home, bin_dir = tmp_path / "home", tmp_path / "bin"
    (workspace / "CLAUDE.md").write_text("# rules\n")
    (workspace / ".cursor").mkdir()
    (workspace / ".github").mkdir()
    (workspace / ".github" / "copilot-instructions.md").write_text("x")
    (home / ".gemini").mkdir(parents=True)
    executable(bin_dir, "codex")
    executable(bin_dir, "claude")
    (bin_dir / "cline").write_text("not executable")
    found = detect(workspace, {"HOME": str(home), "PATH": f"{tmp_path / 'nowhere'}:{bin_dir}"})
    assert found == {name: [] for name in SETUPS} | {
        "claude": ["CLAUDE.md in this folder", "claude on PATH"],
        "codex": ["codex on PATH"],
        "gemini": ["~/.gemini/ on this machine"],
        "cursor": [".cursor/ in this folder"],
        "copilot": [".github/copilot-instructions.md in this folder"],
        "copilot-cli": [".github/copilot-instructions.md in this folder"],
    }


def test_opencode_qwen_code_and_the_cline_cli_are_found(tmp_path: Path, workspace: Path) -> None:
    """By the files each reads (opencode's config walk, Qwen Code's `.qwen`, the Cline
    CLI's `.cline/plugins` and kin), its command, and its folders in the home directory."""
    home, bin_dir = tmp_path / "home", tmp_path / "bin"
    (workspace / "opencode.jsonc").write_text("{}")
    (workspace / ".opencode").mkdir()
    (workspace / "QWEN.md").write_text("# rules\n")
    (workspace / ".cline" / "plugins").mkdir(parents=True)
    (home / ".local" / "share" / "opencode").mkdir(parents=True)
    (home / ".qwen").mkdir()
    executable(bin_dir, "opencode")
    executable(bin_dir, "qwen")
    found = detect(workspace, {"HOME": str(home), "PATH": str(bin_dir)})
    assert found["opencode"] == [
        "opencode.jsonc in this folder",
        ".opencode/ in this folder",
        "opencode on PATH",
        "~/.local/share/opencode/ on this machine",
    ]
    assert found["qwen"] == ["QWEN.md in this folder", "qwen on PATH", "~/.qwen/ on this machine"]
    assert found["cline"] == [".cline/ in this folder"]
    assert [name for name, why in found.items() if why] == ["cline", "opencode", "qwen"]


def test_qwen_home_replaces_the_default_folder(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    (home / ".qwen").mkdir(parents=True)
    (tmp_path / "qwen-home").mkdir()
    env = {"HOME": str(home), "PATH": "", "QWEN_HOME": str(tmp_path / "qwen-home")}
    assert detect(workspace, env)["qwen"] == ["QWEN_HOME (~/.qwen/) on this machine"]
    env["QWEN_HOME"] = "qwen-home"  # relative: where the server runs, not this machine's
    assert detect(workspace, env)["qwen"] == []
    # Qwen Code reads a `~/` the shell left alone as the home folder (Storage.resolvePath).
    (home / "qwen-elsewhere").mkdir()
    env["QWEN_HOME"] = "~/qwen-elsewhere"
    assert detect(workspace, env)["qwen"] == ["QWEN_HOME (~/.qwen/) on this machine"]
    env["QWEN_HOME"] = "~/missing"
    assert detect(workspace, env)["qwen"] == []


def test_codex_home_replaces_the_default_folder(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (tmp_path / "codex-home").mkdir()
    env = {"HOME": str(home), "PATH": "", "CODEX_HOME": str(tmp_path / "codex-home")}
    assert detect(workspace, env)["codex"] == ["CODEX_HOME (~/.codex/) on this machine"]
    env["CODEX_HOME"] = str(tmp_path / "missing")
    assert detect(workspace, env)["codex"] == []


@pytest.mark.skipif(os.name == "nt", reason="symlinks and FIFOs")
def test_a_symlink_counts_as_itself_and_nothing_is_opened(tmp_path: Path, workspace: Path) -> None:
    """A cloned repository's `CLAUDE.md -> /dev/...` or a FIFO named `GEMINI.md`: found by
    name, never opened (opening a FIFO would hang)."""
    (workspace / "CLAUDE.md").symlink_to(tmp_path / "does-not-exist")
    os.mkfifo(workspace / "GEMINI.md")
    found = detect(workspace, {"HOME": str(tmp_path), "PATH": ""})
    assert found["claude"] == ["CLAUDE.md in this folder"]
    assert found["gemini"] == ["GEMINI.md in this folder"]


def test_a_relative_or_missing_home_is_not_looked_in(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".claude").mkdir()
    assert detect(workspace, {"HOME": ".", "PATH": ""})["claude"] == []
    assert detect(workspace, {})["claude"] == []
