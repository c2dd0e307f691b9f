"""Suspected credentials in the memory files, as `metis-memory check` reports them: the file,
the place and the kind, never the value, in text, JSON and SARIF. A key in memory reaches
every model call and every clone, so `check` fails CI before it is pushed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .positions import UTF16, units
from .secrets import find_secrets

RULE_PREFIX = "metis-memory/secret/"
ADVICE = "remove it (metis-memory consolidate) and keep a pointer to where it lives instead"
HELP = (
    "Memory files are sent to the model provider with every prompt and are committed with "
    "the repository, so a credential in one leaks twice. Remove it with "
    "`metis-memory consolidate` (in VS Code: Metis: Consolidate MEMORY.md…, or the quick fix "
    "that redacts it), rotate it if it was "
    "pushed, and keep a pointer to where it lives instead, e.g. "
    '"`$GITHUB_TOKEN`, in 1Password under Deploy".'
)
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def rule_id(kind: str) -> str:
    """The SARIF rule id of a kind: `GitHub token` -> `metis-memory/secret/github-token`."""
    return RULE_PREFIX + (_NOT_SLUG.sub("-", kind.lower()).strip("-") or "unknown")


@dataclass(frozen=True)
class SecretFinding:
    """One suspected credential: where it starts and ends (1-based lines; columns 1-based,
    in characters and in UTF-16 code units for SARIF) and its kind. No text of it."""

    file: str
    """The memory file's name, e.g. `MEMORY.md`."""
    kind: str
    line: int
    column: int
    """In characters (code points), as the other `file:line:col` lines of `check`."""
    utf16_column: int
    end_line: int
    end_utf16_column: int
    """SARIF's end: the UTF-16 column just past the secret's last character."""

    @property
    def shown(self) -> str:
        return f".metis/{self.file}"

    @property
    def rule_id(self) -> str:
        return rule_id(self.kind)

    def text_line(self) -> str:
        return f"{self.shown}:{self.line}:{self.column}: suspected {self.kind}: {ADVICE}"

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "kind": self.kind,
            "rule_id": self.rule_id,
        }

    def sarif_rule(self) -> dict[str, Any]:
        return {
            "id": self.rule_id,
            "name": "Secret" + "".join(w.capitalize() for w in _NOT_SLUG.split(self.kind.lower())),
            "shortDescription": {"text": f"Suspected {self.kind} in a memory file"},
            "help": {"text": HELP, "markdown": HELP},
            "defaultConfiguration": {"level": "error"},
            "properties": {"tags": ["security", "secret"]},
        }

    def sarif_result(self) -> dict[str, Any]:
        return {
            "ruleId": self.rule_id,
            "level": "error",
            "message": {"text": f"Suspected {self.kind} in {self.file}: {ADVICE}."},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": self.shown},
                        "region": {
                            "startLine": self.line,
                            "startColumn": self.utf16_column,
                            "endLine": self.end_line,
                            "endColumn": self.end_utf16_column,
                        },
                    }
                }
            ],
        }


LISTED = 1_000
"""Suspected secrets listed for one file; past them, `check` says the scan stopped there."""


def secret_findings(file: str, text: str) -> list[SecretFinding]:
    """The suspected credentials of one memory file's text, in order, the first LISTED + 1
    of them (the caller lists LISTED and says more follow when there are more). Lines are
    counted by "\\n", as the other positions `check` prints."""
    found: list[SecretFinding] = []
    line, line_start, scanned, utf16 = 1, 0, 0, 0

    def place(index: int) -> tuple[int, int, int]:
        """(line, column, UTF-16 column) of `index`. Indices come in increasing order, so
        the text is walked once, even a long line with many secrets."""
        nonlocal line, line_start, scanned, utf16
        breaks = text.count("\n", scanned, index)
        if breaks:
            line += breaks
            line_start = text.rfind("\n", scanned, index) + 1
            utf16 = 0
        utf16 += units(text[max(scanned, line_start) : index], UTF16)
        scanned = index
        return line, index - line_start + 1, utf16 + 1

    for match in find_secrets(text, LISTED + 1):
        start_line, column, utf16_column = place(match.start)
        end_line, _, end_utf16_column = place(match.end)
        found.append(
            SecretFinding(
                file, match.kind, start_line, column, utf16_column, end_line, end_utf16_column
            )
        )
    return found
