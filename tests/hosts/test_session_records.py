"""`sessions.decide`: when a hook sends the memory into a session, given what the session
already has. Every hook file of a session shares one record (issue 26), so these rules are
what makes "exactly once" hold whichever files a workspace holds."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metis_memory.hosts.sessions import (
    _RECORD_BYTES,
    SENT_AT_START,
    Record,
    bounded_stamp,
    decide,
)

D, E = "d" * 64, "e" * 64


@pytest.mark.parametrize(
    ("record", "start", "stamp", "sends", "keeps"),
    [
        # a new session: the start sends, and says which start it was
        (None, True, "100", True, (D, "100")),
        (None, True, None, True, (D, SENT_AT_START)),
        # the second hook file of the same start (same instant): nothing more
        (Record(D, "100"), True, "100", False, None),
        # a later start (a resume, a cleared context): a new context, sent again
        (Record(D, "100"), True, "200", True, (D, "200")),
        # a prompt hook run beside a stamped start already sent this memory: no second copy
        (Record(D, None), True, "100", False, (D, "100")),
        # ... but a start its host gives no time for is always a new context (Claude Code)
        (Record(D, None), True, None, True, (D, SENT_AT_START)),
        (Record(D, SENT_AT_START), True, None, True, (D, SENT_AT_START)),
        # prompts: only what the session does not have, keeping the start it came from
        (Record(D, "100"), False, "150", False, None),
        (Record(E, "100"), False, "150", True, (D, "100")),
        (None, False, "150", True, (D, None)),
    ],
)
def test_decide(
    record: Record | None,
    start: bool,
    stamp: str | None,
    sends: bool,
    keeps: tuple[str, str | None] | None,
) -> None:
    sent, new = decide(record, D, start=start, stamp=stamp)
    assert sent is sends
    assert (None if new is None else (new.digest, new.started)) == keeps


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", None),
        (D.encode(), None),  # not a record this version writes
        (Record(D, "100").encode(), (D, "100")),
        (Record(D, None).encode(), (D, None)),
        (b'{"digest": 5}', None),
        (b"{not json", None),
        (b"1234", None),
        (b"[]", None),
    ],
)
def test_records_read_back(data: bytes, expected: tuple[str, str | None] | None) -> None:
    record = Record.decode(data)
    assert (None if record is None else (record.digest, record.started)) == expected


# ---- issue 39, item 12: whatever the host's stamp, the record reads back ------------------------
@settings(max_examples=300, deadline=None)
@given(stamp=st.none() | st.text() | st.integers().map(str), start=st.booleans())
def test_every_record_decide_keeps_reads_back_whole(stamp: str | None, start: bool) -> None:
    """A 451-digit JSON number made a 518-byte record, cut at the 512 read back: no record,
    so the memory was sent again. Stamps are now kept short (hashed past 64 characters)."""
    _, new = decide(None, D, start=start, stamp=stamp)
    assert new is not None
    data = new.encode()
    assert len(data) <= _RECORD_BYTES
    back = Record.decode(data)
    assert back is not None and (back.digest, back.started) == (new.digest, new.started)
    # ... and the same stamp is the same event, however long it is.
    if stamp and start:  # ("" is no stamp: a start with none always sends)
        assert decide(back, D, start=True, stamp=stamp) == (False, None)


def test_a_long_stamp_is_kept_as_its_hash_and_a_short_one_as_it_is() -> None:
    assert bounded_stamp("1795501596090") == "1795501596090"
    long = bounded_stamp("9" * 451)
    assert long is not None and long.startswith("sha256:") and len(long) == 71
    assert bounded_stamp("9" * 451) == long != bounded_stamp("9" * 452)
    assert bounded_stamp("\ud800") != bounded_stamp("\udc00")  # (lone surrogates: hashed too)


def test_a_record_an_earlier_version_wrote_with_a_long_stamp_still_reads() -> None:
    old = json.dumps({"digest": D, "started": "9" * 451}).encode()
    assert len(old) > _RECORD_BYTES
    record = Record.decode(old)
    assert record is not None and record.started == "9" * 451
