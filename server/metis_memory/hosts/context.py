"""The memory as an agent host receives it from the hook: a header, then the spec's
sections, always under every host's limit on injected text.

The hard caps bound a healthy memory at 7 KiB; a file edited past its hard cap by hand
is cut at the cap here (the agent is told, and told how to fix it), so the injection
stays under Claude Code's 10,000-character hook limit whatever is on disk.
"""

from __future__ import annotations

from ..store import fingerprint
from ..store.errors import MemoryFileTooLarge, fmt_bytes
from ..store.files import CAPS, MemoryFile
from ..store.memory_store import MemoryStore
from ..store.prompt import compose_prompt
from ..store.values import Frozen, init_field
from ..tools.redaction import redact, redact_within
from .delimiters import TAGS, Delimiters

TYPE_CHECKING = False
if TYPE_CHECKING:  # (for annotations only)
    from collections.abc import Mapping

HEADER = (
    "This is the persistent memory of this workspace, kept by Metis Memory in "
    ".metis/USER.md (facts about the user) and .metis/MEMORY.md (facts about the "
    "workspace), as it is on disk now. Treat it as your own notes from earlier sessions. "
    "Change it only with the memory_add, memory_replace and memory_consolidate tools "
    "(never by editing the files, and not with any other memory tool such as /memories/)."
)
CHANGED_HEADER = (
    "The workspace memory changed since you last saw it; this is its current content. "
    "Change it only with the memory_add, memory_replace and memory_consolidate tools."
)

MAX_CONTEXT_CHARS = 9000
"""Below Claude Code's 10,000-character limit on hook output, the tightest of the hosts."""


class MemoryContext(Frozen):
    """The two files as read once: what to inject, and a digest that says whether it changed.

    `stale` is one line naming the entries that may be stale (`staleness.stale_note`), if
    any, or saying that they were not checked this time (the hook's time budget ran out);
    `on_disk` the files' text as read (uncut), for a stale check made after the read;
    `too_large` the sizes of the files too large to read. (A plain class, not a dataclass:
    the hook imports this, see `store/values.py`.)"""

    __slots__ = ("_shown_cache", "digest", "on_disk", "stale", "too_large")
    digest: str
    stale: str | None
    on_disk: Mapping[MemoryFile, str]
    too_large: Mapping[MemoryFile, int]
    _shown_cache: dict[MemoryFile, str]

    def __init__(
        self,
        digest: str,
        stale: str | None = None,
        on_disk: Mapping[MemoryFile, str] | None = None,
        too_large: Mapping[MemoryFile, int] | None = None,
    ) -> None:
        init_field(self, "digest", digest)
        init_field(self, "stale", stale)
        init_field(self, "on_disk", {} if on_disk is None else on_disk)
        init_field(self, "too_large", {} if too_large is None else too_large)
        init_field(self, "_shown_cache", {})

    def __repr__(self) -> str:
        return (
            f"MemoryContext(digest={self.digest!r}, stale={self.stale!r}, "
            f"too_large={dict(self.too_large)!r})"
        )

    def with_stale(self, stale: str | None) -> MemoryContext:
        """The same read with `stale` as its note (what is shown is kept, not made again)."""
        context = MemoryContext(self.digest, stale, self.on_disk, self.too_large)
        context._shown_cache.update(self._shown_cache)
        return context

    @property
    def user(self) -> str:
        return self._shown(MemoryFile.USER)

    @property
    def memory(self) -> str:
        return self._shown(MemoryFile.MEMORY)

    def _shown(self, f: MemoryFile) -> str:
        """What the model reads of `f`: cut at its hard cap, then redacted (a secret across
        the cut is redacted whole; a 1 MiB file costs the scan of what is shown), only when
        asked, and once: a prompt whose memory did not change sends nothing, and pays for no
        redaction."""
        shown = self._shown_cache.get(f)
        if shown is None:
            if f in self.too_large:
                shown = _too_large_note(f, self.too_large[f])
            else:
                shown = _within_hard_cap(f, self.on_disk.get(f, ""))
            self._shown_cache[f] = shown
        return shown

    @property
    def empty(self) -> bool:
        return not self.too_large and not any(t.strip() for t in self.on_disk.values())

    def text(self, *, changed: bool = False, delimiters: Delimiters = TAGS) -> str:
        """The injection: the delimited header and sections (never over MAX_CONTEXT_CHARS)."""
        header = CHANGED_HEADER if changed else HEADER
        opening, closing, neutralise = delimiters.open, delimiters.close, delimiters.neutralise
        body = neutralise(compose_prompt("", self.user, self.memory))
        note = f"\n\n{neutralise(self.stale)}" if self.stale else ""
        text = f"{opening}\n{header}\n\n{body}{note}\n{closing}"
        if len(text) > MAX_CONTEXT_CHARS:  # only reachable through multi-line cut notes
            text = text[: MAX_CONTEXT_CHARS - len(closing) - 2] + "…\n" + closing
        return text


def read_context(store: MemoryStore, *, stale: bool = True) -> MemoryContext:
    """Both files, each cut at its hard cap; raises MemoryStoreError when one cannot be read
    (a symlink out of the workspace, a permission problem). With `stale=False` the stale
    check is left to the caller (the hook runs it against a deadline: `hook.STALE_BUDGET_S`).
    """
    too_large: dict[MemoryFile, int] = {}
    on_disk: dict[MemoryFile, str] = {}
    parts: list[str] = []
    for f in (MemoryFile.USER, MemoryFile.MEMORY):  # (fingerprint.FILES' order)
        try:
            snap = store.snapshot(f)
        except MemoryFileTooLarge as exc:
            too_large[f] = exc.size
            parts.append(fingerprint.too_large_part(f.value, exc.size))
            continue
        on_disk[f] = snap.text
        parts.append(fingerprint.part_of_sha(f.value, snap.sha256))
    context = MemoryContext(fingerprint.digest(parts), on_disk=on_disk, too_large=too_large)
    if not stale:
        return context
    return context.with_stale(stale_note_for(store, on_disk))


def stale_note_for(store: MemoryStore, on_disk: Mapping[MemoryFile, str]) -> str | None:
    """The one-line stale note for the files' text, however long the check takes; a
    reference holding a secret (a token in a path) is named redacted, like the files."""
    from ..workspace.staleness import stale_note, stale_references

    note = stale_note(stale_references(store, on_disk))
    return None if note is None else redact(note)


def _within_hard_cap(f: MemoryFile, text: str) -> str:
    hard = CAPS[f].hard
    kept, left_out = redact_within(text, hard)
    if not left_out:
        return kept
    return (
        f"{kept}\n[… {fmt_bytes(left_out)} more not shown: {f.value} is "
        f"{fmt_bytes(len(text.encode('utf-8')))}, over its {fmt_bytes(hard)} hard cap. Rewrite "
        "it shorter with memory_consolidate.]"
    )


def _too_large_note(f: MemoryFile, size: int) -> str:
    return (
        f"[{f.value} is {fmt_bytes(size)}, too large to read; rewrite it with "
        f"memory_consolidate (hard cap {fmt_bytes(CAPS[f].hard)}).]"
    )
