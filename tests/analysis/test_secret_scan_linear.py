"""The secret scan is linear on every shape of text (issue 39, item 6): one long line of
keyword hits made it quadratic (each match's allowlist took "the line" from the start of
the text when no line break was near), so a 1 MiB one-line MEMORY.md took 15.6 s a hook.

Each hostile shape is fed at 1x, 4x and 16x its size, and the scan's work is counted, not
timed: `secrets.WORK` tallies every character the scanner hands to a search or a copy (each
regex call, `find`, `in` test, slice and lower-casing). Linear work grows 4x and 16x; the
quadratic scan grew 16x and 256x. A clock would be noisy on a shared machine; the count is
the same on every run.

The tokens are put together here, never written out, so that secret scanners do not flag
this file; none is real."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import pytest

from metis_memory.analysis import secrets
from metis_memory.analysis.secrets import find_secrets, rules

BASE = 16 * 1024
"""The 1x size, in characters: 16x of it (256 KiB) is past LINE_SCAN_MAX_CHARS, so both the
line-at-a-time and the windowed scan are measured."""
SLACK = 1.6
"""How far above linear the work may grow: windows overlap (by OVERLAP every WINDOW); past
KEYWORD_HITS hits a window's rules run over all of it, not line by line; and a longer text
of random tokens holds more of the 400 keywords by chance, so more rules run on it, until
every rule that can does. Quadratic work grows 4x more at 4x, 16x more at 16x."""
ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def looks_random(size: int, seed: str) -> str:
    """`size` characters that look random (a key's body), the same on every run."""
    out = ""
    while len(out) < size:
        digest = hashlib.sha256(f"{seed}/{len(out)}".encode()).digest()
        out += "".join(ALNUM[b % len(ALNUM)] for b in digest)
    return out[:size]


def repeated(unit: str) -> Callable[[int], str]:
    return lambda size: (unit * (size // len(unit) + 1))[:size]


def each_new(make: Callable[[int], str]) -> Callable[[int], str]:
    """Units that differ one from the next (a cache of matches by text does not help)."""

    def text(size: int) -> str:
        parts: list[str] = []
        total = 0
        while total < size:
            parts.append(make(len(parts)))
            total += len(parts[-1])
        return "".join(parts)[:size]

    return text


def with_breaks(every: int, make: Callable[[int], str]) -> Callable[[int], str]:
    """`make`'s text with a line break every `every` characters."""

    def text(size: int) -> str:
        flat = make(size)
        return "\n".join(flat[i : i + every - 1] for i in range(0, len(flat), every - 1))[:size]

    return text


KEYWORDS = sorted({k for rule in rules() for k in rule.keywords})
EXAMPLES = [rule.example for rule in rules() if rule.example]

SHAPES: dict[str, Callable[[int], str]] = {
    "plain words": repeated("the quick brown fox jumps over the lazy dog "),
    "key=value, none a secret": repeated("key=abc123 "),
    "one assignment that is a secret, repeated": repeated("api_key=Zx9Qw3Er7Ty1Ui5O "),
    "assignments that are secrets, each new": each_new(
        lambda i: f"access={looks_random(16, str(i))} "
    ),
    "eyJ run": repeated("eyJ"),
    "JWT headers": repeated("eyJhbGciOiJIUzI1NiJ9."),
    "every rule's keyword": repeated(" ".join(KEYWORDS) + " "),
    "every rule's keyword, unspaced": repeated("".join(KEYWORDS)),
    "every rule's example, after a full stop": repeated(".".join(EXAMPLES) + "."),
    "every rule's example, in parentheses": repeated("".join(f"({e})" for e in EXAMPLES)),
    "tokens between commas": each_new(lambda i: f"ghp_{looks_random(36, str(i))},"),
    "key blocks never closed": repeated("-----BEGIN RSA " + "PRIVATE KEY-----"),
    "PuTTY headers, no MAC": repeated("PuTTY-User-Key-File-3: ssh-rsa "),
    "lines of 1,999 characters of keywords": with_breaks(2_000, repeated(" key token secret ")),
    "secrets between carriage returns": each_new(lambda i: f"access={looks_random(16, str(i))}\r"),
    "non-ASCII around secrets": repeated("password=Zx9Qw3Er7Ty1Ui5O İ€ß "),
    "short lines of secrets": with_breaks(
        40, each_new(lambda i: f"access={looks_random(16, str(i))} ")
    ),
}


def work(text: str) -> int:
    """The characters `find_secrets(text)` examines, from cold caches (a scan kept from
    before would make the next one cheap, and the count meaningless)."""
    secrets._line_secrets.cache_clear()
    secrets._recent_long.clear()
    secrets._rule_set()._verdicts.clear()
    before = secrets.WORK.chars
    find_secrets(text)
    return secrets.WORK.chars - before


@pytest.fixture(scope="module", autouse=True)
def warm() -> None:
    """A long-lived process's state (patterns compiled, word lists past PATTERN_AFTER), so
    that every size is scanned the same way."""
    for make in SHAPES.values():
        for _ in range(secrets.PATTERN_AFTER // 8):
            work(make(BASE))


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_scan_grows_linearly(shape: str) -> None:
    make = SHAPES[shape]
    one, four, sixteen = (work(make(BASE * n)) for n in (1, 4, 16))
    assert one >= BASE, f"{shape}: the count missed the scan ({one:,} for {BASE:,} characters)"
    assert four <= 4 * SLACK * one and sixteen <= 16 * SLACK * one, (
        f"{shape}: {one:,} characters examined for 1x, {four:,} for 4x "
        f"({four / one:.1f}x), {sixteen:,} for 16x ({sixteen / one:.1f}x): not linear"
    )


def test_a_long_line_costs_a_few_times_plain_words() -> None:
    """Linear, and with a small constant: a one-line text of secrets costs the scan a small
    multiple of the same size of plain words (each match is checked once, and its line's
    allowlists once per line, not once per match)."""
    size = BASE * 16
    plain = work(SHAPES["plain words"](size))
    for shape in ("one assignment that is a secret, repeated", "key=value, none a secret"):
        hostile = work(SHAPES[shape](size))
        assert hostile <= 10 * plain, f"{shape}: {hostile / plain:.0f}x plain words' work"
