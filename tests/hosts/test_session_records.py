"""`sessions.decide`: when a hook sends the memory into a session, given what the session
already has. Every hook file of a session shares one record (issue 26), so these rules are
what makes "exactly once" hold whichever files a workspace holds."""

from __future__ import annotations

import pytest

from metis_memory.hosts.sessions import SENT_AT_START, Record, decide

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
