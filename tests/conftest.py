"""Fixtures every suite shares: a real, empty workspace folder, a store over it, a small
tmpfs for disk-full faults, and `client`: a pytest-lsp session with the real server over
stdio (the harness is `support/lsp_session.py`)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_lsp
from hypothesis import settings

from metis_memory import MemoryStore
from support.lsp_session import SERVER_CONFIG, MetisClient, end_session

# `make test` draws the same examples on every run (each test's seed comes from the test
# itself: its name, signature and source), so a red run is the code's doing, never the
# draw's; `make test-explore` draws new ones.
settings.register_profile("fixed", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("METIS_HYPOTHESIS_PROFILE", "fixed"))

FIRST = ("real_hosts", "packaging", "editors")
"""Folders whose tests start other programs (the real agent hosts, Neovim and Emacs, a wheel
build and install): 2-12 s a test. Run first, so that at the end of a parallel run no core
waits idle on one of them while the other has finished."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tests = Path(__file__).parent

    def folder(item: pytest.Item) -> str:
        try:
            return item.path.relative_to(tests).parts[0]
        except ValueError:
            return ""

    items.sort(key=lambda item: folder(item) not in FIRST)  # stable: the rest keep their order


@pytest.fixture(autouse=True)
def user_config_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test (and every process it starts) gets a config folder of its own, so the
    user memory (`$XDG_CONFIG_HOME/metis-memory/USER.md`) of the machine running the suite
    never reaches a test, and no test writes one there."""
    home = tmp_path_factory.mktemp("xdg-config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


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


@pytest_lsp.fixture(config=SERVER_CONFIG)  # type: ignore[untyped-decorator]  # no annotations
async def client(lsp_client: MetisClient) -> AsyncIterator[None]:
    yield
    await end_session(lsp_client)
