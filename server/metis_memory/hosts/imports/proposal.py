"""The import's proposal: for each of the three places (the workspace's MEMORY.md and USER.md,
and the user memory), the text as it is, the text it would be with the hosts' entries added,
and the SHA-256 of the bytes read (so that applying it is a compare-and-swap: a file changed
since is never overwritten). Nothing here writes.

Each host entry is taken once: a duplicate of an entry already in any of the three (the same
text, ignoring case, whitespace and the list marker: `analysis/entries.py`'s `key`, what the
duplicate-entry check compares) or of one imported before it is dropped and listed; one holding
what looks like a credential (`analysis/secrets.py`, the rules the write guard refuses) is
refused and named by rule, file and line, never by its value. A place whose text would be over
its hard cap is proposed all the same, with how far over and the consolidation draft prompt
(`analysis/consolidation_prompt.py`): it is not applied until it is shortened."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...analysis.consolidation_prompt import consolidation_prompt
from ...analysis.entries import parse
from ...analysis.positions import utf8_size
from ...analysis.secrets import find_secrets
from ...store.errors import MemoryStoreError
from ...store.files import CAPS, MemoryFile
from ...store.memory_store import MemoryStore
from ...tools.people import CLI, store_error
from ...tools.redaction import redact
from ...tools.user_words import for_person
from .memories import Memory
from .placement import TARGETS, Target, WorkspaceRefs, items, place
from .reading import Skipped

FILE_OF: dict[Target, MemoryFile] = {
    "MEMORY.md": MemoryFile.MEMORY,
    "USER.md": MemoryFile.USER,
    "user-memory": MemoryFile.USER,
}


@dataclass(frozen=True)
class Added:
    """An entry the proposal adds."""

    text: str
    """As it would be written (a `- ` list item)."""
    host: str
    source: str
    line: int


@dataclass(frozen=True)
class Duplicate:
    """An entry left out: the same as one already there, or imported before it."""

    text: str
    host: str
    source: str
    line: int
    of: str
    """What it repeats: "MEMORY.md", "your user memory", or the source imported first."""


@dataclass(frozen=True)
class Refused:
    """An entry left out because it holds what looks like a credential: named by rule (the
    kind of secret), file and line; its text is never kept."""

    rule: str
    host: str
    source: str
    line: int


@dataclass
class TargetProposal:
    """One place's proposal."""

    target: Target
    path: str
    """The file's real path."""
    current: str
    proposed: str
    expected_hash: str
    """SHA-256 of the file's bytes as read (of no bytes for a missing file)."""
    exists: bool
    added: list[Added] = field(default_factory=list)
    duplicates: list[Duplicate] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    problem: str | None = None
    """Why nothing can be proposed here (the file cannot be read as it is), as a person at a
    shell reads it (the user memory named by its path and `--user` commands)."""
    withheld: list[Added] = field(default_factory=list)
    """Entries that belong here but were not proposed, since the file cannot be read
    (`problem`): said, so that a person is never told there is nothing to add."""

    @property
    def file(self) -> MemoryFile:
        return FILE_OF[self.target]

    @property
    def name(self) -> str:
        """How a person reads the place: "MEMORY.md", "USER.md", "your user memory"."""
        return "your user memory" if self.target == "user-memory" else self.target

    @property
    def size(self) -> int:
        return utf8_size(self.proposed)

    @property
    def hard_cap(self) -> int:
        return CAPS[self.file].hard

    @property
    def soft_cap(self) -> int:
        return CAPS[self.file].soft

    @property
    def over_by(self) -> int:
        """Bytes the proposed text is over the hard cap (0 within it)."""
        return max(0, self.size - self.hard_cap) if self.added else 0

    @property
    def changed(self) -> bool:
        return bool(self.added) and self.problem is None

    @property
    def applicable(self) -> bool:
        """Whether applying it is possible: something added, within the hard cap."""
        return self.changed and self.over_by == 0

    def over_cap_statement(self) -> str | None:
        """ "USER.md would be 3,500 bytes, 428 over its hard cap of 3,072: ..." """
        if not self.over_by or self.problem is not None:
            return None
        name = "Your user memory (USER.md)" if self.target == "user-memory" else self.target
        return (
            f"{name} would be {self.size:,} bytes, {self.over_by:,} over its hard cap of "
            f"{self.hard_cap:,}: nothing will be written to it. Shorten it first (the draft "
            "prompt below asks a language model for a version within its caps), or import "
            "fewer hosts at a time."
        )

    def draft_prompt(self) -> str | None:
        """The consolidation prompt for the proposed text, when it is over the hard cap: the
        one the editor gives (`metis.consolidationPrompt`), the user memory's for it, and with
        a secret already in the file redacted (the prompt is for a language model)."""
        if not self.over_by or self.problem is not None:
            return None
        user_memory = self.target == "user-memory"
        return consolidation_prompt(self.file, redact(self.proposed), user_memory=user_memory)

    def to_json(self) -> dict[str, object]:
        return {
            "target": self.target,
            "path": self.path,
            "exists": self.exists,
            "current": self.current,
            "proposed": self.proposed,
            "expected_hash": self.expected_hash,
            "size_bytes": self.size,
            "soft_cap_bytes": self.soft_cap,
            "hard_cap_bytes": self.hard_cap,
            "over_by": self.over_by,
            "applicable": self.applicable,
            "over_cap_statement": self.over_cap_statement(),
            "draft_prompt": self.draft_prompt(),
            "problem": self.problem,
            "added": [vars(a) for a in self.added],
            "duplicates": [vars(d) for d in self.duplicates],
            "refused": [vars(r) for r in self.refused],
            "withheld": [vars(w) for w in self.withheld],
        }


@dataclass
class ImportProposal:
    """What importing `hosts` would change, per place (always all three, in `TARGETS`
    order), and what was looked at, read and left unread."""

    workspace: str
    hosts: tuple[str, ...]
    targets: list[TargetProposal]
    looked_in: list[str]
    read: list[str]
    skipped: list[Skipped]

    @property
    def found_nothing(self) -> bool:
        """No host memory was read (or all of it was empty)."""
        return not self.read and not any(
            t.added or t.duplicates or t.refused or t.withheld for t in self.targets
        )

    @property
    def changed(self) -> bool:
        return any(t.changed for t in self.targets)

    @property
    def withheld(self) -> bool:
        """Entries were found for a place that cannot be read, and not proposed."""
        return any(t.withheld for t in self.targets)

    def target(self, name: Target) -> TargetProposal:
        return next(t for t in self.targets if t.target == name)

    def to_json(self) -> dict[str, object]:
        return {
            "workspace": self.workspace,
            "hosts": list(self.hosts),
            "found_nothing": self.found_nothing,
            "targets": [t.to_json() for t in self.targets],
            "looked_in": self.looked_in,
            "read": self.read,
            "skipped": [vars(s) for s in self.skipped],
        }


def build(
    store: MemoryStore,
    hosts: tuple[str, ...],
    memories: list[Memory],
    refs: WorkspaceRefs,
    *,
    looked_in: list[str],
    read: list[str],
    skipped: list[Skipped],
) -> ImportProposal:
    """The proposal for `memories` (what the hosts' readers found), against the store's files
    as they are now."""
    targets = [_current(store, name) for name in TARGETS]
    by_name = {t.target: t for t in targets}
    seen: dict[str, str] = {}
    for proposal in targets:
        if proposal.problem is None:
            # (a byte-order mark, as Notepad saves UTF-8, is no part of the first entry)
            for entry in parse(proposal.current.removeprefix("\ufeff")).entries:
                if not entry.is_empty:
                    seen.setdefault(entry.key, proposal.name)
    pending: dict[Target, list[str]] = {name: [] for name in TARGETS}
    for memory in memories:
        for item, line in items(memory):
            _take(memory, item, line, refs, by_name, seen, pending)
    for proposal in targets:
        if proposal.problem is None and pending[proposal.target]:
            proposal.proposed = appended(proposal.current, pending[proposal.target])
    return ImportProposal(str(store.workspace_path), hosts, targets, looked_in, read, skipped)


def _take(
    memory: Memory,
    item: str,
    line: int,
    refs: WorkspaceRefs,
    by_name: dict[Target, TargetProposal],
    seen: dict[str, str],
    pending: dict[Target, list[str]],
) -> None:
    target = by_name[place(memory, item, refs)]
    secrets = find_secrets(item)
    if secrets:
        first = secrets[0]
        where = line + item.count("\n", 0, first.start)
        target.refused.append(Refused(first.kind, memory.host, memory.source, where))
        return
    entries = parse(item).entries
    key = entries[0].key if entries else ""
    if not key:
        return
    if key in seen:
        target.duplicates.append(Duplicate(item, memory.host, memory.source, line, seen[key]))
        return
    seen[key] = f"{memory.source}:{line}"
    if target.problem is not None:
        target.withheld.append(Added(item, memory.host, memory.source, line))
        return
    target.added.append(Added(item, memory.host, memory.source, line))
    pending[target.target].append(item)


def _current(store: MemoryStore, name: Target) -> TargetProposal:
    owner = store.user_memory if name == "user-memory" else store
    file = FILE_OF[name]
    path = str(owner.path(file))
    try:
        snap = owner.snapshot(file)
    except MemoryStoreError as exc:
        said = store_error(exc)(CLI)
        if owner.is_user_memory:  # (else "USER.md", "--from FILE": the workspace's)
            said = for_person(said, path)
        return TargetProposal(name, path, "", "", "", False, problem=said)
    problem = None
    if not snap.utf8_valid:
        problem = (
            f"{path} is not valid UTF-8 (first bad byte at offset {snap.utf8_error_offset:,}): "
            "nothing is proposed for it; fix it by hand first"
        )
    return TargetProposal(
        name, path, snap.text, snap.text, snap.sha256, snap.exists, problem=problem
    )


def appended(current: str, new: list[str]) -> str:
    """`current` with `new` items after it, its own bytes untouched: right after a list that
    ends the file, else after a blank line; in the file's own line endings."""
    newline = "\r\n" if "\r\n" in current else "\n"
    block = newline.join(item.replace("\n", newline) for item in new) + newline
    if not current.strip():
        return current + block if not current else current.rstrip("\r\n") + block
    outline = parse(current)
    last = outline.entries[-1] if outline.entries else None
    ends_in_item = (
        last is not None
        and last.kind == "item"
        and not current[last.end :].strip()
        and current.endswith(newline)
        and not current.endswith(newline * 2)
    )
    if ends_in_item:
        return current + block
    if current.endswith(newline * 2):
        return current + block
    if current.endswith(newline):
        return current + newline + block
    return current + newline + newline + block
