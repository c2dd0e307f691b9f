"""Findings: what the checks report, as plain data with string-index ranges.

The codes are a public contract (they become LSP diagnostic codes):

========================  ===========  ==============================================
code                      severity     meaning
========================  ===========  ==============================================
``over-soft-cap``         warning      bigger than the soft cap (and not the hard cap)
``over-hard-cap``         error        bigger than the hard cap: agent writes fail
``duplicate-entry``       warning      an entry that repeats an earlier one
``empty-entry``           information  a list item with no text
``secret``                error/warn.  something that looks like a credential (error in a
                                       memory file, as `check` judges it; warning in
                                       another agent's file)
``not-utf8``              error        the file on disk is not valid UTF-8
``over-budget``           error/warn.  past what another agent reads of the file (error
                                       where it loses text, warning where it only warns)
``missing-import``        warning      a Claude Code ``@path`` import whose target is missing
``import-too-deep``       warning      an import chain past Claude Code's four hops
``rule-frontmatter``      warning      a Cursor rule Cursor never applies on its own
``rule-ignored``          warning      a plain ``.md`` in ``.cursor/rules`` (Cursor skips it)
``apply-to-unmatched``    warning      a Copilot ``applyTo`` that matches no file
``missing-note``          warning      an index line linking a note that does not exist
``unindexed-note``        warning      a note no index line links (the agent never sees it)
``note-frontmatter``      warning      a note without name, description and a known type
``summary-line``          warning      a facts/episodes file without a short ``> Summary:``
``stale-reference``       information  a path or target the workspace no longer bears out
``workspace-specific``    information  an entry of the user memory naming a path or target
                                       of an open workspace (it belongs in its MEMORY.md)
========================  ===========  ==============================================
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # the secret rules compile on import: a hook never needs them
    from .entries import Entry
    from .secrets import SecretMatch

Code = Literal[
    "over-soft-cap",
    "over-hard-cap",
    "duplicate-entry",
    "empty-entry",
    "secret",
    "not-utf8",
    "over-budget",
    "missing-import",
    "import-too-deep",
    "rule-frontmatter",
    "rule-ignored",
    "apply-to-unmatched",
    "missing-note",
    "unindexed-note",
    "note-frontmatter",
    "summary-line",
    "stale-reference",
    "workspace-specific",
]
CODES: tuple[Code, ...] = (
    "over-soft-cap",
    "over-hard-cap",
    "duplicate-entry",
    "empty-entry",
    "secret",
    "not-utf8",
    "over-budget",
    "missing-import",
    "import-too-deep",
    "rule-frontmatter",
    "rule-ignored",
    "apply-to-unmatched",
    "missing-note",
    "unindexed-note",
    "note-frontmatter",
    "summary-line",
    "stale-reference",
    "workspace-specific",
)
CAP_CODES: frozenset[str] = frozenset({"over-soft-cap", "over-hard-cap"})


class Severity(Enum):
    ERROR = 1
    WARNING = 2
    INFORMATION = 3
    HINT = 4


@dataclass(frozen=True)
class Finding:
    """One problem, at ``text[start:end]``."""

    code: Code
    severity: Severity
    start: int
    end: int
    message: str
    entry: Entry | None = None
    """The entry concerned (duplicate, empty, or holding a secret)."""
    original: Entry | None = None
    """For a duplicate: the earlier entry it repeats."""
    secret: SecretMatch | None = None
    cap_byte: int | None = None
    """For a cap finding: the byte offset where the budget runs out."""
    data: dict[str, Any] | None = None
    """For a budget finding: the budget, consumer, unit, limit and size (the LSP `data`)."""

    def overlaps(self, start: int, end: int) -> bool:
        """True if the finding touches the (inclusive) string-index range."""
        return self.start <= end and start <= self.end
