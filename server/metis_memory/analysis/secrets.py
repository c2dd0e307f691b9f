"""Things that look like credentials. Memory goes into every system prompt, so a key
pasted into MEMORY.md leaks to every model call. The rules are data
(`secret_rules.json`: a subset of gitleaks' maintained rule set, MIT), with few false
alarms on ordinary prose; private key blocks (PEM, PuTTY) are found with string searches.

Python's `re` backtracks, so every shipped pattern is bounded and anchored at a token's
start (a run of token characters is tried once, not from each of its characters). No rule
matches across a line break, so a memory-sized text is scanned a line at a time, each line's
matches kept for the next keystroke. A longer text, or a line over 2,000 characters, is
scanned in 64 KiB windows: a hostile 4 MiB file costs a linear scan in short calls, never one
long call that holds the GIL.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class SecretMatch:
    """A suspected credential at ``text[start:end]`` (the part to redact)."""

    kind: str
    start: int
    end: int


RULES_FILE = "secret_rules.json"
"""The rules, as data: a subset of gitleaks' default rules adapted to Python (see its header)."""
WINDOW = 64 * 1024
"""Text is scanned in windows of this many characters: `re` holds the GIL for a whole call,
so no call may be long enough to stall the language server's event loop."""
OVERLAP = 4 * 1024
"""Windows overlap by this much: no rule matches more than this (every quantifier is bounded),
so a secret across a window edge is found whole in the next window."""


@dataclass(frozen=True)
class Rule:
    id: str
    kind: str
    pattern: re.Pattern[str]
    group: int
    keywords: tuple[str, ...]
    example: str
    near_miss: str

    @property
    def folds_case(self) -> bool:
        return bool(self.pattern.flags & re.IGNORECASE)


@functools.cache
def rules() -> tuple[Rule, ...]:
    """The shipped rules, compiled on first use (the server starts without them)."""
    from importlib import resources

    data = json.loads(resources.files(__package__).joinpath(RULES_FILE).read_text("utf-8"))
    return tuple(
        Rule(
            r["id"],
            r["kind"],
            re.compile(r["pattern"]),
            int(r["group"]),
            tuple(r["keywords"]),
            "".join(r["example"]),  # stored in pieces: no leak to secret scanners
            "".join(r["near_miss"]),
        )
        for r in data["rules"]
    )


_PLACEHOLDER = re.compile(
    r"(?i)^(?:\$.*|<.*|\{.*|\*+|x+|\.+|pass(?:word)?|secret|changeme|redacted.*|none|null"
    r"|true|false|example.*|your.*|dummy.*|test|todo)$"
)
_KEY_BEGIN = re.compile(r"-----BEGIN ([A-Z0-9 ]{0,40})PRIVATE KEY( BLOCK)?-----")
_PUTTY = "PuTTY-User-Key-File-"
_PUTTY_END = re.compile(r"Private-MAC: [0-9a-fA-F]{0,128}")


def find_secrets(text: str) -> list[SecretMatch]:
    """Suspected credentials in `text`, in order, without overlaps."""
    found: list[SecretMatch] = []
    if "-----BEGIN " in text:
        found.extend(_private_keys(text))
    if _PUTTY in text:
        found.extend(_putty_keys(text))
    if len(text) > LINE_SCAN_MAX_CHARS or text.count("\n") >= LINE_CACHE_SIZE // 2:
        found.extend(_scan(text, 0))
        return _merged(found)
    offset = 0
    for line in text.split("\n"):
        if len(line) > LINE_CACHE_CHARS:
            found.extend(_scan(line, offset))
        elif line:
            hits = _line_secrets(line)
            if hits:
                found.extend(SecretMatch(kind, offset + a, offset + b) for kind, a, b in hits)
        offset += len(line) + 1
    return _merged(found)


def _merged(found: list[SecretMatch]) -> list[SecretMatch]:
    """In order; of overlapping matches, the one starting first (the longest of those)."""
    found.sort(key=lambda m: (m.start, -(m.end - m.start)))
    merged: list[SecretMatch] = []
    for secret in found:
        if merged and secret.start < merged[-1].end:
            continue
        merged.append(secret)
    return merged


LINE_SCAN_MAX_CHARS = 64 * 1024
LINE_CACHE_SIZE = 4096
"""Texts up to LINE_SCAN_MAX_CHARS of fewer than half this many lines (a memory file, an
agent's rules) are scanned a line at a time with each line's matches kept; a larger one
would only churn the cache, and is scanned whole."""
LINE_CACHE_CHARS = 2_000
"""Lines up to this long are scanned once and their matches kept (a keystroke changes one
line); no rule matches across a line break, so a line alone finds what the whole text would."""


@functools.lru_cache(maxsize=LINE_CACHE_SIZE)
def _line_secrets(line: str) -> tuple[tuple[str, int, int], ...]:
    if _any_keyword().search(line.lower()) is None:
        return ()  # every rule's match holds one of its keywords: most lines hold none
    return tuple((m.kind, m.start, m.end) for m in _scan(line, 0))


@functools.cache
def _any_keyword() -> re.Pattern[str]:
    """Every rule's keywords, folded, in one pattern (a line is lowered to be searched)."""
    words = sorted({k.lower() for rule in rules() for k in rule.keywords}, key=len, reverse=True)
    return re.compile("|".join(re.escape(w) for w in words))


def _scan(text: str, base: int) -> list[SecretMatch]:
    """The rules' matches in `text` (at `base` in the file), a window at a time."""
    found: list[SecretMatch] = []
    for offset in range(0, max(len(text), 1), WINDOW):
        window = text[offset : offset + WINDOW + OVERLAP]
        lowered = window.lower()
        for rule in rules():
            haystack = lowered if rule.folds_case else window
            if any(k in haystack for k in rule.keywords):
                found.extend(_matches(rule, window, base + offset))
    return found


def _matches(rule: Rule, window: str, offset: int) -> list[SecretMatch]:
    group = rule.group
    return [
        SecretMatch(rule.kind, offset + hit.start(group), offset + hit.end(group))
        for hit in rule.pattern.finditer(window)
        if not group or _looks_secret(hit.group(group), rule)
    ]


def _looks_secret(value: str, rule: Rule) -> bool:
    """A captured value (an assignment's, a header's, a URL password): real-looking, not a
    placeholder. A URL password needs no digit (`hunter` is one); an assigned value does
    (`token = lexer` is prose), unless it is long."""
    if _PLACEHOLDER.match(value):
        return False
    if rule.id == "password-in-url":
        return len(value) >= 3
    if rule.id in ("authorization-header", "bearer-token"):
        return True
    has_digit = any(c.isdigit() for c in value)
    if len(value) < 8:
        return value.isascii() and has_digit
    return has_digit and any(c.isalpha() for c in value)


def _private_keys(text: str) -> list[SecretMatch]:
    matches: list[SecretMatch] = []
    pos = 0
    while True:
        begin = _KEY_BEGIN.search(text, pos)
        if begin is None:
            return matches
        end_marker = f"-----END {begin.group(1)}PRIVATE KEY{begin.group(2) or ''}-----"
        end = text.find(end_marker, begin.end())
        stop = len(text) if end < 0 else end + len(end_marker)
        matches.append(SecretMatch("private key", begin.start(), stop))
        if end < 0:
            return matches
        pos = stop


def _putty_keys(text: str) -> list[SecretMatch]:
    """PuTTY .ppk files: from the header to the end of the `Private-MAC` line."""
    matches: list[SecretMatch] = []
    pos = text.find(_PUTTY)
    while pos >= 0:
        mac = _PUTTY_END.search(text, pos)
        stop = len(text) if mac is None else mac.end()
        matches.append(SecretMatch("private key", pos, stop))
        pos = text.find(_PUTTY, stop)
    return matches


def redaction(match: SecretMatch) -> str:
    """What replaces a redacted secret."""
    return "[REDACTED PRIVATE KEY]" if match.kind == "private key" else "[REDACTED]"
