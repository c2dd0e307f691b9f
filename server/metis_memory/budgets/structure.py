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
from .discover import walk_files
from .paths import glob_regex, matches
from .reading import read_bounded

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


RULE_FILES = (
    *CLAUDE_FILES,
    ".cursor/rules/**/*.mdc",
    ".cursor/rules/**/*.md",
    ".github/instructions/**/*.instructions.md",
)
"""Every file a structural check applies to (for `check` to find them)."""


def covered(path: Path, workspace: Path | None, home: Path) -> bool:
    """Whether any structural check applies to `path`."""
    return _kind(path, workspace, home) is not None


def structure_findings(
    path: Path, text: str, workspace: Path | None, home: Path | None = None
) -> list[Finding]:
    home = home if home is not None else Path.home()
    kind = _kind(path, workspace, home)
    if kind == "claude":
        return _import_findings(path, text, home)
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
    return None


# ---- Claude Code imports ----------------------------------------------------------------
def _resolve(target: str, base: Path, home: Path) -> Path:
    if target.startswith("~/"):
        return home / target[2:]
    return Path(target) if target.startswith("/") else base / target


def _import_findings(path: Path, text: str, home: Path) -> list[Finding]:
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
        chain = _too_deep(target, home, 1, (path.resolve(),), budget)
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
    target: Path, home: Path, depth: int, seen: tuple[Path, ...], budget: list[int]
) -> list[Path] | None:
    """The first chain of imports from `target` that goes past MAX_HOPS, if any."""
    if target.resolve() in seen:
        return None  # a cycle: loaded once, not a deeper chain
    if depth > MAX_HOPS:
        return [target]
    if budget[0] <= 0:
        return None
    budget[0] -= 1
    read = read_bounded(target, IMPORT_READ_BYTES)
    if read.text is None:
        return None
    for item in imports(read.text):
        child = _resolve(item.target, target.parent, home)
        if not os.path.lexists(child):
            continue
        deeper = _too_deep(child, home, depth + 1, (*seen, target.resolve()), budget)
        if deeper is not None:
            return [target, *deeper]
    return None


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
    globs = [g for part in yaml_strings(value) for g in _split_commas(part) if g.strip()]
    files = _files(workspace, int(time.monotonic() // WALK_SECONDS))
    for glob in globs:
        for expanded in _braces(glob.strip()):
            regex = glob_regex(expanded.removeprefix("./"))
            if any(regex.match(f) for f in files):
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


@functools.lru_cache(maxsize=8)
def _files(workspace: Path, _epoch: int) -> tuple[str, ...]:
    return tuple(walk_files(workspace))


def _split_commas(value: str) -> list[str]:
    """`**/*.ts,**/*.{js,jsx}` -> its globs: commas outside braces separate them."""
    parts, depth, current = [], 0, ""
    for char in value:
        depth += {"{": 1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return [*parts, current.strip()]


def _braces(glob: str) -> list[str]:
    """`*.{ts,tsx}` -> `*.ts`, `*.tsx` (one level, as rule globs use it)."""
    match = re.search(r"\{([^{}]*)\}", glob)
    if match is None:
        return [glob]
    return [
        expanded
        for option in match.group(1).split(",")
        for expanded in _braces(glob[: match.start()] + option + glob[match.end() :])
    ]
