"""Things that look like credentials. Memory goes into every system prompt, so a key
pasted into MEMORY.md leaks to every model call; these patterns catch the common
shapes (provider API keys, tokens, private key blocks, passwords in URLs, and
``password = ...`` style assignments) with few false alarms on ordinary prose.

Every pattern is linear: no nested quantifiers, and private key blocks are found
with plain string searches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class SecretMatch:
    """A suspected credential at ``text[start:end]`` (the part to redact)."""

    kind: str
    start: int
    end: int


# (kind, pattern, group holding the secret value (0 = the whole match), literals one of
# which the text must contain for the pattern to be worth running: a cheap C-speed
# `in` check keeps a megabyte of prose from paying for a dozen regex scans).
_PATTERNS: tuple[tuple[str, re.Pattern[str], int, tuple[str, ...]], ...] = (
    ("AWS access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), 0, ("AKIA", "ASIA")),
    (
        "GitHub token",
        re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b"),
        0,
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    ("GitHub token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,255}"), 0, ("github_pat_",)),
    ("Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}"), 0, ("sk-ant-",)),
    (
        "OpenAI API key",
        re.compile(r"\bsk-(?!ant-)(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}"),
        0,
        ("sk-",),
    ),
    ("Slack token", re.compile(r"\bxox[abeprs]-[A-Za-z0-9-]{10,}"), 0, ("xox",)),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), 0, ("AIza",)),
    (
        "Stripe key",
        re.compile(r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}"),
        0,
        ("k_live_", "k_test_"),
    ),
    ("npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), 0, ("npm_",)),
    (
        "JSON web token",
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        0,
        ("eyJ",),
    ),
    (
        "password in URL",
        re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s/:@]{1,256}:([^\s/@]{1,256})@"),
        1,
        ("://",),
    ),
)
_ASSIGNMENT = re.compile(
    r"(?i)\b(?:api[_-]?key|secret(?:[_-]?key)?|access[_-]?token|auth[_-]?token"
    r"|token|passw(?:or)?d)[\"']?[ \t]*[:=][ \t]*[\"']?([A-Za-z0-9_\-./+=!@#$%^&*]{8,})"
)
_ASSIGNMENT_WORDS = ("key", "secret", "token", "passw")
"""Lower-case words one of which an assignment needs (its regex is case-insensitive)."""

_PLACEHOLDER = re.compile(
    r"(?i)^(?:\$.*|<.*|\{.*|\*+|x+|\.+|pass(?:word)?|secret|changeme|redacted.*)$"
)
_KEY_BEGIN = re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----")


def find_secrets(text: str) -> list[SecretMatch]:
    """Suspected credentials in `text`, in order, without overlaps."""
    found: list[SecretMatch] = []
    if "-----BEGIN " in text:
        found.extend(_private_keys(text))
    for kind, pattern, group, literals in _PATTERNS:
        if any(literal in text for literal in literals):
            found.extend(_matches(kind, pattern, group, text))
    lowered = text.lower()
    if any(word in lowered for word in _ASSIGNMENT_WORDS):
        found.extend(_matches("password or key assignment", _ASSIGNMENT, 1, text))
    found.sort(key=lambda m: (m.start, -(m.end - m.start)))
    merged: list[SecretMatch] = []
    for secret in found:
        if merged and secret.start < merged[-1].end:
            continue
        merged.append(secret)
    return merged


def _matches(kind: str, pattern: re.Pattern[str], group: int, text: str) -> list[SecretMatch]:
    return [
        SecretMatch(kind, hit.start(group), hit.end(group))
        for hit in pattern.finditer(text)
        if not group or _looks_secret(hit.group(group))
    ]


def _looks_secret(value: str) -> bool:
    """Values of ``key = value`` and URL passwords: real-looking, not placeholders."""
    if _PLACEHOLDER.match(value):
        return False
    if len(value) < 8:
        return value.isascii() and any(c.isdigit() for c in value) and len(value) >= 4
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


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


def redaction(match: SecretMatch) -> str:
    """What replaces a redacted secret."""
    return "[REDACTED PRIVATE KEY]" if match.kind == "private key" else "[REDACTED]"
