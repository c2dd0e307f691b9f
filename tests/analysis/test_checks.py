"""Findings from text (metis_memory.analysis.checks)."""

from __future__ import annotations

import pytest

from metis_memory.analysis.checks import check
from metis_memory.analysis.findings import Severity
from metis_memory.store.files import MemoryFile

MEMORY, USER = MemoryFile.MEMORY, MemoryFile.USER


def codes(text: str, file: MemoryFile = MEMORY) -> list[str]:
    return [f.code for f in check(file, text)]


def test_a_small_clean_file_has_no_findings() -> None:
    assert check(MEMORY, "# Memory\n\n- uses make\n- tests in tests/\n") == []
    assert check(USER, "") == []


# The spec's caps, in UTF-8 bytes (written out, not read from the code under test).
SPEC_CAPS = [(MEMORY, 2048, 4096), (USER, 1536, 3072)]


@pytest.mark.parametrize(("file", "soft", "hard"), SPEC_CAPS)
def test_each_cap_is_inclusive(file: MemoryFile, soft: int, hard: int) -> None:
    assert codes("x" * soft, file) == []
    assert codes("x" * (soft + 1), file) == ["over-soft-cap"]
    assert codes("x" * hard, file) == ["over-soft-cap"]
    assert codes("x" * (hard + 1), file) == ["over-hard-cap"]


def test_over_the_soft_cap_the_range_starts_at_the_first_byte_past_it() -> None:
    text = "x" * 2040 + "\n- 日本語 😀\n"  # "\n- " = bytes 2040..2042, 日 2043..2045, 本 2046..2048
    (finding,) = check(MEMORY, text)
    assert finding.code == "over-soft-cap" and finding.severity is Severity.WARNING
    assert text[finding.start] == "本"  # straddles byte 2048: it starts the range
    assert finding.end == len(text)
    size = len(text.encode())
    assert finding.message == (
        f"MEMORY.md is {size:,} B, over its 2,048 B soft cap (hard cap 4,096 B): "
        "consolidate before adding more"
    )


def test_an_emoji_straddling_the_cap_starts_the_range() -> None:
    text = "y" * 1534 + "😀z"  # 😀 = bytes 1534..1537, USER.md soft cap 1536
    (finding,) = check(USER, text)
    assert text[finding.start :] == "😀z"


def test_a_byte_order_mark_the_editor_hides_still_counts_toward_the_cap() -> None:
    # On disk: EF BB BF + 2,045 "a" fill bytes 0..2047; "b" is byte 2048, the first past
    # the cap. The editor shows the text without the mark, so "b" is at index 2045 there.
    text = "a" * 2045 + "bcd"
    (finding,) = check(MEMORY, text, size_bytes=3 + len(text), hidden_prefix_bytes=3)
    assert text[finding.start :] == "bcd"
    assert "2,051 B" in finding.message


def test_over_the_hard_cap_only_the_error_is_reported() -> None:
    text = "a" * 4096 + "é"
    (finding,) = check(MEMORY, text)
    assert finding.code == "over-hard-cap" and finding.severity is Severity.ERROR
    assert (finding.start, finding.end) == (4096, 4097)
    assert finding.message == (
        "MEMORY.md is 4,098 B, over its 4,096 B hard cap (soft cap 2,048 B): writes that leave "
        "it over the hard cap are rejected; consolidate it to under 2,048 B"
    )


def test_the_disk_size_counts_when_given() -> None:
    # A file that is not UTF-8 is measured by its bytes, not by the decoded text.
    assert codes("short", USER) == []
    assert [f.code for f in check(USER, "short", size_bytes=5000)] == ["over-hard-cap"]


def test_duplicates_ignore_case_whitespace_and_marker_and_point_at_the_first() -> None:
    text = "- Use make\n- other\n*   use  MAKE  \n1. use make\n"
    findings = [f for f in check(MEMORY, text) if f.code == "duplicate-entry"]
    assert len(findings) == 2
    assert [text[f.start : f.end] for f in findings] == ["*   use  MAKE  ", "1. use make"]
    assert all(f.original is not None and f.original.first_line == 0 for f in findings)
    assert findings[0].message == (
        "Duplicate entry: the same as line 1 (ignoring case and whitespace); remove one of them"
    )


def test_empty_items_are_reported_not_as_duplicates() -> None:
    text = "- a\n-\n- \n"
    findings = check(MEMORY, text)
    assert [f.code for f in findings] == ["empty-entry", "empty-entry"]
    assert findings[0].severity is Severity.INFORMATION
    assert [(f.start, f.end) for f in findings] == [(4, 5), (6, 8)]


def test_a_secret_is_reported_without_repeating_it() -> None:
    token = "ghp_" + "A1b2C3d4" * 4 + "e5F6"
    text = f"- deploy token {token}\n"
    (finding,) = check(MEMORY, text)
    assert finding.code == "secret"
    assert text[finding.start : finding.end] == token
    assert token not in finding.message
    assert "GitHub token" in finding.message
    assert finding.entry is not None and finding.entry.first_line == 0


def test_not_utf8_points_at_the_first_bad_byte() -> None:
    raw = "- é\n- x".encode() + b"\xff\xfe rest\n"
    text = raw.decode("utf-8", errors="replace")
    findings = check(MEMORY, text, size_bytes=len(raw), utf8_error_offset=raw.index(b"\xff"))
    (finding,) = [f for f in findings if f.code == "not-utf8"]
    assert finding.severity is Severity.ERROR
    assert text[finding.start : finding.end] == "\ufffd"
    assert finding.start == text.index("\ufffd")
    assert "offset 8" in finding.message


def test_findings_are_ordered_by_position() -> None:
    text = "- dup\n-\n- DUP\n\npassword: hunter2secret\n"
    found = check(MEMORY, text)
    assert [f.start for f in found] == sorted(f.start for f in found)
    assert [f.code for f in found] == ["empty-entry", "duplicate-entry", "secret"]


@pytest.mark.timeout(30)
def test_a_megabyte_of_duplicates_is_checked_in_linear_time() -> None:
    # 50,000 entries all alike: a pairwise comparison would take hours, a dict takes
    # milliseconds. The timeout is a guard against a quadratic regression, not a benchmark.
    text = "# Memory\n" + "- the same fact, again and again\n" * 33_000
    assert len(text.encode()) > 1_000_000
    findings = check(MEMORY, text)
    assert sum(f.code == "duplicate-entry" for f in findings) == 32_999
    assert sum(f.code == "over-hard-cap" for f in findings) == 1


def test_a_line_of_thousands_of_secrets_gives_the_first_thousand_and_a_note() -> None:
    """Issue 39, item 6: past SHOWN_SECRETS the scan stops (a long line is not scanned to
    its end) and one finding says so; the secrets shown are the first ones, in order."""
    from metis_memory.analysis.checks import SHOWN_SECRETS, check
    from metis_memory.analysis.secrets import WORK, find_secrets
    from metis_memory.store.files import MemoryFile

    text = "- keys: " + "api_key=Zx9Qw3Er7Ty1Ui5O " * 40_000  # one 1 MiB line
    WORK.chars = 0
    findings = [f for f in check(MemoryFile.MEMORY, text) if f.code == "secret"]
    shown_work = WORK.chars
    every = find_secrets(text)
    whole_work = WORK.chars - shown_work
    assert len(every) == 40_000
    assert len(findings) == SHOWN_SECRETS + 1
    assert [(f.start, f.end) for f in findings[:-1]] == [
        (m.start, m.end) for m in every[:SHOWN_SECRETS]
    ]
    assert findings[-1].secret is None and findings[-1].start == every[SHOWN_SECRETS].start
    assert "the first 1,000 are shown" in findings[-1].message
    assert shown_work * 3 < whole_work, (shown_work, whole_work)  # the markers: one pass each
