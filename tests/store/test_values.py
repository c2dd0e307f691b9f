"""The read-only classes the hook's modules use instead of frozen dataclasses
(`store/values.py`): what the dataclasses gave stays true, refused assignments, equality
and hashing by field, and copies and pickles (a child process hands a WriteResult back
pickled) that come back whole."""

from __future__ import annotations

import copy
import pickle

import pytest

from metis_memory.analysis.secrets import SecretMatch, rules
from metis_memory.store.files import CAPS, Caps, MemoryFile
from metis_memory.store.memory_store import MemorySnapshot, WriteResult
from metis_memory.store.values import Frozen

RESULT = WriteResult(MemoryFile.MEMORY, "a" * 64, "b" * 64, 10, 20, False, False, "- x\n", 7)
SNAPSHOT = MemorySnapshot(MemoryFile.USER, True, "- y\n", 4, "c" * 64, None)


def first_field(value: Frozen) -> str:
    names: tuple[str, ...] = value.__slots__
    return names[0]


@pytest.mark.parametrize("value", [RESULT, SNAPSHOT, CAPS[MemoryFile.USER], SecretMatch("k", 1, 2)])
def test_fields_refuse_assignment_and_deletion(value: Frozen) -> None:
    name = first_field(value)
    before = getattr(value, name)
    with pytest.raises(AttributeError, match="read-only"):
        setattr(value, name, "changed")
    with pytest.raises(AttributeError, match="read-only"):
        delattr(value, name)
    with pytest.raises(AttributeError, match="read-only"):
        value.new_field = 1
    assert getattr(value, name) == before


def test_values_compare_and_hash_by_their_fields() -> None:
    assert Caps(1, 2) == Caps(1, 2) and hash(Caps(1, 2)) == hash(Caps(1, 2))
    assert Caps(1, 2) != Caps(2, 1)
    assert SecretMatch("k", 1, 2) != ("k", 1, 2)  # (not a tuple)
    assert len({SecretMatch("k", 1, 2), SecretMatch("k", 1, 2), SecretMatch("j", 1, 2)}) == 2
    assert repr(Caps(1, 2)) == "Caps(hard=2, soft=1)"
    assert repr(SecretMatch("k", 1, 2)) == "SecretMatch(kind='k', start=1, end=2)"


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickles_and_copies_come_back_whole(protocol: int) -> None:
    for value in (RESULT, SNAPSHOT, CAPS[MemoryFile.MEMORY], SecretMatch("k", 1, 2)):
        for again in (pickle.loads(pickle.dumps(value, protocol)), copy.copy(value)):
            assert again == value and type(again) is type(value)
            with pytest.raises(AttributeError):
                setattr(again, first_field(value), None)
        assert copy.deepcopy(value) == value
    rule = rules()[0]
    assert rule.pattern.search(rule.example)  # (a cached property, kept in its __dict__)
    again = pickle.loads(pickle.dumps(rule, protocol))
    assert (again.id, again.source, again.keywords) == (rule.id, rule.source, rule.keywords)
    assert again.pattern.pattern == rule.pattern.pattern
