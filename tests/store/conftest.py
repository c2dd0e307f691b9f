"""Fixtures for the store tests: real workspaces on a real filesystem, and honest probes
(a directory an unprivileged child can use, a small tmpfs, an audit hook counting opens)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.store_faults import NOBODY, OpenRecorder


@pytest.fixture
def nobody_dir() -> Iterator[Path]:
    """A fresh directory owned by `nobody`, whose ancestors `nobody` can traverse.

    Root bypasses permission bits, so permission tests run their write in a child that
    drops to `nobody`. pytest's tmp_path lives under a root-only 0700 directory, so this
    one is made in the system temp dir. Only root can give a directory away.
    """
    if os.geteuid() != 0:
        pytest.skip("needs root: to chown a directory to nobody and drop privileges in a child")
    base = Path(tempfile.mkdtemp(prefix="metis-nobody-"))
    try:
        for ancestor in base.parents:
            if not os.stat(ancestor).st_mode & 0o001:
                pytest.skip(f"{ancestor} is not traversable by other users")
        os.chown(base, NOBODY, NOBODY)
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


_RECORDER: OpenRecorder | None = None


@pytest.fixture
def open_recorder() -> Iterator[OpenRecorder]:
    global _RECORDER
    if _RECORDER is None:
        _RECORDER = OpenRecorder()
        sys.addaudithook(_RECORDER.hook)
    try:
        yield _RECORDER
    finally:
        _RECORDER.stop()
