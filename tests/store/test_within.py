"""`is_within`: the one check that a path, symlinks resolved, stays inside a root."""

from __future__ import annotations

from pathlib import Path

from metis_memory.store.within import is_within


def test_inside_outside_and_through_symlinks(tmp_path: Path) -> None:
    root, sibling = tmp_path / "repo", tmp_path / "repo-other"
    (root / "src").mkdir(parents=True)
    sibling.mkdir()
    (root / "out").symlink_to(sibling)
    (root / "in").symlink_to(root / "src")
    assert is_within(root, root)
    assert is_within(root / "src" / "missing.py", root)
    assert is_within(root / "in" / "x", root)
    assert not is_within(root / "out" / "x", root)  # a symlink out of the workspace
    assert not is_within(sibling, root)  # a name that merely starts like the root
    assert is_within(tmp_path, Path("/"))
