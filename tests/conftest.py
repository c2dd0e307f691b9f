"""Fixtures every suite shares: a real, empty workspace folder, a store over it, and a
small tmpfs for disk-full faults."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from metis_memory import MemoryStore


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def store(workspace: Path) -> MemoryStore:
    return MemoryStore(workspace)


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs mount, or a skip that says why it could not be mounted."""
    mount_point = tmp_path / "small-fs"
    mount_point.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount command to create a small tmpfs")
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k,mode=0755", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {result.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False, capture_output=True)
