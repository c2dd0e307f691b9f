"""The bounded reader every file of a repository goes through (`store/reading.py`), and
`.metis/budgets.toml` read by it: never through a `.metis/` that leads out of the workspace."""

from __future__ import annotations

import os
from pathlib import Path

from metis_memory.budgets.catalog import workspace_catalog
from metis_memory.store.reading import read_metis_file

DISABLE_CLAUDE_MD = '[disable]\nbuiltin = ["claude-md"]\n'


def test_a_metis_file_is_read_when_there_and_none_when_not(tmp_path: Path) -> None:
    assert read_metis_file(tmp_path, "budgets.toml", 1024) is None
    (tmp_path / ".metis").mkdir()
    (tmp_path / ".metis" / "budgets.toml").write_text(DISABLE_CLAUDE_MD)
    read = read_metis_file(tmp_path, "budgets.toml", 1024)
    assert read is not None and read.text == DISABLE_CLAUDE_MD
    assert "claude-md" not in {b.id for b in workspace_catalog(tmp_path).budgets}
    too_small = read_metis_file(tmp_path, "budgets.toml", 8)
    assert too_small is not None and too_small.text is None
    assert too_small.problem is not None and "too large" in too_small.problem


def test_a_metis_folder_leading_out_of_the_workspace_is_not_followed(tmp_path: Path) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (outside / "budgets.toml").write_text(DISABLE_CLAUDE_MD)
    os.symlink(outside, workspace / ".metis")
    read = read_metis_file(workspace, "budgets.toml", 1024)
    assert read is not None and read.text is None
    assert read.problem == ".metis/ is a symlink out of the workspace: not followed"
    # The budgets in force say so, and are the built-in ones.
    catalog = workspace_catalog(workspace)
    assert [p.message for p in catalog.problems] == [
        "budgets.toml was not read: .metis/ is a symlink out of the workspace: not followed"
    ]
    assert "claude-md" in {b.id for b in catalog.budgets}


def test_a_metis_folder_linked_inside_the_workspace_and_a_linked_workspace_are_read(
    tmp_path: Path,
) -> None:
    real = tmp_path / "real"
    (real / "conf").mkdir(parents=True)
    (real / "conf" / "budgets.toml").write_text(DISABLE_CLAUDE_MD)
    os.symlink("conf", real / ".metis")  # inside the workspace: followed
    linked = tmp_path / "linked"
    os.symlink(real, linked)  # the workspace itself opened through a link
    for workspace in (real, linked):
        read = read_metis_file(workspace, "budgets.toml", 1024)
        assert read is not None and read.text == DISABLE_CLAUDE_MD, workspace
