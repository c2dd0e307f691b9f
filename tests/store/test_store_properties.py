"""Properties of the store over generated input (hypothesis), against a real filesystem."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from metis_memory import (
    EmptyEntry,
    MemoryFile,
    MemoryHardCapExceeded,
    MemoryStore,
    OldTextNotFound,
    OldTextNotUnique,
    WriteResult,
)
from support.memory_files import memory_path, write_memory

# Storable text: anything but lone surrogates and NUL, which the store rejects on purpose.
TEXT_CHARS = st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00")
text = st.text(TEXT_CHARS, max_size=120)
files = st.sampled_from([MemoryFile.MEMORY, MemoryFile.USER])

FAST = settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fresh_workspace(root: Path) -> Path:
    """A new workspace per example: tmp_path is shared by all examples of one test."""
    return Path(tempfile.mkdtemp(dir=root))


@FAST
@given(file=files, initial=text, entry=text)
def test_add_never_decreases_size(
    tmp_path: Path, file: MemoryFile, initial: str, entry: str
) -> None:
    ws = fresh_workspace(tmp_path)
    write_memory(ws, file, initial)
    store = MemoryStore(ws)
    before = memory_path(ws, file).read_bytes()
    try:
        result = store.add_entry(file, entry)
    except EmptyEntry:
        assert not entry.strip()
        assert memory_path(ws, file).read_bytes() == before
        return
    assert result.after_size_bytes >= result.before_size_bytes == len(before)
    after = memory_path(ws, file).read_bytes()
    assert after.startswith(before)
    assert len(after) == result.after_size_bytes


@FAST
@given(file=files, initial=text, content=st.text(TEXT_CHARS, max_size=600))
def test_consolidate_is_idempotent_on_hash(
    tmp_path: Path, file: MemoryFile, initial: str, content: str
) -> None:
    ws = fresh_workspace(tmp_path)
    write_memory(ws, file, initial)
    store = MemoryStore(ws)
    first = store.consolidate(file, content)
    second = store.consolidate(file, content)
    assert first.after_hash == second.after_hash == second.before_hash
    assert first.after_hash == sha(content.encode("utf-8"))
    assert first.after_size_bytes == second.after_size_bytes == len(content.encode("utf-8"))


class StoreMachine(RuleBasedStateMachine):
    """Random sequences of add/replace/consolidate on both files, checked against a model.

    Invariants: the disk never holds more than the hard cap; it equals the model; each
    successful write's before_hash is the previous on-disk hash and its after_hash the new
    one; a failed write changes nothing.
    """

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="metis-prop-"))
        self.store = MemoryStore(self.root)
        self.model: dict[MemoryFile, bytes] = {f: b"" for f in MemoryFile}
        self.last_after: dict[MemoryFile, str] = {f: sha(b"") for f in MemoryFile}

    def teardown(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def disk(self, file: MemoryFile) -> bytes:
        path = memory_path(self.root, file)
        return path.read_bytes() if path.exists() else b""

    def attempt(self, file: MemoryFile, call: object, expected: str | None) -> None:
        """Run a write; `expected` is the model's prediction of the new content (None when
        it predicts a rejection it cannot compute cheaply)."""
        before = self.disk(file)
        try:
            result = call()  # type: ignore[operator]
        except (MemoryHardCapExceeded, EmptyEntry, OldTextNotFound, OldTextNotUnique) as exc:
            assert self.disk(file) == before, f"{type(exc).__name__} changed the file"
            if isinstance(exc, MemoryHardCapExceeded):
                assert exc.attempted_size > MemoryStore.hard_cap(file)
            return
        assert isinstance(result, WriteResult)
        after = self.disk(file)
        assert result.before_hash == self.last_after[file] == sha(before)
        assert result.after_hash == sha(after)
        assert (result.before_size_bytes, result.after_size_bytes) == (len(before), len(after))
        assert result.over_soft_cap == (len(after) > MemoryStore.soft_cap(file))
        if expected is not None:
            assert after == expected.encode("utf-8")
        self.model[file] = after
        self.last_after[file] = result.after_hash

    @rule(file=files, entry=st.text(TEXT_CHARS, max_size=400))
    def add(self, file: MemoryFile, entry: str) -> None:
        current = self.model[file].decode("utf-8")
        expected = None
        if entry.strip() and "\r" not in current + entry:
            joined = current if not current or current.endswith("\n") else current + "\n"
            expected = joined + entry + ("" if entry.endswith("\n") else "\n")
        size_before = len(self.model[file])
        self.attempt(file, lambda: self.store.add_entry(file, entry), expected)
        assert len(self.model[file]) >= size_before

    @rule(file=files, data=st.data(), new=st.text(TEXT_CHARS, max_size=300))
    def replace_existing(self, file: MemoryFile, data: st.DataObject, new: str) -> None:
        current = self.model[file].decode("utf-8")
        if not current:
            return
        start = data.draw(st.integers(0, len(current) - 1))
        end = data.draw(st.integers(start + 1, min(len(current), start + 40)))
        old = current[start:end]
        self.attempt(file, lambda: self.store.replace(file, old, new), None)

    @rule(file=files, old=st.text(TEXT_CHARS, min_size=1, max_size=10), new=text)
    def replace_random(self, file: MemoryFile, old: str, new: str) -> None:
        self.attempt(file, lambda: self.store.replace(file, old, new), None)

    @rule(
        file=files,
        content=st.one_of(
            st.text(TEXT_CHARS, max_size=300),
            st.integers(2000, 4200).map(lambda n: "c" * n),
        ),
    )
    def consolidate(self, file: MemoryFile, content: str) -> None:
        self.attempt(file, lambda: self.store.consolidate(file, content), content)

    @rule(file=files)
    def edit_behind_the_stores_back(self, file: MemoryFile) -> None:
        # A hand edit (within the cap): the next write's before_hash must pick it up.
        current = self.model[file].decode("utf-8")
        edited = (current[: len(current) // 2] + "hand edit\n").encode("utf-8")
        write_memory(self.root, file, edited)
        self.model[file] = edited
        self.last_after[file] = sha(edited)

    @invariant()
    def disk_matches_model_within_the_hard_cap(self) -> None:
        for file in MemoryFile:
            data = self.disk(file)
            assert len(data) <= MemoryStore.hard_cap(file)
            assert data == self.model[file]


StoreMachine.TestCase.settings = settings(
    max_examples=40,
    stateful_step_count=20,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_store_state_machine = StoreMachine.TestCase
