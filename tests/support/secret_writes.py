"""What the secret tests share: a memory file written by hand (as a person types a secret
in, outside every door), its digest, and the refusal a door gives a write."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from metis_memory import MemoryStore
from metis_memory.tools import ToolExecutionError, memory_dispatcher


def by_hand(workspace: Path, text: str, name: str = "MEMORY.md") -> Path:
    path = workspace / ".metis" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def refusal(store: MemoryStore, tool: str, arguments: dict[str, str]) -> ToolExecutionError:
    with pytest.raises(ToolExecutionError) as caught:
        memory_dispatcher(store).dispatch(tool, arguments)
    return caught.value
