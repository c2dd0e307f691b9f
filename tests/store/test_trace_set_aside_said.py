"""A write log set aside is said out loud: review goes off with it."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from metis_memory.store.files import MemoryFile
from metis_memory.store.memory_store import MemoryStore
from metis_memory.store.provenance import Provenance


def test_a_history_folder_made_open_to_others_is_set_aside_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = MemoryStore(tmp_path)
    store.set_review(True)
    assert store.review_enabled()
    history = tmp_path / ".metis" / "history"
    os.chmod(history, 0o755)  # what `chmod -R go+rX .metis` does
    assert not store.review_enabled(), "a folder others may enter is not read"
    with caplog.at_level(logging.WARNING, logger="metis_memory.store.trace"):
        store.add_entry(MemoryFile.MEMORY, "- lands", by=Provenance("mcp", "claude-code 2"))
    said = [
        r.getMessage() for r in caplog.records if "set aside as history.untrusted" in r.getMessage()
    ]
    assert said, caplog.text
    assert "review is off until you turn it on again (metis-memory review on)" in said[0]
    assert (tmp_path / ".metis" / "history.untrusted").is_dir()
