"""What an agent's own rule-file syntax says, read from the text alone: Claude Code's
`@path` imports, and the frontmatter of Cursor's `.mdc` rules and Copilot's
`.instructions.md` files. Pure: whether a path exists is the caller's question.

Sources: code.claude.com/docs/en/memory (imports: `@path`, relative to the importing file,
`~/` for the home, not inside code spans or blocks, at most four hops);
cursor.com/docs/context/rules (`description`, `globs`, `alwaysApply`);
code.visualstudio.com/docs/copilot/customization/custom-instructions (`applyTo`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

IMPORT = re.compile(r"(?<![\w`@/.])@((?:~/|\.{1,2}/|/)?[\w.\-/]+[\w\-/])")
"""`@path`: a token at a word start, not an e-mail address (nothing word-like before `@`)."""
FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Import:
    target: str
    start: int
    end: int


def imports(text: str) -> list[Import]:
    """The `@path` imports outside code blocks and code spans, in order."""
    found: list[Import] = []
    if "@" not in text:
        return found
    offset = 0
    in_fence = False
    for line in text.splitlines(keepends=True):
        if FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and "@" in line:
            code_spans = [(m.start(), m.end()) for m in re.finditer(r"`[^`]*`", line)]
            for match in IMPORT.finditer(line):
                if any(a <= match.start() < b for a, b in code_spans):
                    continue
                target = match.group(1)
                if "/" not in target and "." not in target:
                    continue  # "@someone": a mention, not a path
                found.append(Import(target, offset + match.start(), offset + match.end()))
        offset += len(line)
    return found


@dataclass(frozen=True)
class Frontmatter:
    """`key: value` pairs between the leading `---` lines, values as written."""

    present: bool
    fields: dict[str, str] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    """key -> index of the character where its line starts."""
    end: int = 0
    """Index just past the closing `---` line (0 without frontmatter)."""


def frontmatter(text: str) -> Frontmatter:
    if not text.startswith("---"):
        return Frontmatter(False)
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return Frontmatter(False)
    fields: dict[str, str] = {}
    starts: dict[str, int] = {}
    offset = len(lines[0])
    key: str | None = None
    for line in lines[1:]:
        if line.strip() == "---":
            return Frontmatter(True, fields, starts, offset + len(line))
        match = re.match(r"^([A-Za-z_][\w-]*)\s*:\s*(.*?)\s*$", line)
        if match:
            key = match.group(1)
            fields[key] = match.group(2)
            starts[key] = offset
        elif key is not None and line.strip().startswith("- "):
            fields[key] = (fields[key] + " " + line.strip()).strip()
        offset += len(line)
    return Frontmatter(False)  # never closed: not frontmatter to the agent


def yaml_bool(value: str) -> bool | None:
    """True/False for YAML booleans, None for anything else (a quoted "true" is a string)."""
    if value in ("true", "True", "TRUE"):
        return True
    if value in ("false", "False", "FALSE"):
        return False
    return None


def yaml_strings(value: str) -> list[str]:
    """A YAML string or list of strings, as the simple forms rule files use."""
    value = value.strip()
    if value.startswith("["):
        items = value.strip("[]").split(",")
    elif value.startswith("- "):
        items = [part for part in value.split("- ") if part.strip()]
    else:
        items = [value]
    return [item.strip().strip("'\"") for item in items if item.strip().strip("'\"")]
