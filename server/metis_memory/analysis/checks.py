"""The checks: a memory file's text (and, for the disk, its raw size and UTF-8 state)
in, findings out. One pass over the entries; duplicates are found through a dict
keyed by normalised entry, never by comparing entries pairwise."""

from __future__ import annotations

from ..store.errors import fmt_bytes
from ..store.files import CAPS, MemoryFile
from .entries import Entry, Outline, parse
from .findings import Finding, Severity
from .positions import char_index_at_byte, utf8_size
from .secrets import find_secrets

USER_MEMORY = "your user memory"
"""How a person is told of the user memory (one USER.md read in every workspace) in a
finding's message, where a workspace's file is named by its file name."""

ENTRY_CHECKS_LIMIT = 4 * 2**20
"""Bytes above which only the cap and UTF-8 findings are computed (1,024 times MEMORY.md's
hard cap: a generated or hand-grown file). A 50 MB file would otherwise give a million
duplicate and secret findings: a minute of work and a gigabyte of diagnostics, none of
which the user can act on before consolidating it under the cap."""


def check(
    file: MemoryFile,
    text: str,
    *,
    size_bytes: int | None = None,
    utf8_error_offset: int | None = None,
    outline: Outline | None = None,
    hidden_prefix_bytes: int = 0,
    user_memory: bool = False,
) -> list[Finding]:
    """Every finding for `file` holding `text`, ordered by position.

    `size_bytes` is the file's size when it differs from the text's UTF-8 size (a
    file on disk that is not valid UTF-8, or one with a byte-order mark);
    `utf8_error_offset` is its first bad byte; `hidden_prefix_bytes` counts bytes the
    file has before `text` begins (a byte-order mark the editor does not show);
    `user_memory`: the text is the user memory's, which messages name as such.
    """
    outline = outline if outline is not None else parse(text)
    findings = cap_findings(file, text, size_bytes, hidden_prefix_bytes, user_memory=user_memory)
    if (utf8_size(text) if size_bytes is None else size_bytes) <= ENTRY_CHECKS_LIMIT:
        findings += entry_findings(outline)
        findings += secret_findings(file, outline, user_memory=user_memory)
    if utf8_error_offset is not None:
        findings.append(not_utf8_finding(file, text, utf8_error_offset, user_memory=user_memory))
    findings.sort(key=lambda f: (f.start, f.end))
    return findings


def cap_findings(
    file: MemoryFile,
    text: str,
    size_bytes: int | None = None,
    hidden_prefix_bytes: int = 0,
    *,
    user_memory: bool = False,
) -> list[Finding]:
    """At most one finding: the hard cap's when over it, else the soft cap's.

    Its range starts at the character holding the first byte past the cap (a
    multi-byte character straddling the cap starts it) and runs to the end.
    """
    caps = CAPS[file]
    size = utf8_size(text) if size_bytes is None else size_bytes
    name = _named(file, user_memory)
    if size > caps.hard:
        cap = caps.hard
        finding = Finding(
            "over-hard-cap",
            Severity.ERROR,
            0,
            0,
            f"{name} is {fmt_bytes(size)}, over its {fmt_bytes(caps.hard)} hard cap "
            f"(soft cap {fmt_bytes(caps.soft)}): writes that leave it over the hard cap are "
            f"rejected; consolidate it to under {fmt_bytes(caps.soft)}",
            cap_byte=cap,
        )
    elif size > caps.soft:
        cap = caps.soft
        finding = Finding(
            "over-soft-cap",
            Severity.WARNING,
            0,
            0,
            f"{name} is {fmt_bytes(size)}, over its {fmt_bytes(caps.soft)} soft cap "
            f"(hard cap {fmt_bytes(caps.hard)}): consolidate before adding more",
            cap_byte=cap,
        )
    else:
        return []
    end = len(text)
    start = min(char_index_at_byte(text, max(0, cap - hidden_prefix_bytes)), end)
    return [_with_range(finding, start, end)]


def entry_findings(outline: Outline) -> list[Finding]:
    """Empty entries, and every repeat of an earlier entry."""
    findings: list[Finding] = []
    first_seen: dict[str, Entry] = {}
    for entry in outline.entries:
        if entry.is_empty:
            findings.append(
                Finding(
                    "empty-entry",
                    Severity.INFORMATION,
                    entry.start,
                    entry.end,
                    "Empty entry: this list item holds no text; remove it",
                    entry=entry,
                )
            )
            continue
        original = first_seen.setdefault(entry.key, entry)
        if original is not entry:
            findings.append(
                Finding(
                    "duplicate-entry",
                    Severity.WARNING,
                    entry.start,
                    entry.end,
                    f"Duplicate entry: the same as line {original.first_line + 1} "
                    "(ignoring case and whitespace); remove one of them",
                    entry=entry,
                    original=original,
                )
            )
    return findings


SHOWN_SECRETS = 1_000
"""Suspected secrets shown in one file; past them, one finding says the scan stopped. A
1 MiB line of `api_key=…` pairs holds 42,000: an editor given them all took 8 s to show any,
and nobody acts on the 1,001st before removing the first."""


def secret_findings(
    file: MemoryFile | str, outline: Outline, reader: str = "", *, user_memory: bool = False
) -> list[Finding]:
    """Suspected credentials; the message never repeats the secret. `reader` names who
    loads the file when it is another agent's ("Claude Code, Codex").

    In a memory file each is an error, as everywhere else it is judged: a write that adds
    one is refused (`tools/secret_guard.py`), and `metis-memory check` fails on it (its
    SARIF level is `error`). In another agent's file, which Metis never writes and `check`
    does not scan for secrets, it stays a warning."""
    name = file.value if isinstance(file, MemoryFile) else file
    severity = Severity.WARNING if reader else Severity.ERROR
    loaded = (
        f"{reader} load{'s' if ',' not in reader else ''} it into the model's context"
        if reader
        else "memory goes into every system prompt (a write that adds one is refused, and "
        "`metis-memory check` fails on it)"
    )
    if user_memory:
        name = USER_MEMORY
        loaded = (
            "it goes into the system prompt of every workspace (a write that adds one is refused)"
        )
    matches = find_secrets(outline.text, SHOWN_SECRETS + 1)
    findings = [
        Finding(
            "secret",
            severity,
            match.start,
            match.end,
            f"Possible {match.kind} in {name}: {loaded}; "
            "redact it and keep the credential in a secret store",
            entry=outline.entry_at(match.start),
            secret=match,
        )
        for match in matches[:SHOWN_SECRETS]
    ]
    if len(matches) > SHOWN_SECRETS:
        at = matches[SHOWN_SECRETS].start
        findings.append(
            Finding(
                "secret",
                severity,
                at,
                matches[SHOWN_SECRETS].end,
                f"More possible secrets in {name} from here: the first {SHOWN_SECRETS:,} are "
                "shown and the scan stops there. Remove them (consolidate the file), and the "
                "rest will show",
                entry=outline.entry_at(at),
            )
        )
    return findings


def not_utf8_finding(
    file: MemoryFile, text: str, offset: int, *, user_memory: bool = False
) -> Finding:
    """The first bad byte of a file that is not UTF-8 (shown as U+FFFD in `text`)."""
    start = min(char_index_at_byte(text, offset), len(text))
    return Finding(
        "not-utf8",
        Severity.ERROR,
        start,
        min(start + 1, len(text)),
        f"{_named(file, user_memory)} is not valid UTF-8 (first bad byte at offset {offset:,}): "
        "Metis Memory refuses to edit it, so that the original bytes are not lost; fix the file "
        "by hand (reopen it with its encoding and save it as UTF-8)",
    )


def _named(file: MemoryFile, user_memory: bool) -> str:
    """How a message begins naming the file: "MEMORY.md", or "Your user memory"."""
    return USER_MEMORY[0].upper() + USER_MEMORY[1:] if user_memory else file.value


def _with_range(finding: Finding, start: int, end: int) -> Finding:
    from dataclasses import replace

    return replace(finding, start=start, end=end)
