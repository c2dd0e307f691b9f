"""Rule files an agent silently ignores or reads in part, checked against the workspace:
a Claude Code `@import` whose target is missing or more than four hops deep, a Cursor rule
Cursor never applies, a Copilot `applyTo` no file matches. Targets are checked for
existence only; imported files are read bounded to follow their own imports."""

from __future__ import annotations

import functools
import os
import re
import time
from pathlib import Path

from ..analysis.agent_rules import Frontmatter, frontmatter, imports, yaml_bool, yaml_strings
from ..analysis.findings import Finding, Severity
from ..analysis.globs import GlobTooComplex, compile_glob, split_outside_braces
from ..store.reading import read_bounded
from ..store.within import is_within
from .discover import scan
from .paths import home_folder, matches

CLAUDE_FILES = (
    "**/CLAUDE.md",
    "**/CLAUDE.local.md",
    "**/.claude/CLAUDE.md",
    ".claude/rules/**/*.md",
)
MAX_HOPS = 4
"""Claude Code follows imports at most four hops (code.claude.com/docs/en/memory)."""
MAX_IMPORTED_FILES = 64
IMPORT_READ_BYTES = 256 * 1024
WALK_SECONDS = 10
"""How long one scan of the workspace answers `applyTo` questions."""


INDEX_FILES = (
    "**/.memory/MEMORY.md",
    "**/memory/MEMORY.md",
    "~/.claude/projects/{claude-project}/memory/MEMORY.md",
)
"""An index plus notes (Claude Code's auto memory, and the seeds' layout): MEMORY.md holds
one line per note, with a link; every note is a markdown file beside it."""
NOTE_FILES = tuple(glob.replace("MEMORY.md", "*.md") for glob in INDEX_FILES)
FACT_FILES = ("**/memory/facts/*.md", "**/memory/episodes/*.md")
"""Facts plus episodes: each file starts with a `> Summary:` line the index is built from."""
NOTE_TYPES = ("user", "feedback", "project", "reference")
SUMMARY_WORDS = 10
MAX_UNINDEXED_REPORTED = 20

RULE_FILES = (
    *CLAUDE_FILES,
    ".cursor/rules/**/*.mdc",
    ".cursor/rules/**/*.md",
    ".github/instructions/**/*.instructions.md",
    *INDEX_FILES,
    *NOTE_FILES,
    *FACT_FILES,
)
"""Every file a structural check applies to (for `check` to find them)."""


def covered(path: Path, workspace: Path | None, home: Path) -> bool:
    """Whether any structural check applies to `path`."""
    return _kind(path, workspace, home) is not None


def structure_findings(
    path: Path, text: str, workspace: Path | None, home: Path | None = None
) -> list[Finding]:
    home = home if home is not None else home_folder()
    kind = _kind(path, workspace, home)
    if kind == "claude":
        roots = (home / ".claude",) if workspace is None else (workspace, home / ".claude")
        return _import_findings(path, text, home, tuple(r.resolve() for r in roots))
    if kind == "cursor-md":
        first = text.find("\n")
        return [
            Finding(
                "rule-ignored",
                Severity.WARNING,
                0,
                len(text) if first < 0 else first,
                "Cursor ignores .md files in .cursor/rules: rename this one to .mdc (with "
                "description, globs or alwaysApply frontmatter) for Cursor to use it",
            )
        ]
    if kind == "cursor":
        return _cursor_findings(text)
    if kind == "copilot" and workspace is not None:
        return _apply_to_findings(text, workspace)
    if kind == "index":
        return _index_findings(path, text)
    if kind == "note":
        return _note_findings(path, text)
    if kind == "facts":
        return _summary_findings(text)
    return []


def _kind(path: Path, workspace: Path | None, home: Path) -> str | None:
    if any(matches(g, path, workspace, home) for g in CLAUDE_FILES):
        return "claude"
    if matches(".cursor/rules/**/*.mdc", path, workspace, home):
        return "cursor"
    if matches(".cursor/rules/**/*.md", path, workspace, home):
        return "cursor-md"
    if matches(".github/instructions/**/*.instructions.md", path, workspace, home):
        return "copilot"
    if any(matches(g, path, workspace, home) for g in INDEX_FILES):
        return "index"
    if any(matches(g, path, workspace, home) for g in NOTE_FILES) and os.path.lexists(
        path.parent / "MEMORY.md"
    ):
        return "note"
    if any(matches(g, path, workspace, home) for g in FACT_FILES):
        return "facts"
    return None


# ---- Claude Code imports ----------------------------------------------------------------
def _resolve(target: str, base: Path, home: Path) -> Path:
    if target.startswith("~/"):
        return home / target[2:]
    return Path(target) if target.startswith("/") else base / target


def _import_findings(
    path: Path, text: str, home: Path, readable: tuple[Path, ...]
) -> list[Finding]:
    """Missing targets, and chains past MAX_HOPS. Only files under `readable` (the
    workspace, ~/.claude) are read to follow their own imports: any other target, such as
    `@/etc/passwd` in a cloned repository, is checked for existence only."""
    findings: list[Finding] = []
    budget = [MAX_IMPORTED_FILES]
    for item in imports(text):
        target = _resolve(item.target, path.parent, home)
        if not os.path.lexists(target):
            findings.append(
                Finding(
                    "missing-import",
                    Severity.WARNING,
                    item.start,
                    item.end,
                    f"Claude Code cannot import {item.target}: {target} does not exist, so "
                    "this line imports nothing",
                )
            )
            continue
        chain = _too_deep(target, home, 1, (path.resolve(),), budget, readable)
        if chain is not None:
            hops = " → ".join(p.name for p in chain)
            findings.append(
                Finding(
                    "import-too-deep",
                    Severity.WARNING,
                    item.start,
                    item.end,
                    f"{item.target} leads {len(chain)} imports deep ({hops}): Claude Code "
                    f"follows {MAX_HOPS} and never loads {chain[-1].name}",
                )
            )
    return findings


def _too_deep(
    target: Path,
    home: Path,
    depth: int,
    seen: tuple[Path, ...],
    budget: list[int],
    readable: tuple[Path, ...],
) -> list[Path] | None:
    """The first chain of imports from `target` that goes past MAX_HOPS, if any."""
    real = target.resolve()
    if real in seen:
        return None  # a cycle: loaded once, not a deeper chain
    if depth > MAX_HOPS:
        return [target]
    if budget[0] <= 0 or not any(is_within(real, root) for root in readable):
        return None
    budget[0] -= 1
    try:
        st = os.stat(target)
    except OSError:
        return None
    for child_target in _imports_of(target, st.st_mtime_ns, st.st_size):
        child = _resolve(child_target, target.parent, home)
        if not os.path.lexists(child):
            continue
        deeper = _too_deep(child, home, depth + 1, (*seen, real), budget, readable)
        if deeper is not None:
            return [target, *deeper]
    return None


@functools.lru_cache(maxsize=256)
def _imports_of(path: Path, _mtime_ns: int, _size: int) -> tuple[str, ...]:
    """An imported file's own imports, read (bounded) again only when it changed: a keystroke
    in CLAUDE.md does not re-read the files it imports."""
    read = read_bounded(path, IMPORT_READ_BYTES)
    return () if read.text is None else tuple(i.target for i in imports(read.text))


# ---- Cursor rules -------------------------------------------------------------------------
def _cursor_findings(text: str) -> list[Finding]:
    fm = frontmatter(text)
    first_line = text.find("\n")
    head = len(text) if first_line < 0 else first_line

    def finding(message: str, start: int = 0, end: int = head) -> Finding:
        return Finding("rule-frontmatter", Severity.WARNING, start, end, message)

    if not fm.present:
        return [
            finding(
                "This Cursor rule has no frontmatter, so Cursor applies it only when it is "
                "@-mentioned: start it with ---, then description, globs or alwaysApply, then ---"
            )
        ]
    if not fm.fields:
        return [finding("Empty frontmatter: Cursor never applies this rule on its own")]
    out: list[Finding] = []
    always = fm.fields.get("alwaysApply")
    if always is not None and yaml_bool(always) is None:
        out.append(
            finding(
                f"alwaysApply must be true or false, not {always}: Cursor reads this as not "
                "always applied",
                *_line_span(text, fm, "alwaysApply"),
            )
        )
    if (
        yaml_bool(always or "") is not True
        and not yaml_strings(fm.fields.get("globs", ""))
        and not fm.fields.get("description", "").strip().strip("'\"")
    ):
        out.append(
            finding(
                "Cursor never applies this rule on its own: it has no alwaysApply: true, no "
                "globs and no description (it loads only when @-mentioned)"
            )
        )
    return out


def _line_span(text: str, fm: Frontmatter, key: str) -> tuple[int, int]:
    start = fm.lines[key]
    end = text.find("\n", start)
    return start, len(text) if end < 0 else end


# ---- Copilot applyTo --------------------------------------------------------------------
def _apply_to_findings(text: str, workspace: Path) -> list[Finding]:
    fm = frontmatter(text)
    value = fm.fields.get("applyTo") if fm.present else None
    if value is None:
        return []
    globs = [g for part in yaml_strings(value) for g in split_outside_braces(part)]
    if len(globs) > APPLY_TO_MAX_GLOBS or sum(map(len, globs)) > APPLY_TO_MAX_CHARS:
        return []  # more than can be compiled on a keystroke: say nothing rather than guess
    files, complete = _files(workspace, int(time.monotonic() // WALK_SECONDS))
    if not complete:
        return []  # too large a folder to tell on a keystroke: say nothing rather than guess
    for glob in globs:
        pattern = glob.strip().removeprefix("./")
        # VS Code matches without case and puts `**/` before a pattern with no folder.
        candidates = [pattern] if "/" in pattern else [pattern, f"**/{pattern}"]
        for candidate in candidates:
            try:
                matcher = compile_glob(candidate, braces=True, ignore_case=True)
            except GlobTooComplex:
                return []  # more alternatives than can be told on a keystroke: say nothing
            if any(matcher.match(f) for f in files):
                return []
    start, end = _line_span(text, fm, "applyTo")
    return [
        Finding(
            "apply-to-unmatched",
            Severity.WARNING,
            start,
            end,
            f"Copilot applies these instructions to files matching {', '.join(globs)}, and no "
            "file in this workspace does: they are never used",
        )
    ]


APPLY_TO_MAX_GLOBS = 64
APPLY_TO_MAX_CHARS = 4_096
"""Globs of one `applyTo`, and their characters: each is compiled on a keystroke."""
APPLY_TO_MAX_DIRECTORIES = 2_000
"""The scan for `applyTo` runs on a keystroke: bounded well below a full `check` scan."""


@functools.lru_cache(maxsize=8)
def _files(workspace: Path, _epoch: int) -> tuple[tuple[str, ...], bool]:
    files, complete = scan(workspace, APPLY_TO_MAX_DIRECTORIES, skip=())
    return tuple(files), complete


# ---- an index plus notes ----------------------------------------------------------------
LINK = re.compile(r"\[[^\]]*\]\(<?([^)\s>]+)>?(?:\s[^)]*)?\)")


def _links(text: str) -> list[tuple[str, int, int]]:
    """Relative links to files: (target without #fragment, start, end)."""
    out = []
    for match in LINK.finditer(text):
        target = match.group(1).split("#", 1)[0]
        if target and "://" not in target and not target.startswith(("mailto:", "/")):
            out.append((target, match.start(), match.end()))
    return out


def _notes_beside(index: Path) -> list[str]:
    """The notes of an index: the other markdown files of its directory (one listing)."""
    try:
        return sorted(
            e.name
            for e in os.scandir(index.parent)
            if e.name.endswith(".md") and e.name != index.name and e.is_file(follow_symlinks=False)
        )
    except OSError:
        return []


def _index_findings(path: Path, text: str) -> list[Finding]:
    findings: list[Finding] = []
    linked: set[str] = set()
    for target, start, end in _links(text):
        resolved = path.parent / target
        linked.add(os.path.normpath(target))
        if not os.path.lexists(resolved):
            findings.append(
                Finding(
                    "missing-note",
                    Severity.WARNING,
                    start,
                    end,
                    f"The index links {target}, which does not exist: the agent will look for "
                    "a note that is not there; fix the link or remove the line",
                )
            )
    first_line = text.find("\n")
    head = len(text) if first_line < 0 else first_line
    unindexed = [n for n in _notes_beside(path) if n not in linked]
    for note in unindexed[:MAX_UNINDEXED_REPORTED]:
        findings.append(
            Finding(
                "unindexed-note",
                Severity.WARNING,
                0,
                head,
                f"{note} is not in the index: the agent only sees the index, so it never "
                f"learns this note exists; add a line linking [{note}]({note})",
            )
        )
    return findings


def _note_findings(path: Path, text: str) -> list[Finding]:
    findings: list[Finding] = []
    fm = frontmatter(text)
    first_line = text.find("\n")
    head = len(text) if first_line < 0 else first_line
    if not fm.present:
        findings.append(
            Finding(
                "note-frontmatter",
                Severity.WARNING,
                0,
                head,
                "This note has no frontmatter: start it with ---, name, description and type "
                f"({' | '.join(NOTE_TYPES)}), then ---, for the index to describe it",
            )
        )
    else:
        missing = [k for k in ("name", "description", "type") if not fm.fields.get(k)]
        kind = fm.fields.get("type", "").strip("'\"")
        problems = [f"'{k}' is missing" for k in missing]
        if kind and kind not in NOTE_TYPES:
            problems.append(f"type '{kind}' is not one of {', '.join(NOTE_TYPES)}")
        if problems:
            findings.append(
                Finding(
                    "note-frontmatter",
                    Severity.WARNING,
                    0,
                    fm.end,
                    f"This note's frontmatter is incomplete: {'; '.join(problems)}",
                )
            )
    index = path.parent / "MEMORY.md"
    read = read_bounded(index, IMPORT_READ_BYTES)
    if read.text is not None and path.name not in {
        os.path.normpath(t) for t, _, _ in _links(read.text)
    }:
        findings.append(
            Finding(
                "unindexed-note",
                Severity.WARNING,
                0,
                head,
                f"MEMORY.md does not link this note: the agent only sees the index, so it never "
                f"learns {path.name} exists",
            )
        )
    return findings


# ---- facts plus episodes ----------------------------------------------------------------
SUMMARY = re.compile(r"^>\s*Summary:[ \t]*(.*)$", re.M)


def _summary_findings(text: str) -> list[Finding]:
    match = SUMMARY.search(text)
    if match is None:
        first_line = text.find("\n")
        return [
            Finding(
                "summary-line",
                Severity.WARNING,
                0,
                len(text) if first_line < 0 else first_line,
                "No '> Summary:' line: the index the agent sees has no hook for this file; "
                f"add one under the title, in under {SUMMARY_WORDS} words",
            )
        ]
    words = len(match.group(1).split())
    if words == 0 or words > SUMMARY_WORDS:
        what = "empty" if words == 0 else f"{words} words"
        return [
            Finding(
                "summary-line",
                Severity.WARNING,
                match.start(),
                match.end(),
                f"The summary is {what}: it goes into every system prompt, so keep it to "
                f"{SUMMARY_WORDS} words or fewer",
            )
        ]
    return []
