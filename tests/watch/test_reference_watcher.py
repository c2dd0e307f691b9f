"""The server's own watch on referenced paths (reference_watcher.py), on a real filesystem:
where each path is watched from, what is never watched, and a change reported."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path

import pytest

from metis_memory.watch import reference_watcher
from metis_memory.watch.reference_watcher import ReferenceWatcher, watch_points

WAIT_S = 10


def test_each_path_is_watched_from_the_nearest_folder_that_exists(tmp_path: Path) -> None:
    """...and from every folder above that one, up to the workspace (a watched folder that
    is itself deleted reports nothing, so its parent must see it go)."""
    (tmp_path / "src" / "app").mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    assert watch_points([(tmp_path, tmp_path / "src" / "app" / "main.go")]) == {
        tmp_path / "src" / "app",
        tmp_path / "src",
        tmp_path,
    }
    assert watch_points([(tmp_path, tmp_path / "src" / "gone" / "x.go")]) == {
        tmp_path / "src",
        tmp_path,
    }
    assert watch_points([(tmp_path, tmp_path / "db" / "migrations")]) == {tmp_path}


def test_nothing_outside_the_folder_is_watched(tmp_path: Path) -> None:
    folder, outside = tmp_path / "ws", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    os.symlink(outside, folder / "linked")
    assert watch_points([(folder, folder / "linked" / "x.go")]) == set()


def test_a_file_created_in_a_watched_folder_is_reported(tmp_path: Path) -> None:
    seen = threading.Event()
    watcher = ReferenceWatcher(seen.set)
    target = tmp_path / "src" / "x.go"
    (tmp_path / "src").mkdir()
    try:
        watcher.set_paths([(tmp_path, target)])
        assert seen.wait(WAIT_S), "no report once the watch was in place"
        seen.clear()
        (tmp_path / "src" / "unrelated.txt").write_text("noise")
        target.write_text("package x\n")
        assert seen.wait(WAIT_S), f"no report within {WAIT_S} s of creating {target}"
    finally:
        watcher.stop()


def test_a_folder_deleted_and_made_again_is_still_seen(tmp_path: Path) -> None:
    seen = threading.Event()
    watcher = ReferenceWatcher(seen.set)
    target = tmp_path / "src" / "x.go"
    target.parent.mkdir()
    target.write_text("package x\n")
    try:
        watcher.set_paths([(tmp_path, target)])
        assert seen.wait(WAIT_S), "no report once the watch was in place"
        for step in ("delete the folder", "make it again"):
            seen.clear()
            if step == "delete the folder":
                target.unlink()
                target.parent.rmdir()
            else:
                target.parent.mkdir()
                target.write_text("package x\n")
            assert seen.wait(WAIT_S), f"no report within {WAIT_S} s after: {step}"
    finally:
        watcher.stop()


def test_a_folder_made_while_the_watch_is_set_up_is_watched_from_then_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder made between working out where to watch from and the watch being in place
    sends that watch no event (a test's `mkdir` right after the server's first analysis
    did, 2 runs in 12 under load): the watch must still move into it, or a file deleted
    there later goes unseen and the reference stays fresh."""
    target = tmp_path / "ratelimit" / "bucket.go"
    real = reference_watcher.watch_points
    raced = threading.Event()

    def folder_made_meanwhile(paths: Iterable[tuple[Path, Path]]) -> set[Path]:
        points = real(paths)
        if not raced.is_set():  # the first answer, before any watch is in place
            raced.set()
            target.parent.mkdir()
            target.write_text("package ratelimit\n")
        return points

    monkeypatch.setattr(reference_watcher, "watch_points", folder_made_meanwhile)
    seen = threading.Event()
    watcher = ReferenceWatcher(seen.set)
    try:
        watcher.set_paths([(tmp_path, target)])
        assert seen.wait(WAIT_S), "no report once the watch was in place"
        assert raced.is_set()
        assert tmp_path / "ratelimit" in watcher.watching
        seen.clear()
        target.unlink()
        assert seen.wait(WAIT_S), f"no report within {WAIT_S} s of deleting {target}"
    finally:
        watcher.stop()
