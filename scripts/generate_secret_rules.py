#!/usr/bin/env python3
"""Generate server/metis_memory/analysis/secret_rules.json from gitleaks' rules.

Input: gitleaks' default configuration vendored at a pinned commit
(scripts/secret_rules/gitleaks.toml, its MIT licence beside it) and our overlay
(scripts/secret_rules/local.toml: our own rules, our changes to gitleaks' with the reason
for each, and hand-written examples). Output: the rules file secrets.py reads, written
deterministically, so that `--check` (and tests/analysis/test_secret_rules_generated.py)
can tell whether the committed file is current.

Each gitleaks rule is translated from Go's RE2 syntax to Python's `re` and kept only when
Python can run it at a bounded cost on any input: every repeat bounded (a repeat of one
character with no upper bound gets one, CAP), no match longer than the scanner's window
overlap, no repeat nested in another that can match the same characters, and no match
across a line break; and a search for it costs little (check_cost: at most START_COST
character tests from one position, DISMISS_COST where a rule cannot start, no run a search
scans again from inside it), allowlist regexes being rewritten for a search (search_only).
`\\b` at a pattern's start becomes a lookbehind for a token character (a run of token
characters is tried once; Markdown's `_` before a token does not count), at its end a
lookahead for a letter or digit (past Markdown's `_`), gitleaks' "keyword = value" rules
start at their keyword (not up to 50 characters before it), and a long repeat that giving
back characters cannot help is made atomic (Python's backtracking would try each count in
turn). gitleaks' ending after a token (a space, a quote, `;`, a backtick) is widened for
prose: any character that cannot continue the token ends it, a `.` or `:` when no token
character follows (a sentence's end, not `name.json`), one or two of `/=#@$%+~_-` before
such an end (`<token>/`, `<token>--`, Markdown's closing `_`, `~~`), a URL-encoded
character (`%2C`). Every kept rule gets an example it must find, also followed by
punctuation and those characters, inside brackets and quotes, in Markdown and after CJK
text (PROSE_LINES), and a near miss it must not, checked here with the scanner itself
(secrets.py); a rule without one is listed under "dropped" with the reason, a rule that
misses its example only in prose stops the script (memory is prose: fix its ending in
local.toml), and a summary goes to stderr.

    python3 scripts/generate_secret_rules.py          # write the rules file
    python3 scripts/generate_secret_rules.py --check  # exit 1 if it is not current

Standard library only (tomllib: Python 3.11+).
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import tomllib
except ImportError:  # pragma: no cover - Python 3.10
    sys.exit("generate_secret_rules.py needs Python 3.11 or later (for tomllib)")

try:
    import re._constants as sre  # type: ignore[import-not-found,unused-ignore]
    import re._parser as sre_parse  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # pragma: no cover - before Python 3.11
    import sre_constants as sre  # type: ignore[no-redef,unused-ignore]
    import sre_parse  # type: ignore[no-redef,unused-ignore]

ROOT = Path(__file__).resolve().parent.parent
UPSTREAM = ROOT / "scripts" / "secret_rules" / "gitleaks.toml"
LOCAL = ROOT / "scripts" / "secret_rules" / "local.toml"
OUTPUT = ROOT / "server" / "metis_memory" / "analysis" / "secret_rules.json"

sys.path.insert(0, str(ROOT / "server"))
from metis_memory.analysis import secrets  # noqa: E402

UPSTREAM_COMMIT = "b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b"
SOURCE = f"https://github.com/gitleaks/gitleaks/blob/{UPSTREAM_COMMIT}/config/gitleaks.toml"
CAP = 1024
"""The bound given to a repeat of one character that has none (`+`, `*`, `{n,}`)."""
MAX_WIDTH = secrets.OVERLAP
"""No match may be longer: the scanner's windows overlap by this much."""
TOKEN = "A-Za-z0-9_-"
TOKEN_START = "(?<![A-Za-z0-9-])(?<![A-Za-z0-9-]_)"
"""Where a token can start: not after a token character, but after Markdown's `_` or `__`
(italics, bold) that does not itself follow a letter, a digit or `-` (`_<token>_`,
`__<token>__`; `a_<token>` goes on). Two lookbehinds, not three (`(?<![\\w-]__)` would keep
`a__<token>` out too): tried at every position where they begin a rule, a third cost
maxmind-license-key a quarter more on ordinary text, and one alternation of them half."""
GITLEAKS_END = r"""(?:[\x60'"\s;]|\\[nr]|$)"""
"""How gitleaks ends most tokens (152 rules): a space, a quote, `;`, a backtick, an escaped
line break, or the end of the line. In prose a token is as often followed by `.`, `,`, `)`:
each such rule misses its own example ending a sentence, so the translation widens it
(TOKEN_END)."""
CONTINUES = r"\w\-/+=%@~#$\\"
"""A class body (Python, ASCII): the characters that can continue a token (a longer one
that the rule's shape is only the start of: `abc_def`, a path, base64, `x=1`, `a@b`)."""
SOFT = r"/=#@$%+~_\-"
"""A class body: the characters of CONTINUES that are not letters, digits or a backslash.
One or two of them followed by what ends a token end it too: `<token>/ for staging`,
`<token>--`, `<token>=`, Markdown's closing `_`, `__`, `~~` (issue #39, second review: a
strikethrough hid 147 rules' examples). Followed by a token character they go on (`a/b`,
`x=1`, `user@host`, `#anchor`, `a_b`, base64's `+`)."""
HARD_END = f"[^\\n{CONTINUES}.:]|(?![^\\n])|[.:](?![\\w-])"
"""A character that cannot continue a token, the end of the line, or a `.` or `:` that no
token character follows."""
TOKEN_END = (
    f"(?:[^\\n{CONTINUES}.:]|\\\\(?:[nrt]|(?![\\w-]))|(?![^\\n])|[.:](?![\\w-])"
    f"|[{SOFT}]{{1,2}}(?:{HARD_END})|%[0-9A-Fa-f]{{2}})"
)
"""What gitleaks' ending becomes: the end of the line, or a character that cannot continue
the token (a space, a quote, a backtick, `;`, `,`, `)`, `]`, `}`, `>`, `!`, `?`, `*`, `|`,
a curly quote...), or an escape (`\\n`, `\\"`), or a `.` or `:` that no token character
follows (a sentence's or a clause's end; `name.json`, `host:8080` go on), or one or two
SOFT characters before one of those, or a URL-encoded character (`%20`, `%2C`: a separator,
encoded). Its first alternative starts with a space, as gitleaks' did (the generated
examples stay the same)."""
PIECE = 4
MIN_SECRET = 8
"""A rule whose example's secret (what gets redacted) is shorter is dropped: its capture
group does not hold the credential."""

NOTES = (
    "Generated by scripts/generate_secret_rules.py from gitleaks' default rules (`source`, "
    "`upstream_commit`; MIT, see secret_rules.LICENSE) and scripts/secret_rules/local.toml "
    "(our own rules and our changes to gitleaks', each with its reason): do not edit, "
    "regenerate. Patterns are gitleaks' translated from Go to Python `re`: flags set "
    "mid-pattern are scoped, `\\z` and `$` mean the end of the line and `^` its start, `\\s` "
    "and negated classes do not match a line break (no rule matches across lines), every "
    f"repeat of one character without a bound is bounded at {CAP} (less where a match would "
    "not fit the scanner's window overlap), and `\\b` at a pattern's start is a lookbehind for "
    "a token character (after the literal that follows it), so a run of token characters is "
    "tried once; a `_` or `__` (Markdown's italics and bold) that does not follow a letter, "
    "digit or `-` does not count; `\\b` at a rule's end after a word character is a lookahead "
    "for a letter or digit, or `_` or `__` before one. gitleaks' ending after a secret (a "
    "space, a quote, `;`, a backtick, `\\n`, the "
    "end of the line) is widened for prose: the end of the line, any character that cannot "
    "continue a token (not a letter, digit, `_-/+=%@~#$` or a backslash), an escape, or a "
    "`.` or `:` that no token character follows, or one or two of `/=#@$%+~_-` before one of "
    "those, or a URL-encoded character (`%20`), so `<token>.`, `(<token>)`, `<token>,`, "
    "`<token>/ for`, `<token>--`, `~~<token>~~`, `_<token>_` are found and `<token>.json`, "
    "`<token>:8080`, `<token>/path`, `<token>@host`, `<token>#anchor`, `<token>+more` are not "
    "(a longer token); a run of variable length that can hold `.`, `:` or one of "
    "`/=#@$%+~_-` does not end with one before it (the full stop ends the sentence, the `_` "
    "the italics), and is taken at one length where only those could be given back (the "
    "longest not ending in one, `(?=(?P<_a1>X{m-1,n-1}Y))(?P=_a1)`, Y: X but those). "
    "A repeat of one character that giving back characters cannot help (what "
    "follows cannot start with one of them) is made atomic, as `(?=(?P<_a1>X{m,n}))(?P=_a1)` "
    "(Python 3.10 has no possessive repeats); those `_a` groups never hold the secret. "
    "gitleaks' `keyword = value` rules start at their keyword: the up to 50 "
    "identifier characters gitleaks lets come before it only lengthen its match, and "
    "`prefix` says how far back the match starts where an allowlist looks at it. In the "
    "generic and assignment rules a `key` or `token` does not count right after a word of "
    "local.toml's [qualifiers] (`Idempotency key`, `next page token`: identifiers), as "
    "lookbehinds of fixed width after the keyword (tried only where it is). A rule that costs "
    "several character tests to dismiss a position it cannot start at begins with a lookahead "
    "of the characters it can start with, `(?=[...])`. Allowlist regexes are only searched "
    "for: a leading repeat of one character is cut to its least count, and an alternative "
    "`L[X]*T` (L characters of X, T what X cannot start) is tried at the start of a run of X "
    "only, `(?<![X])(?=[X]{len(L),4096}T)[X]{0,4096}?L`. Every pattern is bounded in what a "
    "search costs: at most 262,144 character tests from one position (but a regex anchored "
    "at its text's start), at most 16 where a rule cannot start, and no run a search would "
    "scan again from positions inside it (scripts/generate_secret_rules.py `check_cost`). "
    "`group` "
    "is the capture holding the secret (gitleaks' secretGroup, else its first capture that "
    "matched; 0: the whole match). `keywords` are lower-case: a rule runs only on lines that "
    "hold one. A secret whose Shannon entropy is at most `entropy` is not reported; "
    "`allowlists` (and the global `allowlist`) drop a finding whose secret, match or line "
    "matches one of their regexes, or whose secret holds one of their stop words. `check` "
    "(our rules only) names secrets.py's placeholder test for the captured value. Every rule "
    "has an `example` it must find, also followed by punctuation and inside brackets and "
    "quotes, and a `near_miss` it must not (tests/analysis), each, like "
    "any regex that holds a key-like run, stored in pieces of 4 characters to be joined, so "
    "that secret scanners (vsce's among them) do not flag this file. `dropped` lists gitleaks' "
    "rules not shipped, with the reason."
)


class Rejected(Exception):
    """A rule (or an allowlist regex) that cannot be shipped, and why."""


# ---- Go RE2 syntax -> Python re -------------------------------------------------------------

ASCII = frozenset(range(128))
WORD = frozenset(map(ord, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"))
DIGITS = frozenset(range(48, 58))
SPACE = frozenset(map(ord, "\t\n\f\r "))  # Go's \s (no \v)
NL = 10

PERL_CLASSES: dict[str, tuple[frozenset[int], bool]] = {
    "d": (DIGITS, False),
    "D": (ASCII - DIGITS, True),
    "s": (SPACE, False),
    "S": (ASCII - SPACE, True),
    "w": (WORD, False),
    "W": (ASCII - WORD, True),
}


def _span(a: str, b: str) -> frozenset[int]:
    return frozenset(range(ord(a), ord(b) + 1))


POSIX: dict[str, frozenset[int]] = {
    "alnum": _span("0", "9") | _span("A", "Z") | _span("a", "z"),
    "alpha": _span("A", "Z") | _span("a", "z"),
    "ascii": ASCII,
    "blank": frozenset(map(ord, " \t")),
    "cntrl": frozenset(range(32)) | {127},
    "digit": DIGITS,
    "graph": frozenset(range(33, 127)),
    "lower": _span("a", "z"),
    "print": frozenset(range(32, 127)),
    "punct": frozenset(c for c in range(33, 127) if not chr(c).isalnum()),
    "space": frozenset(map(ord, " \t\n\v\f\r")),
    "upper": _span("A", "Z"),
    "word": WORD,
    "xdigit": DIGITS | _span("A", "F") | _span("a", "f"),
}
CONTROL = {"a": 7, "f": 12, "t": 9, "n": 10, "r": 13, "v": 11}


@dataclass
class Tok:
    kind: str
    """lit, set, bol, eol, wordb, nonwordb, open, close, alt, quant, flags, tokend (gitleaks'
    ending, GITLEAKS_END), raw (Python text, written as it is)"""
    value: Any = None


@dataclass(frozen=True)
class CharSet:
    ascii: frozenset[int]
    nonascii: bool  # every character past ASCII too

    def without_newline(self) -> CharSet:
        return CharSet(self.ascii - {NL}, self.nonascii)


def _tokens(src: str, rule: bool = True) -> list[Tok]:
    """Go's RE2 syntax (Perl flags), as tokens; in a rule, gitleaks' ending as one."""
    out: list[Tok] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c == "\\":
            i, tok = _escape(src, i)
            out.extend(tok)
            continue
        if c == "[":
            i, cs = _class(src, i)
            out.append(Tok("set", cs))
            continue
        if rule and src.startswith(GITLEAKS_END, i):
            out.append(Tok("tokend"))
            i += len(GITLEAKS_END)
            continue
        if c == "(":
            if src.startswith("(?P<", i) or src.startswith("(?<", i):
                start = src.index("<", i) + 1
                end = src.index(">", start)
                out.append(Tok("open", ("named", src[start:end])))
                i = end + 1
            elif src.startswith("(?", i):
                m = re.compile(r"\(\?([imsU]*)(?:-([imsU]*))?([:)])").match(src, i)
                if m is None:
                    raise Rejected(f"unknown group syntax at {src[i : i + 6]!r}")
                on, off, scoped = m.group(1), m.group(2) or "", m.group(3) == ":"
                if "U" in on + off:
                    raise Rejected("ungreedy flag (?U) not translated")
                py = "i" if "i" in on else "-i" if "i" in off else ""
                out.append(Tok("open", ("flags", py)) if scoped else Tok("flags", py))
                i = m.end()
            else:
                out.append(Tok("open", ("capture", None)))
                i += 1
            continue
        if c == ")":
            out.append(Tok("close"))
        elif c == "|":
            out.append(Tok("alt"))
        elif c in "*+?":
            lazy = src.startswith("?", i + 1)
            lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
            out.append(Tok("quant", (lo, hi, lazy)))
            i += 2 if lazy else 1
            continue
        elif c == "{":
            m = re.compile(r"\{(\d+)(?:(,)(\d*))?\}").match(src, i)
            if m is None:
                out.append(Tok("lit", "{"))
            else:
                lo = int(m.group(1))
                hi = lo if m.group(2) is None else int(m.group(3)) if m.group(3) else None
                lazy = src.startswith("?", m.end())
                out.append(Tok("quant", (lo, hi, lazy)))
                i = m.end() + (1 if lazy else 0)
                continue
        elif c == ".":
            out.append(Tok("set", CharSet(ASCII - {NL}, True)))
        elif c == "^":
            out.append(Tok("bol"))
        elif c == "$":
            out.append(Tok("eol"))
        else:
            out.append(Tok("lit", c))
        i += 1
    return out


def _escape(src: str, i: int) -> tuple[int, list[Tok]]:
    if i + 1 >= len(src):
        raise Rejected("trailing backslash")
    c = src[i + 1]
    if c in PERL_CLASSES:
        chars, negated = PERL_CLASSES[c]
        return i + 2, [Tok("set", CharSet(chars, negated))]
    simple = {"A": "bol", "z": "eol", "b": "wordb", "B": "nonwordb"}
    if c in simple:
        return i + 2, [Tok(simple[c])]
    if c == "Q":
        end = src.find("\\E", i + 2)
        end = len(src) if end < 0 else end
        literal = [Tok("lit", ch) for ch in src[i + 2 : end]]
        return min(len(src), end + 2), literal
    j, ch = _char_escape(src, i)
    return j, [Tok("lit", ch)]


def _char_escape(src: str, i: int) -> tuple[int, str]:
    """A backslash escape for one character (in or out of a class)."""
    c = src[i + 1]
    if c == "x":
        if src.startswith("{", i + 2):
            end = src.index("}", i + 3)
            return end + 1, chr(int(src[i + 3 : end], 16))
        return i + 4, chr(int(src[i + 2 : i + 4], 16))
    if c in CONTROL:
        return i + 2, chr(CONTROL[c])
    if c in "pP":
        raise Rejected("Unicode classes (\\p) not translated")
    if c.isascii() and not c.isalnum():
        return i + 2, c
    raise Rejected(f"escape \\{c} not translated")


def _class(src: str, i: int) -> tuple[int, CharSet]:
    """A bracket expression, as Go parses it: `]` first is literal, `a-` is two characters,
    POSIX and Perl classes inside."""
    i += 1
    negated = src.startswith("^", i)
    if negated:
        i += 1
    chars: set[int] = set()
    nonascii = False
    first = True
    while i < len(src) and (src[i] != "]" or first):
        first = False
        m = re.compile(r"\[:(\^?)([a-z]+):\]").match(src, i)
        if m:
            if m.group(2) not in POSIX:
                raise Rejected(f"POSIX class {m.group(2)} not translated")
            named = POSIX[m.group(2)]
            if m.group(1):
                chars |= ASCII - named
                nonascii = True
            else:
                chars |= named
            i = m.end()
            continue
        if src[i] == "\\" and src[i + 1 : i + 2] in PERL_CLASSES:
            perl, wide = PERL_CLASSES[src[i + 1]]
            chars |= perl
            nonascii = nonascii or wide
            i += 2
            continue
        i, lo = _class_char(src, i)
        hi = lo
        if src.startswith("-", i) and i + 1 < len(src) and src[i + 1] != "]":
            i, hi = _class_char(src, i + 1)
        if hi < lo:
            raise Rejected("bad class range")
        for code in range(ord(lo), ord(hi) + 1):
            if code < 128:
                chars.add(code)
            else:
                nonascii = True
    if i >= len(src):
        raise Rejected("unterminated class")
    if negated:
        return i + 1, CharSet(ASCII - chars - {NL}, not nonascii)
    return i + 1, CharSet(frozenset(chars), nonascii)


def _class_char(src: str, i: int) -> tuple[int, str]:
    if src[i] == "\\":
        return _char_escape(src, i)
    return i + 1, src[i]


_CLASS_NAMED = {9: "\\t", 10: "\\n", 11: "\\x0b", 12: "\\f", 13: "\\r", 96: "\\x60"}


def _class_char_text(code: int) -> str:
    if code in _CLASS_NAMED:
        return _CLASS_NAMED[code]
    c = chr(code)
    if c.isalnum() or c in " _'\"":
        return c
    if code < 32 or code == 127:
        return f"\\x{code:02x}"
    return "\\" + c


def _class_items(chars: frozenset[int]) -> str:
    rest = set(chars)
    out = ""
    if rest >= WORD:
        out += "\\w"
        rest -= WORD
    codes = sorted(rest)
    i = 0
    while i < len(codes):
        j = i
        while (
            j + 1 < len(codes)
            and codes[j + 1] == codes[j] + 1
            and _run_kind(codes[j + 1]) == _run_kind(codes[i])
        ):
            j += 1
        if j - i >= 2 and _run_kind(codes[i]):
            out += f"{_class_char_text(codes[i])}-{_class_char_text(codes[j])}"
        else:
            out += "".join(_class_char_text(codes[k]) for k in range(i, j + 1))
        i = j + 1
    return out


def _run_kind(code: int) -> str:
    """Ranges are written within digits, upper or lower case only (`0-9`, not `/-9`)."""
    c = chr(code)
    return "0" if c.isdigit() else "A" if c.isupper() else "a" if c.islower() else ""


def _literal_text(c: str) -> str:
    code = ord(c)
    if code in _CLASS_NAMED:
        return _CLASS_NAMED[code]
    if c in ".^$*+?{}[]\\|()":
        return "\\" + c
    if code < 32 or code == 127:
        return f"\\x{code:02x}"
    return c


def _set_text(cs: CharSet, newline: bool) -> str:
    if not newline:
        cs = cs.without_newline()
    if not cs.nonascii:
        if len(cs.ascii) == 1:
            return _literal_text(chr(next(iter(cs.ascii))))
        if cs.ascii == DIGITS:
            return "\\d"
        if cs.ascii == WORD:
            return "\\w"
        if not cs.ascii:
            raise Rejected("a class that matches nothing")
        return f"[{_class_items(cs.ascii)}]"
    missing = ASCII - cs.ascii
    if missing == {NL}:
        return "."
    if not missing:
        raise Rejected("a class that matches a line break")
    return f"[^{_class_items(missing)}]"


@dataclass
class _Frame:
    origin: bool  # the group starts where a match starts
    at_start: bool  # nothing consumed in it yet, where a match starts
    repeated: bool  # it, or a group around it, is repeated
    flags: list[str] = field(default_factory=list)


@dataclass
class _Anchor:
    """A leading `\\b` waiting for what follows: a literal run gets the lookbehind after
    it (so that `re` finds the literal by its fast search), anything else before it."""

    at: int  # where in the output the lookbehind goes if no literal follows
    literal: list[str] = field(default_factory=list)


def go_to_python(src: str, *, rule: bool, cap: int = CAP) -> str:
    """`src` (Go RE2) as a Python pattern (ASCII). For a rule (not an allowlist regex):
    a repeat of a group with no upper bound is rejected, and `\\b` at the start becomes a
    token-start lookbehind (after the literal that follows it, if one does). An allowlist
    regex is only searched for (search_only)."""
    toks = _tokens(src, rule)
    if not rule:
        toks = search_only(toks)
    repeated, alternated = _group_shapes(toks)
    atomic = atomic_repeats(toks) if rule else set()
    trailing = trailing_runs(toks) if rule else set()
    # A run before the ending that would be atomic but for a `.` or `:` ending the token.
    # ... or a SOFT character: `key=abc_` is `abc` and Markdown's `_`, as the named rule
    # that finds `abc` finds it (of two findings starting at one place the longer wins).
    short_of_stops = atomic_repeats(toks, TOKEN_END_FIRST - STOPS) & trailing if rule else set()
    out: list[str] = []
    frames = [_Frame(True, True, False)]
    last = ""  # what the previous atom was: "char", "group" or "" (none, or an assertion)
    anchor: _Anchor | None = None

    def settle() -> None:
        nonlocal anchor
        if anchor is not None:
            if anchor.literal:
                lit = "".join(anchor.literal)
                out.append(f"(?<![A-Za-z0-9-]{lit})(?<![A-Za-z0-9-]_{lit})")
            else:
                out.insert(anchor.at, TOKEN_START)
            anchor = None

    for n, tok in enumerate(toks):
        frame = frames[-1]
        kind = tok.kind
        quantified = n + 1 < len(toks) and toks[n + 1].kind == "quant"
        if anchor is not None and not (
            (kind == "lit" and not quantified)
            or (kind == "flags" and not anchor.literal)
            or (kind == "open" and not anchor.literal and n not in alternated)
        ):
            settle()  # (a group of alternatives: the lookbehind goes before it, for them all)
        if kind == "flags":
            if tok.value:
                out.append(f"(?{tok.value}:")
                frame.flags.append(tok.value)
            continue
        if kind == "raw":  # Python text of search_only's (a lookaround's parentheses)
            out.append(tok.value)
            last = ""
            continue
        if kind == "open":
            what, value = tok.value
            if what == "named":
                out.append(f"(?P<{value}>")
            elif what == "flags":
                out.append(f"(?{value}:" if value else "(?:")
            else:
                out.append("(")
            frames.append(_Frame(frame.at_start, frame.at_start, frame.repeated or n in repeated))
            last = ""
            continue
        if kind == "close":
            if len(frames) == 1:
                raise Rejected("unbalanced parenthesis")
            frames.pop()
            out.append(")" * len(frame.flags) + ")")
            frames[-1].at_start = False
            last = "group"
            continue
        if kind == "alt":
            out.append(")" * len(frame.flags) + "|" + "".join(f"(?{f}:" for f in frame.flags))
            frame.at_start = frame.origin
            last = ""
            continue
        if kind == "quant":
            lo, hi, lazy = tok.value
            if not last:
                raise Rejected("a repeat of nothing")
            if hi is None:
                if last == "group" and rule:
                    raise Rejected("unbounded repeat of a group")
                if lo >= cap:
                    raise Rejected(f"a repeat of at least {lo}")
                hi = cap
            text = {(0, 1): "?"}.get((lo, hi)) or (f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}")
            helper = f"_a{sum(1 for piece in out if piece.startswith('(?=(?P<_a')) + 1}"
            last_char = _stop_free(toks[n - 1]) if n in short_of_stops and lo else ""
            if last_char and last == "char" and not lazy:
                # The longest run ending in a character that is not a stop, taken whole:
                # `key=abc.def.` is `abc.def` and a full stop, at one try, not a try from
                # each length of the run down (each testing the ending: 6 times the cost
                # on `key=key=key=...`).
                fewer = _repeat_text(lo - 1, hi - 1)
                out[-1] = f"(?=(?P<{helper}>{out[-1]}{fewer}{last_char}))(?P={helper})"
            elif n in atomic and last == "char" and (lo, hi) != (0, 1):
                out[-1] = f"(?=(?P<{helper}>{out[-1]}{text}))(?P={helper})"
            else:
                out.append(text + ("?" if lazy else ""))
                if n in trailing:
                    out.append(NO_STOP_BEFORE)
            last = ""
            continue
        if kind == "tokend":
            out.append(TOKEN_END)
            frame.at_start = False
            last = "group"
            continue
        if kind == "wordb":
            leading = rule and frame.at_start and not frame.repeated
            if leading and _starts_with_word(toks, n + 1):
                anchor = _Anchor(len(out))
            elif rule and _trailing(toks, n + 1) and _ends_with_word(toks, n - 1):
                out.append(WORD_END)
            else:
                out.append("\\b")
            continue
        if kind == "nonwordb":
            out.append("\\B")
            continue
        if kind == "bol":  # an allowlist's target is one line: `^` is its start
            out.append("(?<![^\\n])" if rule else "^")
            continue
        if kind == "eol":
            out.append("(?![^\\n])" if rule else "$")
            continue
        if kind == "lit":
            if tok.value == "\n" and rule:
                raise Rejected("matches a line break")
            out.append(_literal_text(tok.value))
            if anchor is not None:
                anchor.literal.append(out[-1])
        elif kind == "set":
            text = _set_text(tok.value, newline=not rule)
            if (
                rule
                and frame.at_start
                and not frame.repeated
                and quantified
                and toks[n + 1].value[0] == 0
            ):
                out.append(f"(?<!{text})")  # the run is tried from its start only
            out.append(text)
        frame.at_start = False
        last = "char"
    settle()
    if len(frames) != 1:
        raise Rejected("unbalanced parenthesis")
    out.append(")" * len(frames[0].flags))
    return "(?a)" + "".join(out)


# A repeat of one character X, greedy, is made atomic (`(?=(X{m,n}))\\1`, a lookahead holds
# what it took) when what follows it, past any optional repeats of one character, cannot
# start with a character X matches: giving back characters can then never let the rest
# match (an optional repeat that takes them back ends where the greedy run did, or short of
# it, where the rest cannot start), and Python would try each count in turn. gitleaks'
# `(SECRET)(?:[\x60'"\s;]|\\[nr]|$)` endings and `keyword[ \t\w.-]{0,20}[\s'"]{0,3}=` are
# the common cases.

ATOMIC_SPAN = 16
"""Shorter repeats backtrack little: they are left as they are (readable)."""
_END = -1  # the pattern ends here: the match may end
_EOL = -2  # the end of the line or text (`$`)
_UNKNOWN = frozenset(range(-2, 129))
STOPS = frozenset(map(ord, ".:"))
NO_STOP_BEFORE = "(?<![.:/=#@$%+~_\\-])"
"""After a run that ends a token (trailing_runs): its last character is not `.` or `:`, or
a SOFT one (what follows the token, not the token)."""
SOFT_SET = frozenset(map(ord, "/=#@$%+~_-"))
WORD_END = "(?![A-Za-z0-9]|__?[A-Za-z0-9]|___)"
"""gitleaks' `\\b` at a rule's end, after a word character: no letter or digit follows,
nor Markdown's `_` or `__` closing italics or bold before one."""
TOKEN_END_FIRST = frozenset(range(129)) - WORD - frozenset(map(ord, "-/+=@~#$")) | frozenset(
    {NL, _EOL}
)
"""What TOKEN_END can start with, as far as giving back a run's characters goes: any
character but those that continue a token (a backslash and `.`, `:` only before one that
does not, and `%` before two hex digits: they are counted in). The SOFT characters are left
out: giving back one of them never helps, as the run's greedy end is followed by at most
as many of them before what ends a token as any shorter count's."""


@dataclass
class _Node:
    kind: str  # char, assert, end (TOKEN_END), group, alt, seq, repeat
    items: list[_Node] = field(default_factory=list)
    chars: frozenset[int] = frozenset()
    lo: int = 1
    hi: int = 1
    quant: int = -1  # the token index of a repeat's quantifier


def _repeat_text(lo: int, hi: int) -> str:
    return {(0, 1): "?", (1, 1): ""}.get((lo, hi)) or (
        f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}"
    )


def _stop_free(tok: Tok) -> str:
    """The class of `tok` (a run's one character) without `.`, `:` and the SOFT characters,
    as Python text ("" if it has nothing else)."""
    if tok.kind == "lit":
        return "" if ord(tok.value) in STOPS | SOFT_SET else _literal_text(tok.value)
    if tok.kind != "set":
        return ""
    cs: CharSet = tok.value
    rest = CharSet(cs.ascii - STOPS - SOFT_SET, cs.nonascii)
    return _set_text(rest, newline=False) if rest.ascii or rest.nonascii else ""


def _parse(toks: list[Tok], end_first: frozenset[int] = TOKEN_END_FIRST) -> _Node:
    pos = 0

    def alternatives() -> _Node:
        nonlocal pos
        seqs = [sequence()]
        while pos < len(toks) and toks[pos].kind == "alt":
            pos += 1
            seqs.append(sequence())
        return _Node("alt", seqs)

    def sequence() -> _Node:
        nonlocal pos
        items: list[_Node] = []
        while pos < len(toks) and toks[pos].kind not in ("alt", "close"):
            tok = toks[pos]
            pos += 1
            if tok.kind == "flags":
                continue
            if tok.kind == "open":
                node = _Node("group", [alternatives()])
                pos += 1  # the close
            elif tok.kind == "lit":
                node = _Node("char", chars=_folded(frozenset({min(ord(tok.value), 128)})))
            elif tok.kind == "set":
                cs: CharSet = tok.value
                node = _Node("char", chars=_folded(cs.ascii | ({128} if cs.nonascii else set())))
            elif tok.kind == "tokend":
                node = _Node("end", chars=end_first)
            else:  # an assertion
                node = _Node(
                    "assert", chars=frozenset({NL, _EOL}) if tok.kind == "eol" else _UNKNOWN
                )
            if pos < len(toks) and toks[pos].kind == "quant":
                lo, hi, lazy = toks[pos].value
                node = _Node("repeat", [node], lo=lo, hi=-1 if lazy else (hi or CAP), quant=pos)
                pos += 1
            items.append(node)
        return _Node("seq", items)

    return alternatives()


def _folded(chars: frozenset[int]) -> frozenset[int]:
    return frozenset(_fold(set(chars)))


def _first_of(node: _Node) -> tuple[frozenset[int], bool]:
    """What a match of `node` can start with, and whether it can be empty."""
    if node.kind == "char":
        return node.chars, False
    if node.kind == "assert":
        return node.chars, node.chars is _UNKNOWN
    if node.kind == "end":
        return node.chars, False
    if node.kind == "repeat":
        first, empty = _first_of(node.items[0])
        return first, empty or node.lo == 0
    if node.kind == "alt":
        parts = [_first_of(n) for n in node.items]
        return frozenset().union(*(f for f, _ in parts)), any(e for _, e in parts)
    found: set[int] = set()  # seq, group
    for item in node.items:
        first, empty = _first_of(item)
        found |= first
        if not empty:
            return frozenset(found), False
    return frozenset(found), True


def atomic_repeats(toks: list[Tok], end_first: frozenset[int] = TOKEN_END_FIRST) -> set[int]:
    """The quantifier tokens whose repeat (of one character, greedy) can be made atomic
    (`end_first`: what gitleaks' ending, widened, can start with)."""
    found: set[int] = set()

    def visit(node: _Node, after: frozenset[int], past: frozenset[int]) -> None:
        """`after`: what can follow `node`; `past`: the same past optional repeats of one
        character."""
        if node.kind in ("alt", "group"):
            for item in node.items:
                visit(item, after, past)
        elif node.kind == "seq":
            follow, beyond = after, past
            for item in reversed(node.items):
                visit(item, follow, beyond)
                first, empty = _first_of(item)
                optional = item.kind == "repeat" and item.lo == 0 and item.items[0].kind == "char"
                beyond = beyond if optional else (first | follow if empty else first)
                follow = first | follow if empty else first
        elif node.kind == "repeat":
            body = node.items[0]
            again = _first_of(body)[0] if node.hi != 1 else frozenset()
            visit(body, after | again, after | again)
            if (
                body.kind == "char"
                and node.hi - node.lo >= ATOMIC_SPAN
                and not body.chars & past
                and _END not in past  # (where the match can end, it never gives back)
            ):
                found.add(node.quant)

    end = frozenset({_END})
    visit(_parse(toks, end_first), end, end)
    return found


def trailing_runs(toks: list[Tok]) -> set[int]:
    """The quantifier tokens of the variable repeats of one character that can hold `.`,
    `:` or a SOFT character and end just before gitleaks' ending: they must not end with one
    (NO_STOP_BEFORE; `key=abc_` ends at `abc`, as a named rule's `abc` does).
    `key=abc.def.` at a sentence's end is `abc.def` and a full stop, as `key=abc.def` is;
    taking the stop would make the finding longer than a named rule's finding of the same
    token, which then loses to it."""
    found: set[int] = set()

    def visit(node: _Node, before_end: bool) -> None:
        if node.kind in ("alt", "group"):
            for item in node.items:
                visit(item, before_end)
        elif node.kind == "seq":
            for k, item in enumerate(node.items):
                rest = node.items[k + 1 :]
                while rest and _optional_soft(rest[0]):  # (`={0,2}`: base64's padding)
                    rest = rest[1:]
                visit(item, rest[0].kind == "end" if rest else before_end)
        elif node.kind == "repeat":
            body = node.items[0]
            if (
                before_end
                and body.kind == "char"
                and node.lo != node.hi
                and body.chars & (STOPS | SOFT_SET)
            ):
                found.add(node.quant)

    visit(_parse(toks), False)
    return found


def _optional_soft(node: _Node) -> bool:
    """Whether `node` is an optional repeat of SOFT characters."""
    body = node.items[0] if node.kind == "repeat" else None
    return body is not None and node.lo == 0 and body.kind == "char" and body.chars <= SOFT_SET


def _group_shapes(toks: list[Tok]) -> tuple[set[int], set[int]]:
    """The indexes of the `open` tokens whose group is repeated, and of those whose group
    holds alternatives (at its own level)."""
    opened: list[int] = []
    repeated: set[int] = set()
    alternated: set[int] = set()
    for n, tok in enumerate(toks):
        if tok.kind == "open":
            opened.append(n)
        elif tok.kind == "alt" and opened:
            alternated.add(opened[-1])
        elif tok.kind == "close" and opened:
            start = opened.pop()
            if n + 1 < len(toks) and toks[n + 1].kind == "quant":
                repeated.add(start)
    return repeated, alternated


def _trailing(toks: list[Tok], n: int) -> bool:
    """Whether nothing but closing parentheses and the ending follow `toks[n - 1]`."""
    return all(tok.kind in ("close", "tokend") for tok in toks[n:])


def _ends_with_word(toks: list[Tok], n: int) -> bool:
    """Whether `toks[n]` (past closing parentheses and a repeat) is a word character."""
    while n >= 0 and toks[n].kind in ("close", "quant"):
        n -= 1
    return n >= 0 and _is_word(toks[n])


def _starts_with_word(toks: list[Tok], n: int) -> bool:
    while n < len(toks) and toks[n].kind in ("open", "flags"):
        n += 1
    return n < len(toks) and _is_word(toks[n])


def _is_word(tok: Tok) -> bool:
    """Whether a literal or a class matches word characters only."""
    if tok.kind == "lit":
        return ord(tok.value) in WORD
    if tok.kind == "set":
        cs: CharSet = tok.value
        return not cs.nonascii and cs.ascii <= WORD
    return False


# An allowlist regex is only asked whether it matches somewhere in its text (the secret, the
# match, the line): `re` tries it at each position in turn. What an alternative that can
# start the regex does before its first fixed character, it does from every position, and
# gitleaks' generic allowlist `[a-z0-9-]*?api[a-z0-9-]*?:jar:` (each `*` bounded at CAP)
# scanned up to 1,024 characters for `api` from each of them: 10 ms for a 1,000-character
# match, 10 s for a 1 MiB line of such assignments (issue #39). search_only rewrites such
# an alternative into one a search finds exactly where it found the original.

RUN = MAX_WIDTH
"""The longest run search_only's anchored form looks through: no text an allowlist regex is
asked about holds a longer one but a line over MAX_WIDTH characters."""


def search_only(toks: list[Tok]) -> list[Tok]:
    """`toks` (an allowlist regex) rewritten for a search, finding a match wherever they do.
    An alternative that can start the regex loses a leading repeat of one character,
    `X{m,n}Y` becoming `X{m}Y` (or `Y`: a search finds `X{m}Y` where `X{m,n}Y` matched,
    `n - m` characters on). An alternative `L X{0,n} T`, L characters that X matches and T
    what cannot start with one, holds a run of X that holds L and is followed by T: it is
    tried at the start of each run, `(?<!X)(?=X{len(L),RUN}T)X{0,RUN}?L`, once, not once
    from each L in the run (`apiapiapi...:jar:` would scan the run again from each)."""
    out: list[Tok] = []
    frames: list[tuple[bool, bool]] = []  # each open group: (leading at its start, icase before)
    leading, icase = True, False
    n = 0
    while n < len(toks):
        tok = toks[n]
        quantified = n + 1 < len(toks) and toks[n + 1].kind == "quant"
        if leading and tok.kind in ("lit", "set") and quantified:
            lo, _hi, _lazy = toks[n + 1].value
            if lo:
                out += [tok, Tok("quant", (lo, lo, False))]
                leading = False
            n += 2
            continue
        if leading and tok.kind == "lit":
            anchored = _anchored_run(toks, n, icase)
            if anchored is not None:
                out += anchored[0]
                n = anchored[1]
                leading = False
                continue
        if tok.kind == "flags":
            icase = tok.value == "i" if tok.value else icase
        elif tok.kind == "open":
            frames.append((leading and not _quantified_group(toks, n), icase))
            leading = frames[-1][0]
            what, value = tok.value
            if what == "flags" and value:
                icase = value == "i"
        elif tok.kind == "alt":  # (a flag set in the group lasts across its alternatives)
            leading = frames[-1][0] if frames else True
        elif tok.kind == "close":
            icase = frames.pop()[1] if frames else icase
            leading = False
        else:
            leading = False
        out.append(tok)
        n += 1
    return out


def _anchored_run(toks: list[Tok], n: int, icase: bool) -> tuple[list[Tok], int] | None:
    """At a leading literal `toks[n]`: the anchored form of an alternative `L X{0,k} T`
    (search_only) and the index where the alternative ends, or None if it is not one."""
    m = n
    while m < len(toks) and toks[m].kind == "lit":
        m += 1
    if m + 1 >= len(toks) or toks[m].kind != "set" or toks[m + 1].kind != "quant":
        return None
    if m + 2 < len(toks) and toks[m + 2].kind == "quant":
        return None
    lo, hi, _lazy = toks[m + 1].value
    run: CharSet = toks[m].value
    end = _alternative_end(toks, m + 2)
    if lo or (hi is not None and hi < ATOMIC_SPAN) or not _nothing_after(toks, end):
        return None
    tail = toks[m + 2 : end]
    run_chars = _fold(set(run.ascii)) if icase else set(run.ascii)
    literal = {ord(t.value) for t in toks[n:m]}
    if max(literal) >= 128 or not (_fold(literal) if icase else literal) <= run_chars:
        return None
    first, empty = _first_of(_parse(tail)) if tail else (frozenset(), True)
    if empty or min(first) < 0 or (128 in first and run.nonascii) or first & _fold(run_chars):
        return None
    anchored = [
        Tok("raw", "(?<!"),
        toks[m],
        Tok("raw", ")(?="),
        toks[m],
        Tok("quant", (m - n, RUN, False)),  # (the run holds L: at least its length)
        *tail,
        Tok("raw", ")"),
        toks[m],
        Tok("quant", (0, RUN, True)),
        *toks[n:m],
    ]
    return anchored, end


def _quantified_group(toks: list[Tok], n: int) -> bool:
    """Whether the group opened at `toks[n]` is repeated."""
    close = _group_close(toks, n + 1)
    return close + 1 < len(toks) and toks[close + 1].kind == "quant"


def _group_close(toks: list[Tok], n: int) -> int:
    """The index of the `close` ending the group that `toks[n]` is in (len: the top level)."""
    depth = 0
    for k in range(n, len(toks)):
        if toks[k].kind == "open":
            depth += 1
        elif toks[k].kind == "close":
            if not depth:
                return k
            depth -= 1
    return len(toks)


def _alternative_end(toks: list[Tok], n: int) -> int:
    """The index of the `alt` or `close` ending the alternative that `toks[n]` is in."""
    depth = 0
    for k in range(n, len(toks)):
        kind = toks[k].kind
        if kind == "open":
            depth += 1
        elif kind == "close":
            if not depth:
                return k
            depth -= 1
        elif kind == "alt" and not depth:
            return k
    return len(toks)


def _nothing_after(toks: list[Tok], k: int) -> bool:
    """Whether a match that reaches `toks[k]` (the end of an alternative) is whole: the
    group's other alternatives, then groups closing (not repeated), then the end."""
    while k < len(toks):
        kind = toks[k].kind
        if kind == "alt":
            k = _group_close(toks, k + 1)
        elif kind == "close" and not (k + 1 < len(toks) and toks[k + 1].kind == "quant"):
            k += 1
        else:
            return False
    return True


def uncaptured(src: str) -> str:
    """Every capture group of a Go pattern made non-capturing."""
    src = re.sub(r"\(\?P?<[A-Za-z_][A-Za-z0-9_]*>", "(?:", src)
    return re.sub(r"(?<!\\)\((?!\?)", "(?:", src)


# ---- what a Python pattern can do (from its parse tree) ------------------------------------

ANY = frozenset(range(129))
"""ASCII, and 128 for every character past it."""
IGNORECASE = int(re.IGNORECASE)


def _fold(codes: set[int]) -> set[int]:
    return codes | {ord(chr(c).swapcase()) for c in codes if c < 128 and chr(c).isalpha()}


def _category(name: Any) -> frozenset[int]:
    table = {
        sre.CATEGORY_DIGIT: DIGITS,
        sre.CATEGORY_NOT_DIGIT: ANY - DIGITS,
        sre.CATEGORY_SPACE: frozenset(map(ord, " \t\n\r\f\v")),
        sre.CATEGORY_NOT_SPACE: ANY - frozenset(map(ord, " \t\n\r\f\v")),
        sre.CATEGORY_WORD: WORD,
        sre.CATEGORY_NOT_WORD: ANY - WORD,
    }
    if name not in table:
        raise Rejected(f"class category {name} not analysed")
    return table[name]


def _chars(op: Any, av: Any, icase: bool) -> frozenset[int] | None:
    """The characters a one-character node matches (None: not a one-character node)."""
    if op is sre.LITERAL:
        return frozenset(_fold({min(av, 128)}) if icase else {min(av, 128)})
    if op is sre.NOT_LITERAL:
        return ANY - (_fold({av}) if icase else {av})
    if op is sre.ANY:
        return ANY - {NL}
    if op is sre.IN:
        negate = False
        codes: set[int] = set()
        for iop, iav in av:
            if iop is sre.NEGATE:
                negate = True
            elif iop is sre.LITERAL:
                codes.add(min(iav, 128))
            elif iop is sre.RANGE:
                lo, hi = iav
                codes.update(range(min(lo, 128), min(hi, 128) + 1))
            elif iop is sre.CATEGORY:
                codes |= _category(iav)
            else:
                raise Rejected(f"class item {iop} not analysed")
        if icase:
            codes = _fold(codes)
        return ANY - codes if negate else frozenset(codes)
    return None


Node = tuple[Any, Any]


def _walk(seq: Sequence[Node], icase: bool) -> Iterator[tuple[Any, Any, bool]]:
    for op, av in seq:
        yield op, av, icase
        for sub, sub_icase in _children(op, av, icase):
            yield from _walk(sub, sub_icase)


def _children(op: Any, av: Any, icase: bool) -> list[tuple[Sequence[Node], bool]]:
    if op is sre.SUBPATTERN:
        _group, add, remove, sub = av
        on = (icase or bool(add & IGNORECASE)) and not remove & IGNORECASE
        return [(sub, on)]
    if op is sre.BRANCH:
        return [(alt, icase) for alt in av[1]]
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
        return [(av[2], icase)]
    if op in (sre.ASSERT, sre.ASSERT_NOT):
        return [(av[1], icase)]
    return []


def _all_chars(seq: Sequence[Node], icase: bool, skip: object = None) -> frozenset[int]:
    found: set[int] = set()
    stack = [(seq, icase)]
    while stack:
        items, ic = stack.pop()
        for node in items:
            if node is skip:
                continue
            op, av = node
            if op in (sre.ASSERT, sre.ASSERT_NOT):
                continue
            chars = _chars(op, av, ic)
            if chars is not None:
                found |= chars
            stack.extend(_children(op, av, ic))
    return frozenset(found)


@dataclass(frozen=True)
class Verdict:
    """What the checks found in a compiled pattern."""

    max_width: int
    newline: bool
    unbounded: bool
    nested: str  # a description of the first ambiguous nested repeat, or ""


def verdict(pattern: str, *, strict: bool = True) -> Verdict:
    """Python's parse of `pattern`: how long a match can be, whether one can hold a line
    break or has an unbounded repeat, and whether a variable repeat holds another variable
    repeat that can match the same characters as the rest of its body (the shape that
    backtracks exponentially). Not `strict` (an allowlist regex, run on a short string): a
    repeat that is a direct part of the other's body passes when what follows it there (or
    the body's next round) cannot start with its characters."""
    parsed = sre_parse.parse(pattern)
    icase = bool(parsed.state.flags & IGNORECASE)
    newline = unbounded = False
    nested = ""
    for op, av, ic in _walk(parsed.data, icase):
        chars = _chars(op, av, ic)
        if chars is not None and NL in chars:
            newline = True  # (a lookaround too: it would look past the line)
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
            lo, hi, body = av
            if hi == sre.MAXREPEAT:
                unbounded = True
            if lo != hi and hi > 1 and not nested:  # `x?` runs its body once at most
                nested = _ambiguous_inner(body, ic, strict)
    return Verdict(parsed.getwidth()[1], newline, unbounded, nested)


def _first(seq: Sequence[Node], icase: bool) -> tuple[frozenset[int], bool]:
    """The characters a match of `seq` can start with, and whether it can be empty."""
    found: set[int] = set()
    for op, av in seq:
        chars = _chars(op, av, icase)
        if chars is not None:
            return frozenset(found | chars), False
        if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
            continue
        if op is sre.SUBPATTERN:
            first, empty = _first(*_children(op, av, icase)[0])
        elif op is sre.BRANCH:
            parts = [_first(alt, icase) for alt in av[1]]
            first = frozenset().union(*(f for f, _ in parts))
            empty = any(e for _, e in parts)
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
            first, empty = _first(av[2], icase)
            empty = empty or av[0] == 0
        else:
            return ANY, True
        found |= first
        if not empty:
            return frozenset(found), False
    return frozenset(found), True


def _ambiguous_inner(body: Sequence[Node], icase: bool, strict: bool) -> str:
    """A variable repeat R in the body of another is ambiguous when the rest of the body
    can match a character R matches (or is empty): a text may then split between rounds in
    exponentially many ways. Not `strict`, a direct part R of the body passes when what can
    follow it (the rest of the body, or the body's next round) cannot start with one."""
    for k, (op, av) in enumerate(body):
        if not strict and op in (sre.MAX_REPEAT, sre.MIN_REPEAT) and av[0] != av[1]:
            follow, empty = _first(body[k + 1 :], icase)
            if empty:
                follow |= _first(body, icase)[0]
            if _all_chars(av[2], icase) & follow:
                return "a variable repeat inside another that can match the same characters"
    for node in body:
        stack: list[tuple[Node, bool]] = [(node, icase)]
        while stack:
            current, ic = stack.pop()
            op, av = current
            direct = not strict and any(current is item for item in body)
            if not direct and op in (sre.MAX_REPEAT, sre.MIN_REPEAT) and av[0] != av[1]:
                inner = _all_chars(av[2], ic)
                rest = _all_chars(body, icase, skip=current)
                if not rest or inner & rest:
                    return "a variable repeat inside another that can match the same characters"
            for sub, sub_ic in _children(op, av, ic):
                stack.extend((n, sub_ic) for n in sub)
    return ""


def check_pattern(pattern: str) -> None:
    """Raise Rejected unless Python can run `pattern` at a bounded cost, line by line."""
    try:
        re.compile(pattern)
    except re.error as err:
        raise Rejected(f"does not compile in Python: {err}") from None
    v = verdict(pattern)
    if v.unbounded:
        raise Rejected("an unbounded repeat")
    if v.max_width > MAX_WIDTH:
        raise Rejected(f"a match can be {v.max_width} characters long (over {MAX_WIDTH})")
    if v.nested:
        raise Rejected(v.nested)
    if v.newline:
        raise Rejected("a match can span lines")
    check_cost(pattern, rule=True)


# ---- what a search costs (from the parse tree) -----------------------------------------------
#
# `re` searches by trying a pattern at each position in turn, backtracking. Two figures
# bound what that costs, in tests of one character (an assertion counts what it looks at):
# `start`, at one position at worst (every way the pattern could go on there tried, as when
# it fails after all), and `dismiss`, at a position where it cannot start (nearly every
# position of ordinary text). A search of n characters costs at most n * start, and n *
# dismiss where the pattern starts nowhere. Both are upper bounds: of alternatives that
# begin with different characters only those a character lets in count in full; a repeat of
# one character that giving back cannot help (what follows cannot start with one of its
# characters) goes on from one count only, each other count costing what follows a test.

START_COST = 256 * 1024
"""At most this many character tests from one position (about 2 ms of `re`). The costliest
shipped patterns bound at 121,700 (generic-api-key: keyword, spaces, operator, a value of
10 to 150 characters or of 12 to 1,024, each way tried with the ending) and 89,621
(sentry-org-token); the generic allowlist's `[a-z0-9-]{0,1024}?api[a-z0-9-]{0,1024}?:jar:`
was 2,125,941."""
DISMISS_COST = 16
"""At most this many character tests where a rule cannot start. The costliest were 13 (our
assignment rule) and 10 (gitleaks' generic rule: keywords, case-insensitive) before fast_start
made them 1; with 36 lookbehinds before `key` and `token` (a qualifier each, tried at every
position) they were 192 and 368."""
RESTART_SPAN = 64
"""A run of at least this many characters right after a pattern's leading literal must not
be able to hold that literal, unless a lookbehind keeps the pattern from starting inside it:
otherwise each of its occurrences in one run scans the run again."""
FAST_START = 4
"""A rule that costs at least this many tests to dismiss a position gets a lookahead of the
characters it can start with (fast_start), if they are at most FAST_START_CHARS: a lookahead
costs about what 3 tests do, and one that lets most characters through saves nothing."""
FAST_START_CHARS = 16
_HUGE = 10**12


@dataclass(frozen=True)
class Cost:
    start: int
    dismiss: int


@dataclass(frozen=True)
class _Next:
    """What follows a point of a pattern: the characters it can start with (_END among
    them: it can match nothing), and what failing at once costs there (its leading
    assertions, then its first character)."""

    first: frozenset[int]
    dismiss: int


_AT_END = _Next(frozenset({_END}), 0)


class _CostModel:
    def __init__(self, pattern: str) -> None:
        parsed = sre_parse.parse(pattern)
        self.data = parsed.data
        self.icase = bool(parsed.state.flags & IGNORECASE)
        self.widths = {
            av[0]: min(_HUGE, int(av[3].getwidth()[1]))
            for op, av, _ in _walk(parsed.data, False)
            if op is sre.SUBPATTERN and av[0]
        }

    def next_of(self, items: Sequence[Node], icase: bool, after: _Next) -> _Next:
        for node in reversed(items):
            after = self.node_next(node, icase, after)
        return after

    def node_next(self, node: Node, icase: bool, after: _Next) -> _Next:
        op, av = node
        chars = _chars(op, av, icase)
        if chars is not None:
            return _Next(chars, 1)
        if op is sre.AT:
            if av in (sre.AT_BEGINNING, sre.AT_BEGINNING_STRING):
                return _Next(after.first, 1)  # (at any position but the text's first)
            return _Next(after.first, 1 + after.dismiss)
        if op in (sre.ASSERT, sre.ASSERT_NOT):
            direction, body = av
            cost = self.cost(body, icase, _AT_END)[0]
            ahead = self.next_of(body, icase, _AT_END)
            if op is sre.ASSERT and direction == 1 and _END not in ahead.first:
                first = after.first & ahead.first if _END not in after.first else ahead.first
                if ahead.first <= after.first or _END in after.first:
                    return _Next(first, ahead.dismiss)
                return _Next(first, max(ahead.dismiss, cost + after.dismiss))
            return _Next(after.first, cost + after.dismiss)
        if op is sre.SUBPATTERN:
            ((body, sub_icase),) = _children(op, av, icase)
            return self.next_of(body, sub_icase, after)
        if op is sre.BRANCH:
            parts = [self.next_of(alt, icase, after) for alt in av[1]]
            return _Next(
                frozenset().union(*(p.first for p in parts)), sum(p.dismiss for p in parts)
            )
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
            lo, _hi, body = av
            inner = self.next_of(body, icase, after)
            if lo:
                return inner
            return _Next(inner.first | after.first, inner.dismiss + after.dismiss)
        if op is sre.GROUPREF:
            return _Next(ANY | after.first, 1 + after.dismiss)
        raise Rejected(f"cannot bound the cost of {op}")

    def cost(self, items: Sequence[Node], icase: bool, after: _Next) -> tuple[int, int]:
        """What trying `items` (then `after`) costs from one position, at most, and in how
        many ways at most it can end there for what follows to be tried."""
        follows: list[_Next] = []
        for node in reversed(items):
            follows.append(after)
            after = self.node_next(node, icase, after)
        total, ways = 0, 1
        for node, follow in zip(items, reversed(follows), strict=True):
            cost, more = self.node_cost(node, icase, follow)
            total = min(_HUGE, total + ways * cost)
            ways = min(_HUGE, ways * more)
        return total, ways

    def node_cost(self, node: Node, icase: bool, after: _Next) -> tuple[int, int]:
        op, av = node
        if op is sre.AT or _chars(op, av, icase) is not None:
            return 1, 1
        if op in (sre.ASSERT, sre.ASSERT_NOT):
            return self.cost(av[1], icase, _AT_END)[0], 1
        if op is sre.GROUPREF:
            return self.widths.get(av, _HUGE), 1
        if op is sre.SUBPATTERN:
            ((body, sub_icase),) = _children(op, av, icase)
            return self.cost(body, sub_icase, after)
        if op is sre.BRANCH:
            parts = [
                (self.next_of(alt, icase, after), self.cost(alt, icase, after)) for alt in av[1]
            ]
            worst_cost = worst_ways = 1
            for c in frozenset().union(*(n.first for n, _ in parts)) | {None}:
                cost = ways = 0
                for n, (full, more) in parts:
                    if c in n.first or _END in n.first:
                        cost, ways = cost + full, ways + more
                    else:
                        cost += n.dismiss
                worst_cost, worst_ways = max(worst_cost, cost), max(worst_ways, ways)
            return min(_HUGE, worst_cost), min(_HUGE, worst_ways)
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
            lo, hi, body = av
            if hi == sre.MAXREPEAT:
                return _HUGE, _HUGE
            one = _chars(body[0][0], body[0][1], icase) if len(body) == 1 else None
            if one is not None:
                if _END not in after.first and not one & after.first:
                    return hi + (hi - lo) * after.dismiss, 1  # only the longest run goes on
                return hi, hi - lo + 1
            inner = self.next_of(body, icase, after)
            again = _Next(inner.first | after.first, inner.dismiss + after.dismiss)
            cost, more = self.cost(body, icase, again)
            total = ways = 0
            for k in range(hi + 1):
                reach = min(_HUGE, more**k)
                if k < hi:
                    total = min(_HUGE, total + reach * cost)
                if k >= lo:
                    ways = min(_HUGE, ways + reach)
                if reach >= _HUGE:
                    break
            return total, ways
        raise Rejected(f"cannot bound the cost of {op}")


def search_cost(pattern: str) -> Cost:
    """What a search for `pattern` costs at one position: at worst, and where it cannot
    start."""
    model = _CostModel(pattern)
    return Cost(
        model.cost(model.data, model.icase, _AT_END)[0],
        model.next_of(model.data, model.icase, _AT_END).dismiss,
    )


def leading_run(pattern: str) -> str:
    """What makes `pattern` scan a run again from positions inside it: a repeat of one
    character, of more than ATOMIC_SPAN counts, where the pattern starts (a search tries it
    from each position of a run), or of RESTART_SPAN right after a leading literal it can
    hold (from each occurrence of the literal in a run), unless a lookbehind before it rules
    out the run's characters before the start. "" if there is none."""
    parsed = sre_parse.parse(pattern)
    icase = bool(parsed.state.flags & IGNORECASE)
    return _leading_run([(node, icase) for node in parsed.data], frozenset(), None)


def _leading_run(
    items: list[tuple[Node, bool]], guard: frozenset[int], literal: frozenset[int] | None
) -> str:
    """`items` from where a match starts, each with its case flag; `guard`: characters a
    lookbehind rules out before the start; `literal`: the characters of the leading literal
    so far (None: no literal yet)."""
    for k, ((op, av), icase) in enumerate(items):
        rest = items[k + 1 :]
        if op is sre.ASSERT_NOT and av[0] == -1 and len(av[1]) == 1:
            one = _chars(av[1][0][0], av[1][0][1], icase)
            guard = guard | one if one is not None else guard
            continue
        if op is sre.AT and av in (sre.AT_BEGINNING, sre.AT_BEGINNING_STRING):
            return ""  # (tried at the text's start only)
        if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
            continue
        chars = _chars(op, av, icase)
        if chars is not None:
            if len(chars) > 2:  # (a literal, folded: `k` or `[Kk]`)
                return ""
            literal = (literal or frozenset()) | chars
            continue
        if op is sre.SUBPATTERN:
            ((body, sub_icase),) = _children(op, av, icase)
            return _leading_run([(n, sub_icase) for n in body] + rest, guard, literal)
        if op is sre.BRANCH:
            for alt in av[1]:
                found = _leading_run([(n, icase) for n in alt] + rest, guard, literal)
                if found:
                    return found
            return ""
        if op not in (sre.MAX_REPEAT, sre.MIN_REPEAT):
            return ""
        lo, hi, body = av
        one = _chars(body[0][0], body[0][1], icase) if len(body) == 1 else None
        if one is None or one <= guard:
            return ""
        if literal is None and hi - lo > ATOMIC_SPAN:
            return f"a repeat of {{{lo},{hi}}} where the pattern starts: tried from each position"
        if literal and hi - lo >= RESTART_SPAN and literal <= one and _must_go_on(rest):
            return (
                f"a repeat of {{{lo},{hi}}} after a leading literal it can hold: scanned again"
                " from each of the literal's occurrences in a run"
            )
        if literal is not None or lo:
            return ""
    return ""


def _must_go_on(items: list[tuple[Node, bool]]) -> bool:
    """Whether a match must match a character more after `items`' start (it can fail there,
    after a run: a match that reaches its end succeeds, and the search goes on past it)."""
    for (op, av), icase in items:
        if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
            continue
        if not _first([(op, av)], icase)[1]:
            return True
    return False


def check_cost(pattern: str, *, rule: bool) -> None:
    """Raise Rejected if a search for `pattern` (a rule's or an allowlist regex) can cost
    much from one position, or scan a run again from positions inside it, or (a rule's,
    searched on every line holding one of its keywords) cost more than a few tests where it
    cannot start. An allowlist regex is searched only in what a rule found (its secret, its
    match, its line), once per text; gitleaks' generic one, 29 alternatives, costs 45 tests a
    position (0.35 ms a 1,000-character match). A regex anchored at the start of its text (`^`, an
    allowlist's on the secret: `^\\$\\{\\{ *env...`) is tried at one position of a
    short text, the same few times: its cost from there is not multiplied by the text's
    length, and the model bounds it loosely (it counts each way of splitting a text between
    two repeats as a way of going on, as one would in `(a|b)*`)."""
    cost = search_cost(pattern)
    if cost.start > START_COST and not _anchored_at_start(pattern):
        raise Rejected(
            f"a search can cost {cost.start:,} character tests from one position"
            f" (over {START_COST:,})"
        )
    if rule and cost.dismiss > DISMISS_COST:
        raise Rejected(
            f"a search costs {cost.dismiss} character tests where it cannot start"
            f" (over {DISMISS_COST})"
        )
    run = leading_run(pattern)
    if run:
        raise Rejected(run)


def _anchored_at_start(pattern: str) -> bool:
    """Whether every match of `pattern` starts at the start of the text (`^`, no MULTILINE)."""
    parsed = sre_parse.parse(pattern)
    if parsed.state.flags & re.MULTILINE:
        return False

    def anchored(items: Sequence[Node]) -> bool:
        for op, av in items:
            if op is sre.AT:
                return av in (sre.AT_BEGINNING, sre.AT_BEGINNING_STRING)
            if op is sre.SUBPATTERN:
                return anchored(av[3])
            if op is sre.BRANCH:
                return all(anchored(alt) for alt in av[1])
            if op not in (sre.ASSERT, sre.ASSERT_NOT):
                return False
        return False

    return anchored(parsed.data)


def fast_start(pattern: str) -> str:
    """`pattern` with a lookahead of the characters it can start with, case-sensitive, if it
    costs FAST_START tests or more to dismiss a position: `re` skips a position whose first
    character cannot start a match without trying the pattern's alternatives (gitleaks'
    generic rule, nine keywords case-insensitive, costs half as much a line). Not for a
    pattern `re` finds by a literal prefix: the lookahead would hide it."""
    if search_cost(pattern).dismiss < FAST_START:
        return pattern
    parsed = sre_parse.parse(pattern)
    icase = bool(parsed.state.flags & IGNORECASE)
    first, empty = _first(parsed.data, icase)
    if empty or not first <= ASCII or len(first) > FAST_START_CHARS:
        return pattern
    flags = re.match(r"(?:\(\?[aiLmsux]+\))*", pattern)
    at = flags.end() if flags else 0
    return f"{pattern[:at]}(?=[{_class_items(first)}]){pattern[at:]}"


# ---- examples ---------------------------------------------------------------------------------


class Rng:
    """A small deterministic generator (the same examples on every Python)."""

    def __init__(self, seed: str) -> None:
        self.seed = seed
        self.n = 0

    def below(self, n: int) -> int:
        self.n += 1
        digest = hashlib.sha256(f"{self.seed}/{self.n}".encode()).digest()
        return int.from_bytes(digest[:8], "big") % n


CONTEXT_PREFERENCE = " =:'\"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_-./"


class Sample:
    """A string a pattern matches, built from its parse tree: repeats at their least outside
    the secret, the first alternative of each branch (or `branch`'s), and inside the secret
    group random characters, none repeated until the class is used up (high entropy)."""

    def __init__(self, rng: Rng, secret_group: int, branch: int) -> None:
        self.rng = rng
        self.secret_group = secret_group
        self.branch = branch
        self.text: list[str] = []
        self.secret: tuple[int, int] | None = None
        self.pools: dict[frozenset[int], list[int]] = {}
        self.captured: dict[int, str] = {}

    def build(self, pattern: str) -> tuple[str, tuple[int, int]]:
        parsed = sre_parse.parse(pattern)
        whole = self.secret_group == 0
        self.seq(parsed.data, whole)
        text = "".join(self.text)
        return text, self.secret or (0, len(text))

    def seq(self, items: Sequence[Node], secret: bool) -> None:
        for op, av in items:
            self.node(op, av, secret)

    def node(self, op: Any, av: Any, secret: bool) -> None:
        chars = _chars(op, av, False)
        if chars is not None:
            self.text.append(self.char(chars - {NL, 128}, secret))
        elif op is sre.SUBPATTERN:
            group = av[0]
            start = len("".join(self.text))
            if group is not None and group == self.secret_group and self.secret is None:
                self.seq(av[3], True)
                self.secret = (start, len("".join(self.text)))
            else:
                self.seq(av[3], secret)
            if group is not None:
                self.captured[group] = "".join(self.text)[start:]
        elif op is sre.ASSERT and av[0] == 1 and av[1][0][0] is sre.SUBPATTERN:
            # a lookahead holding an atomic repeat's group (fast_start's holds none)
            kept = self.text
            self.text = []
            self.seq(av[1], secret)
            self.text = kept
        elif op is sre.GROUPREF:
            self.text.append(self.captured[av])
        elif op is sre.BRANCH:
            alternatives = av[1]
            self.seq(alternatives[min(self.branch, len(alternatives) - 1)], secret)
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
            lo, hi, body = av
            count = lo
            if secret and lo != hi:
                single = _chars(body[0][0], body[0][1], False) if len(body) == 1 else None
                if single is not None and len(single & ASCII) >= 10:
                    count = max(lo, min(hi, 24))
            for _ in range(count):
                self.seq(body, secret)
        elif op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
            pass  # lookbehinds, negative lookaheads: the scanner checks the example
        else:
            raise Rejected(f"cannot build an example through {op}")

    def char(self, chars: frozenset[int], secret: bool) -> str:
        if not chars:
            raise Rejected("cannot build an example: a class with no ASCII character")
        if len(chars) > 90:
            return "."  # a wildcard: in gitleaks' patterns mostly an unescaped dot
        alnum = frozenset(c for c in chars if chr(c).isalnum())
        if secret and alnum:
            pool = self.pools.setdefault(alnum, [])
            if not pool:
                pool.extend(sorted(alnum))
                for i in range(len(pool) - 1, 0, -1):  # Fisher-Yates
                    j = self.rng.below(i + 1)
                    pool[i], pool[j] = pool[j], pool[i]
            return chr(pool.pop())
        for c in CONTEXT_PREFERENCE:
            if ord(c) in chars:
                return c
        printable = [c for c in chars if 32 <= c < 127]
        if not printable:
            raise Rejected("cannot build an example: a class with no printable character")
        return chr(min(printable))


def pieces(text: str) -> list[str]:
    return [text[i : i + PIECE] for i in range(0, len(text), PIECE)]


EXAMPLE_LINE = "- note: {} (keep out of prompts)\n"
NEAR_MISS_LINE = "- note: {} (fine)\n"


def example_works(
    rule_set: secrets.RuleSet, rule: secrets.Rule, example: str, min_secret: int = MIN_SECRET
) -> bool:
    """As tests/analysis/test_secrets.py checks it: one finding, of the rule's kind, and the
    rule's own secret at least `min_secret` characters long."""
    text = EXAMPLE_LINE.format(example)
    found = secrets.find_secrets_with(rule_set, text)
    if [m.kind for m in found] != [rule.kind]:
        return False
    alone = secrets.RuleSet((rule,), rule_set.allowlist).scan(text)
    return len(alone) == 1 and alone[0].end - alone[0].start >= min_secret


PROSE_MARKS = ".,)]>!:?}"
PROSE_WRAPS = (("(", ")"), ('"', '"'), ("'", "'"), ("`", "`"))
SOFT_MARKS = ("/", "--", "-", "=", "==", "#", "@", "$", "%", "~", "~~", "_", "__", "+")
"""SOFT characters after a token, one or two, before a space or the line's end."""
MARKDOWN_AND_UNICODE = (
    "- The old key ~~{}~~\n",
    "- The old key ~~{}~~ (revoked in June).\n",
    "- Staging uses _{}_\n",
    "- Staging uses _{}_, rotated.\n",
    "- Staging uses __{}__ (rotated).\n",
    "- Staging uses **{}** (rotated).\n",
    "| staging | {} | prod |\n",
    "|staging|{}|\n",
    "- see [{}](https://wiki.acme.dev/keys)\n",
    "- <{}>\n",
    "- 测试密钥是{}。\n",
    "- 密钥{}，不要提交\n",
    "- 密钥{}、別の\n",
    "- 密钥（{}）\n",
    "- 密钥「{}」\n",
    "- clé «{}»\n",
    "- The key \u201c{}\u201d is staging\n",
    "- The key \u2018{}\u2019 is staging\n",
    "- key\u00a0{}\n",
    "- key\u3000{}\u3000ok\n",
)
"""Markdown (strikethrough, italics and bold, a table's cell, a link's text, an autolink)
and non-ASCII text (CJK letters and punctuation, guillemets, curly quotes, a no-break or
ideographic space) around a token."""
PROSE_LINES = (
    *(f"- note: {{}}{mark}\n" for mark in PROSE_MARKS),
    *(f"- note: {{}}{mark} and more\n" for mark in PROSE_MARKS),
    *(f"- note: {a}{{}}{b}\n" for a, b in PROSE_WRAPS),
    *(f"- note: {a}{{}}{b} and more\n" for a, b in PROSE_WRAPS),
    *(f"- note: {{}}{mark}\n" for mark in (*SOFT_MARKS, "%20")),
    *(f"- note: {{}}{mark} and more\n" for mark in (*SOFT_MARKS, "%2C")),
    *MARKDOWN_AND_UNICODE,
)
"""A token as memory holds it, in prose (`{}` is the example): followed by what ends a
sentence or a clause or closes a bracket, at the end of the line and before more words,
inside brackets, quotes and backticks, followed by one or two SOFT characters or a
URL-encoded one, and in Markdown and non-ASCII text (MARKDOWN_AND_UNICODE). Every kept rule
must find its example in each, and no rule its near miss (tests/analysis/test_secrets.py
checks the shipped file the same way with its own lines). Not guaranteed, as a longer token
(what the ending reads as going on): `<token>.json`, `<token>+more`, `<token>@host`,
`<token>#anchor`, `<token>/path`, `<token>=value`."""


def prose_misses(rule_set: secrets.RuleSet, rule: secrets.Rule, example: str) -> list[str]:
    """The prose lines in which `example` is not found as in EXAMPLE_LINE: one finding, of
    the rule's kind, starting at the same place in the example (or up to two `_` before it:
    Markdown's, taken by a run that can hold it), as long or a character longer (a secret
    that may hold the mark itself: a password's `!`), or as many more as the SOFT characters
    (at most two) or the URL-encoded one that follow it (a run that can hold them)."""
    plain = EXAMPLE_LINE.format(example)
    (found,) = secrets.find_secrets_with(rule_set, plain)
    start, size = found.start - plain.index(example), found.end - found.start
    missed = []
    for line in PROSE_LINES:
        text = line.replace("{}", example)
        at = text.index(example) + start
        after, before = text[at + size :], text[:at]
        soft = re.match(r"%[0-9A-Fa-f]{2}|[/=#@$%+~_-]{1,2}", after)
        more_after = max(1, len(soft.group()) if soft else 0)
        more_before = min(2, len(before) - len(before.rstrip("_")))
        hits = secrets.find_secrets_with(rule_set, text)
        if not (
            len(hits) == 1
            and hits[0].kind == rule.kind
            and at - more_before <= hits[0].start <= at
            and at + size <= hits[0].end <= at + size + more_after
        ):
            missed.append(line.replace("{}", "<example>").strip())
    return missed


def near_miss_works(rule_set: secrets.RuleSet, near_miss: str) -> bool:
    """No rule finds the near miss, plainly or in prose."""
    return bool(near_miss) and not any(
        secrets.find_secrets_with(rule_set, line.replace("{}", near_miss))
        for line in (NEAR_MISS_LINE, *PROSE_LINES)
    )


def _min_width(pattern: str, group: int) -> int:
    parsed = sre_parse.parse(pattern)
    if not group:
        return int(parsed.getwidth()[0])
    for op, av, _ in _walk(parsed.data, False):
        if op is sre.SUBPATTERN and av[0] == group:
            return int(av[3].getwidth()[0])
    return 1


def candidate_examples(entry: dict[str, Any]) -> Iterator[tuple[str, list[str]]]:
    """Examples to try, each with near misses to try: the bare match, then the match after
    its keyword (for rules whose keyword is context, not part of the match)."""
    pattern, group = entry["pattern"], entry["group"]
    lead = entry["keywords"][0] if entry["keywords"] else ""
    for attempt in range(6):
        sample = Sample(Rng(f"{entry['id']}/{attempt}"), group, attempt // 2)
        try:
            text, (a, b) = sample.build(pattern)
        except Rejected:
            return
        secret = text[a:b]
        short = max(1, _min_width(pattern, group) - 1)
        misses = [
            text[:a] + secret[: min(short, len(secret) - 1)] + text[b:],
            text[:a] + "${" + entry["id"].upper().replace("-", "_") + "}" + text[b:],
        ]
        misses = [m.strip() for m in misses]
        bare = text.strip()
        if attempt % 2 == 0:
            yield bare, misses
        else:
            yield f"{lead}: {bare}", [f"{lead}: {m}" for m in misses]


# ---- the rules -----------------------------------------------------------------------------

KINDS = {
    "aws-access-token": "AWS access key",
    "aws-amazon-bedrock-": "Amazon Bedrock API key",
    "anthropic-": "Anthropic API key",
    "openai-api-key": "OpenAI API key",
    "gcp-api-key": "Google API key",
    "github-": "GitHub token",
    "gitlab-": "GitLab token",
    "slack-webhook-url": "Slack webhook",
    "slack-": "Slack token",
    "stripe-": "Stripe key",
    "jwt": "JSON web token",
    "jwt-base64": "JSON web token",
    "generic-api-key": "password or key assignment",
    "huggingface-": "Hugging Face token",
    "npm-access-token": "npm token",
    "pypi-upload-token": "PyPI token",
    "sendgrid-api-token": "SendGrid key",
    "digitalocean-": "DigitalOcean token",
    "shopify-": "Shopify token",
    "private-key": "private key",
    "1password-": "1Password secret",
    "azure-ad-client-secret": "Azure AD client secret",
    "cisco-meraki-api-key": "Cisco Meraki API key",
    "sourcegraph-access-token": "Sourcegraph token",
    "flutterwave-": "Flutterwave key",
    "telegram-bot-api-token": "Telegram bot token",
    "twitter-": "Twitter token",
    "facebook-": "Facebook token",
    "heroku-": "Heroku API key",
    "notion-api-token": "Notion API token",
    "kubernetes-secret-yaml": "Kubernetes secret",
    "age-secret-key": "age secret key",
    "clickhouse-cloud-api-secret-key": "ClickHouse Cloud API key",
    "hashicorp-tf-api-token": "Terraform API token",
    "sidekiq-sensitive-url": "Sidekiq URL with credentials",
    "sentry-": "Sentry token",
}
_NAMES = {
    "api": "API",
    "Droneci": "Drone CI",
    "Freshbooks": "FreshBooks",
    "Kucoin": "KuCoin",
    "Launchdarkly": "LaunchDarkly",
    "Nytimes": "New York Times",
    "Readme": "ReadMe",
    "Rubygem": "RubyGems",
}
"""Names as their owners spell them, where gitleaks' descriptions do not."""
"""Kinds for the common rules (an id, or a prefix ending in "-"); the others' come from
gitleaks' description. A kind is shown to users ("looks like a GitHub token")."""
_LOWER_WORDS = {
    "Access",
    "Account",
    "Agent",
    "App",
    "Application",
    "Authentication",
    "Batch",
    "Bot",
    "Client",
    "Configuration",
    "Cookie",
    "Custom",
    "Delivery",
    "Encryption",
    "Feed",
    "Identity",
    "Ingest",
    "Insert",
    "Key",
    "Keys",
    "Legacy",
    "License",
    "Organization",
    "Password",
    "Personal",
    "Pipeline",
    "Private",
    "Public",
    "Publishable",
    "Refresh",
    "Registration",
    "Runner",
    "Secret",
    "Service",
    "Session",
    "Signing",
    "Token",
    "Trigger",
    "User",
    "Web",
    "Webhook",
    "Workspace",
}


def kind_of(rule_id: str, description: str) -> str:
    for key, kind in KINDS.items():
        if rule_id == key or (key.endswith("-") and rule_id.startswith(key)):
            return kind
    d = description.strip()
    d = re.sub(r"^(?:Uncovered|Identified|Detected|Discovered|Found)\s+", "", d)
    d = re.sub(r"^a pattern (?:that )?(?:resembles|resembling|may indicate)\s+", "", d)
    d = re.sub(r"^(?:an?|the)\s+", "", d)
    d = re.sub(r"^(?:possible|potential)\s+", "", d)
    d = re.split(r",|\.(?:\s|$)| which | that | posing | risking | potentially ", d)[0]
    d = re.sub(r"\s*\([^)]*\)", "", d).replace("AccessToken", "access token")
    words = d.split()
    words = [_NAMES.get(w, w) for w in words]
    kind = " ".join([words[0]] + [w.lower() if w in _LOWER_WORDS else w for w in words[1:]])
    if not kind or len(kind) > 40:
        raise Rejected(f"no short kind in the description {description!r}")
    return kind


def _allowlists(raw: Sequence[dict[str, Any]], notes: list[str]) -> list[dict[str, Any]]:
    out = []
    for a in raw:
        if a.get("paths") and (
            a.get("condition") == "AND" or not (a.get("regexes") or a.get("stopwords"))
        ):
            notes.append("an allowlist by file path (never a memory file's) left out")
            continue
        regexes = []
        for r in a.get("regexes", ()):
            try:
                py = go_to_python(r, rule=False)
                re.compile(py)
                nested = verdict(py, strict=False).nested
                if nested:
                    raise Rejected(nested)
                check_cost(py, rule=False)
            except Rejected as why:
                notes.append(f"allowlist regex {r!r} left out: {why}")
                continue
            regexes.append(py.removeprefix("(?a)"))
        entry: dict[str, Any] = {}
        if regexes:
            entry["target"] = a.get("regexTarget") or "secret"
            entry["regexes"] = [_stored(r) for r in regexes]
        if a.get("stopwords"):
            entry["stopwords"] = sorted({w.lower() for w in a["stopwords"]})
        if entry:
            out.append(entry)
    return out


def _stored(regex: str) -> str | list[str]:
    """A regex holding a run that could pass for a key, in pieces."""
    return pieces(regex) if re.search(r"[A-Za-z0-9_-]{16,}", regex) else regex


def _secret_group(pattern: str, secret_group: int) -> int:
    """gitleaks' secretGroup (or its first group) among the pattern's own groups, not
    the atomic repeats' (named `_a1`...)."""
    compiled = re.compile(pattern)
    helpers = {n for name, n in compiled.groupindex.items() if name.startswith("_")}
    own = [n for n in range(1, compiled.groups + 1) if n not in helpers]
    if secret_group:
        return own[secret_group - 1]
    return own[0] if own else 0


def _apply_tweak(raw: dict[str, Any], tweak: dict[str, Any]) -> dict[str, Any]:
    raw = dict(raw)
    regex = raw["regex"]
    for old, new in tweak.get("replace", ()):
        if old not in regex:
            raise SystemExit(f"local.toml: tweak of {raw['id']}: {old!r} not in its pattern")
        regex = regex.replace(old, new)
    if tweak.get("uncapture"):
        regex = uncaptured(regex)
    raw["regex"] = regex
    raw["keywords"] = list(raw.get("keywords", ())) + list(tweak.get("add_keywords", ()))
    raw["allowlists"] = list(raw.get("allowlists", ())) + list(tweak.get("add_allowlists", ()))
    drop = set(tweak.get("drop_allowlist_regexes", ()))
    if drop:
        allowlists = []
        for a in raw.get("allowlists", ()):
            kept = [r for r in a.get("regexes", ()) if r not in drop]
            drop -= set(a.get("regexes", ()))
            a = dict(a, regexes=kept)
            if kept or a.get("stopwords") or a.get("paths"):
                allowlists.append(a)
        if drop:
            raise SystemExit(f"local.toml: tweak of {raw['id']}: {sorted(drop)} not found")
        raw["allowlists"] = allowlists
    return raw


def _escaped(text: str) -> str:
    """`text` as `re.sub`'s replacement template (backslashes kept)."""
    return text.replace("\\", "\\\\")


def qualified(pattern: str, keywords: Sequence[str], words: Sequence[str]) -> str:
    """`pattern` (Python) with each of `keywords`, where it is a whole alternative of a group,
    not counted right after one of `words` (the qualifiers in local.toml: `Idempotency key`,
    `next page token` name an identifier, not a credential), with a space, `_`, `-` or `.`
    between or nothing. As lookbehinds, one per length of word: `re`'s are of fixed width.
    They come after the keyword and look back over it too: `re` tries them only where the
    keyword is, not at every position of every line (36 lookbehinds before `key` and `token`
    made the generic rule 6 times as slow on ordinary text, issue #39). The pattern can
    still match at another keyword (`public access token: ...` is found at `token`)."""
    by_length: dict[int, list[str]] = {}
    for word in sorted({w.lower() for w in words}):
        by_length.setdefault(len(word), []).append(re.escape(word))
    for keyword in keywords:
        own = re.escape(keyword)
        behind = "".join(
            f"(?<!(?i:{'|'.join(alts)}){own})(?<!(?i:{'|'.join(alts)})[\\t _.-]{own})"
            for _, alts in sorted(by_length.items())
        )
        pattern, count = re.subn(rf"(?<=[(|:]){own}(?=[|)])", rf"\g<0>{_escaped(behind)}", pattern)
        if not count:
            raise SystemExit(f"local.toml: `qualified` {keyword!r} is not in {pattern!r}")
    return pattern


IDENTIFIER_PREFIX = re.compile(r"^(\(\?i\))?\[\\w\.-\]\{0,50\}\?(\(\?i:\[\\w\.-\]\{0,50\}\?)?")
"""gitleaks' `keyword = value` rules start with up to 50 identifier characters before the
keyword (twice in a few), lazily: they only lengthen the reported match."""


def without_identifier_prefix(regex: str) -> tuple[str, int]:
    """A `keyword = value` rule's Go pattern starting at its keyword, and how many
    identifier characters gitleaks' match may start before it."""
    m = IDENTIFIER_PREFIX.match(regex)
    if m is None:
        return regex, 0
    head = (m.group(1) or "") + ("(?i:" if m.group(2) else "")
    return head + regex[m.end() :], 100 if m.group(2) else 50


def _upstream_rule(raw: dict[str, Any]) -> dict[str, Any]:
    if "regex" not in raw:
        raise Rejected("a rule on file names only (no pattern for text)")
    if raw.get("path"):
        raise Rejected(f"applies only to files named like {raw['path']} (not memory files)")
    notes: list[str] = []
    regex, prefix = without_identifier_prefix(raw["regex"])
    for cap in (CAP, CAP // 2, CAP // 4, CAP // 8):  # bounds that let a match fit OVERLAP
        pattern = go_to_python(regex, rule=True, cap=cap)
        try:
            check_pattern(pattern)
            break
        except Rejected as why:
            if "characters long" not in str(why) or cap == CAP // 8:
                raise
    keywords = list(dict.fromkeys(k.lower() for k in raw.get("keywords", ())))
    if not keywords:
        raise Rejected("no keywords (every shipped rule runs only where its keywords are)")
    entry: dict[str, Any] = {
        "id": raw["id"],
        "kind": kind_of(raw["id"], raw.get("description", "")),
        "pattern": pattern,
        "group": _secret_group(pattern, int(raw.get("secretGroup", 0))),
        "keywords": keywords,
    }
    if raw.get("entropy"):
        entry["entropy"] = float(raw["entropy"])
    allowlists = _allowlists(raw.get("allowlists", ()), notes)
    if allowlists:
        entry["allowlists"] = allowlists
        if prefix and any(a.get("target") == "match" for a in allowlists):
            entry["prefix"] = prefix
    if notes:
        entry["notes"] = notes
    return entry


def _local_rule(raw: dict[str, Any], qualifiers: Sequence[str]) -> dict[str, Any]:
    pattern = raw["pattern"]
    if raw.get("qualified"):
        pattern = qualified(pattern, raw["qualified"], qualifiers)
    check_pattern(pattern)
    entry: dict[str, Any] = {
        "id": raw["id"],
        "kind": raw["kind"],
        "pattern": pattern,
        "group": int(raw.get("group", 0)),
        "keywords": [k.lower() for k in raw["keywords"]],
    }
    if raw.get("entropy"):
        entry["entropy"] = float(raw["entropy"])
    if raw.get("check"):
        entry["check"] = raw["check"]
    notes: list[str] = []
    allowlists = _allowlists(raw.get("allowlists", ()), notes)
    if notes:
        raise Rejected("; ".join(notes))
    if allowlists:
        entry["allowlists"] = allowlists
    entry["local"] = raw["reason"]
    return entry


def generate(upstream_text: str, local_text: str) -> tuple[dict[str, Any], list[str]]:
    """The rules file's data from gitleaks' configuration and our overlay, and a log."""
    upstream = tomllib.loads(upstream_text)
    local = tomllib.loads(local_text)
    log: list[str] = []
    tweaks = {t["id"]: t for t in local.get("tweaks", ())}
    qualifiers = local.get("qualifiers", {}).get("words", ())
    drops = {d["id"]: d["reason"] for d in local.get("drop", ())}
    examples = local.get("examples", {})
    upstream_ids = {r["id"] for r in upstream["rules"]}
    for rule_id in list(tweaks) + list(drops):
        if rule_id not in upstream_ids:
            raise SystemExit(f"local.toml names {rule_id}, which gitleaks no longer has")

    entries: list[dict[str, Any]] = []
    dropped: list[dict[str, str]] = []
    for raw in upstream["rules"]:
        rule_id = raw["id"]
        if rule_id in drops:
            dropped.append({"id": rule_id, "reason": drops[rule_id]})
            continue
        try:
            if rule_id in tweaks:
                raw = _apply_tweak(raw, tweaks[rule_id])
            entry = _upstream_rule(raw)
            if rule_id in tweaks:
                entry["tweak"] = tweaks[rule_id]["reason"]
                if tweaks[rule_id].get("qualified"):
                    entry["pattern"] = qualified(
                        entry["pattern"], tweaks[rule_id]["qualified"], qualifiers
                    )
                    check_pattern(entry["pattern"])
        except Rejected as why:
            dropped.append({"id": rule_id, "reason": str(why)})
            continue
        same = next((e["id"] for e in entries if e["pattern"] == entry["pattern"]), None)
        if same:
            dropped.append({"id": rule_id, "reason": f"the same pattern as {same}"})
            continue
        entries.append(entry)
    for raw in local.get("rules", ()):
        if raw["id"] in upstream_ids:
            raise SystemExit(f"local.toml: rule {raw['id']} has the id of a gitleaks rule")
        try:
            entries.append(_local_rule(raw, qualifiers))
        except Rejected as why:
            raise SystemExit(f"local.toml: rule {raw['id']}: {why}") from None
        if "example" in raw:
            examples.setdefault(
                raw["id"], {"example": raw["example"], "near_miss": raw["near_miss"]}
            )

    for entry in entries:
        entry["pattern"] = fast_start(entry["pattern"])
    last = list(local.get("last", ()))
    entries.sort(key=lambda e: last.index(e["id"]) + 1 if e["id"] in last else 0)
    global_allowlist = _global_allowlist(
        upstream.get("allowlist", {}), local.get("global", {}), log
    )
    entries, more = _with_examples(entries, examples, global_allowlist, log)
    dropped.extend(more)
    data: dict[str, Any] = {
        "source": SOURCE,
        "upstream_commit": UPSTREAM_COMMIT,
        "licence": "MIT, see secret_rules.LICENSE (gitleaks' licence)",
        "generated_by": "scripts/generate_secret_rules.py",
        "notes": NOTES,
        "allowlist": global_allowlist,
        "rules": entries,
        "dropped": dropped,
    }
    return data, log


def _global_allowlist(raw: dict[str, Any], ours: dict[str, Any], log: list[str]) -> dict[str, Any]:
    notes: list[str] = []
    raw = {k: v for k, v in raw.items() if k != "paths"}
    dropped = set(ours.get("drop_stopwords", ()))
    if dropped - set(raw.get("stopwords", ())):
        raise SystemExit(f"local.toml: [global] stop words not in gitleaks': {sorted(dropped)}")
    raw["stopwords"] = [w for w in raw.get("stopwords", ()) if w not in dropped]
    lists = _allowlists([raw], notes)
    log.extend(f"global allowlist: {n}" for n in notes)
    allowlist = lists[0] if lists else {}
    if dropped:
        allowlist["changed"] = ours["reason"]
    return allowlist


def _with_examples(
    entries: list[dict[str, Any]],
    hand_written: dict[str, dict[str, list[str]]],
    allowlist: dict[str, Any],
    log: list[str],
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Each rule with an example only it finds and a near miss no rule finds, checked with
    the scanner over all the rules; a rule with none is dropped (and the rest checked again,
    as a dropped rule no longer competes)."""
    start = len(log)
    dropped: list[dict[str, str]] = []
    while True:
        rule_set = secrets.compile_rules({"rules": entries, "allowlist": allowlist})
        failed: dict[str, str] = {}
        in_prose: dict[str, list[str]] = {}
        del log[start:]
        for entry, rule in zip(entries, rule_set.rules, strict=True):
            chosen, missed = _choose(rule_set, rule, entry, hand_written.get(entry["id"]), log)
            if chosen is None:
                failed[entry["id"]] = "no example found that it alone reports, with a near miss"
                if missed:
                    in_prose[entry["id"]] = missed
                continue
            entry["example"], entry["near_miss"] = pieces(chosen[0]), pieces(chosen[1])
        if in_prose:
            raise SystemExit(
                "\n".join(f"{i} misses its example in prose: {m}" for i, m in in_prose.items())
                + "\nA token followed by punctuation, or in brackets or quotes, must be found"
                " (memory is prose): widen the rule's ending (a [[tweaks]] `replace` in"
                " local.toml, or the rule itself if it is ours), or [[drop]] it with the reason."
            )
        if not failed:
            return entries, dropped
        local = [i for i in failed if "local" in _by_id(entries, i)]
        if local:
            raise SystemExit(f"local.toml: no working example for {local}")
        dropped.extend({"id": i, "reason": r} for i, r in failed.items())
        entries = [e for e in entries if e["id"] not in failed]


def _by_id(entries: list[dict[str, Any]], rule_id: str) -> dict[str, Any]:
    return next(e for e in entries if e["id"] == rule_id)


def _choose(
    rule_set: secrets.RuleSet,
    rule: secrets.Rule,
    entry: dict[str, Any],
    hand: dict[str, list[str]] | None,
    log: list[str],
) -> tuple[tuple[str, str] | None, list[str]]:
    """An example and a near miss for the rule, or None and where the first example it
    finds (if any) was missed in prose."""
    least = 1 if "local" in entry else MIN_SECRET
    missed_in_prose: list[str] = []

    def works(example: str) -> bool:
        nonlocal missed_in_prose
        if not example_works(rule_set, rule, example, least):
            return False
        missed = prose_misses(rule_set, rule, example)
        missed_in_prose = missed_in_prose or missed
        return not missed

    if hand:
        example, near = "".join(hand["example"]), "".join(hand["near_miss"])
        if works(example):
            if near_miss_works(rule_set, near):
                return (example, near), []
            log.append(f"{entry['id']}: the hand-written near miss is flagged; generated one")
            for _, misses in candidate_examples(entry):
                for miss in misses:
                    if near_miss_works(rule_set, miss):
                        return (example, miss), []
        else:
            log.append(f"{entry['id']}: the hand-written example does not work; generated one")
    for example, misses in candidate_examples(entry):
        if not works(example):
            continue
        for miss in misses:
            if near_miss_works(rule_set, miss):
                return (example, miss), []
    return None, missed_in_prose


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is not current")
    args = parser.parse_args(argv)
    data, log = generate(UPSTREAM.read_text("utf-8"), LOCAL.read_text("utf-8"))
    text = render(data)
    for line in log:
        print(line, file=sys.stderr)
    _summary(data, sys.stderr.write)
    current = OUTPUT.read_text("utf-8") if OUTPUT.exists() else ""
    if args.check:
        if current == text:
            print(f"{OUTPUT.relative_to(ROOT)} is current", file=sys.stderr)
            return 0
        diff = list(
            difflib.unified_diff(
                current.splitlines(), text.splitlines(), "committed", "generated", lineterm="", n=1
            )
        )
        print(
            f"{OUTPUT.relative_to(ROOT)} is not current ({len(diff)} diff lines):", file=sys.stderr
        )
        for line in diff[:40]:
            print(line, file=sys.stderr)
        print("run: python3 scripts/generate_secret_rules.py", file=sys.stderr)
        return 1
    if current != text:
        OUTPUT.write_text(text, "utf-8")
        print(f"wrote {OUTPUT.relative_to(ROOT)}", file=sys.stderr)
    return 0


def _summary(data: dict[str, Any], write: Callable[[str], object]) -> None:
    rules = data["rules"]
    ours = sum(1 for r in rules if "local" in r)
    write(
        f"{len(rules) - ours} gitleaks rules kept, {len(data['dropped'])} dropped; "
        f"{ours} of our own\n"
    )
    reasons: dict[str, list[str]] = {}
    for d in data["dropped"]:
        reasons.setdefault(re.sub(r"\d+", "N", d["reason"]), []).append(d["id"])
    for reason, ids in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
        write(f"  dropped ({len(ids)}): {reason}: {', '.join(ids)}\n")


if __name__ == "__main__":
    sys.exit(main())
