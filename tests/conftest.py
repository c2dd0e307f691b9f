"""Fixtures every suite shares: a real, empty workspace folder and a store over it."""

from __future__ import annotations

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
