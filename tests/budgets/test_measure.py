"""Measuring text against a budget (metis_memory.budgets.measure): where the
consumer stops, in each unit, and what the finding says."""

from __future__ import annotations

import pytest

from metis_memory.analysis.findings import Severity
from metis_memory.budgets.measure import budget_finding, cut_index, find_cut, line_count
from metis_memory.budgets.model import Budget


def budget(unit: str, limit: int, past: str = "truncated", **more: object) -> Budget:
    return Budget.from_dict(
        {
            "id": "b",
            "name": "b",
            "consumer": "Agent",
            "files": ["x.md"],
            "limits": [{"unit": unit, "limit": limit}],
            "past": past,
            **more,
        }
    )


@pytest.mark.parametrize(
    ("text", "lines"), [("", 0), ("a", 1), ("a\n", 1), ("a\nb", 2), ("a\nb\n", 2), ("\n\n", 2)]
)
def test_lines_count_a_last_line_without_newline(text: str, lines: int) -> None:
    assert line_count(text) == lines


def test_lines_cut_at_the_start_of_the_first_line_past_the_limit() -> None:
    text = "one\ntwo\nthree\nfour"
    assert cut_index(text, "lines", 4) is None
    assert cut_index(text, "lines", 3) == text.index("four")
    assert cut_index(text, "lines", 1) == text.index("two")


def test_bytes_cut_at_the_character_holding_the_first_byte_past_the_limit() -> None:
    text = "ab日本"  # 日 = bytes 2..4, 本 = bytes 5..7: 8 bytes
    assert cut_index(text, "bytes", 8) is None
    assert cut_index(text, "bytes", 7) == 3  # the last byte of 本 is past: 本 starts the cut
    assert cut_index(text, "bytes", 3) == 2  # 日 straddles the limit


def test_chars_are_code_points() -> None:
    text = "😀" * 5
    assert cut_index(text, "chars", 5) is None
    assert cut_index(text, "chars", 4) == 4


def test_the_earliest_limit_cuts_and_is_named() -> None:
    two = Budget.from_dict(
        {
            "id": "auto",
            "name": "auto memory index",
            "consumer": "Claude Code",
            "files": ["MEMORY.md"],
            "limits": [{"unit": "lines", "limit": 200}, {"unit": "bytes", "limit": 25000}],
            "past": "truncated",
        }
    )
    short_lines = "".join(f"- fact {i}\n" for i in range(243))
    cut = find_cut(short_lines, two)
    assert cut is not None and cut.limit.unit == "lines"
    finding = budget_finding("MEMORY.md", short_lines, two, cut)
    assert finding.code == "over-budget" and finding.severity is Severity.ERROR
    assert finding.message == (
        "Claude Code loads only the first 200 lines of MEMORY.md: lines 201–243 are never "
        "seen (limit 200 lines or 25,000 B)"
    )
    assert short_lines[finding.start :].startswith("- fact 200\n")
    assert finding.data == {
        "budget": "auto",
        "consumer": "Claude Code",
        "unit": "lines",
        "limit": 200,
        "size": 243,
    }
    long_lines = "".join("x" * 199 + "\n" for _ in range(150))  # 30,000 B in 150 lines
    cut = find_cut(long_lines, two)
    assert cut is not None and cut.limit.unit == "bytes" and cut.index == 25000


def test_a_warning_only_budget_is_a_warning() -> None:
    text = "x" * 40_001
    cut = find_cut(text, budget("chars", 40_000, "warned"))
    assert cut is not None
    finding = budget_finding("CLAUDE.md", text, budget("chars", 40_000, "warned"), cut)
    assert finding.severity is Severity.WARNING
    assert finding.message == (
        "CLAUDE.md is 40,001 characters, over the 40,000 characters Agent advises "
        "(40,000 characters)"
    )


def test_a_chain_spends_the_budget_before_the_file() -> None:
    codex = budget("bytes", 100, chain="codex")
    text = "é" * 30  # 60 bytes
    assert find_cut(text, codex, spent=40) is None  # 40 + 60 = 100: fits exactly
    cut = find_cut(text, codex, spent=41)
    assert cut is not None and cut.index == 29  # 59 bytes left: the 30th é straddles
    assert budget_finding("AGENTS.md", text, codex, cut).message.startswith(
        "Agent reads only the first 59 B of AGENTS.md (60 B): the files above it"
    )
    dropped = find_cut(text, codex, spent=100)
    assert dropped is not None and dropped.index == 0
    assert budget_finding("AGENTS.md", text, codex, dropped).message == (
        "Agent never reads AGENTS.md: the files above it in the chain use 100 B of the "
        "100 B they share with it"
    )


def test_refused_and_skipped_say_what_the_consumer_does() -> None:
    text = "ü" * 2201
    hermes = budget("chars", 2200, "refused")
    cut = find_cut(text, hermes)
    assert cut is not None
    assert budget_finding("MEMORY.md", text, hermes, cut).message == (
        "MEMORY.md is 2,201 characters, 1 character over the 2,200 characters Agent accepts: "
        "Agent refuses writes to it until it is consolidated"
    )
    skip = budget("bytes", 10, "skipped")
    cut = find_cut("x" * 11, skip)
    assert cut is not None
    assert budget_finding("CLAUDE.md", "x" * 11, skip, cut).message == (
        "Agent skips CLAUDE.md entirely: it is 11 B, over the 10 B limit"
    )
