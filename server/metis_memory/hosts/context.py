"""The memory as an agent host receives it from the hook: a header, then the user memory's
section (when there is one) and the spec's two, always under every host's limit on
injected text.

The hard caps bound a healthy workspace memory at 7 KiB; a file edited past its hard cap
by hand is cut at the cap here (the agent is told, and told how to fix it). The user
memory's USER.md adds up to 3 KiB more, which with both workspace files at their caps can
pass MAX_CONTEXT_CHARS: its section is then cut first, with a note that says by how much,
so the injection stays under Claude Code's 10,000-character hook limit whatever is on
disk. A user memory that cannot be read is a one-line note in its section: the workspace's
memory is sent all the same.
"""

from __future__ import annotations

import os

from ..store import fingerprint
from ..store.errors import MemoryFileTooLarge, MemoryStoreError, fmt_bytes
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
USER_MEMORY_HEADER = (
    "This is your persistent memory, kept by Metis Memory, as it is on disk now: your user "
    "memory (USER.md in every workspace: facts about the user that hold everywhere), then "
    "this workspace's .metis/USER.md (facts about the user) and .metis/MEMORY.md (facts "
    "about the workspace). Treat it as your own notes from earlier sessions. Change the "
    "workspace's files only with the memory_add, memory_replace and memory_consolidate "
    "tools, and the user memory only with user_memory_add, user_memory_replace and "
    "user_memory_consolidate; what holds only in this workspace goes in its files, never in "
    "the user memory (never edit the files, and use no other memory tool such as /memories/)."
)
"""HEADER when the user memory has a section: its tools are named only then."""
CHANGED_USER_MEMORY_HEADER = (
    "Your memory (the user memory or this workspace's) changed since you last saw it; this "
    "is its current content. Change the workspace's files only with the memory_add, "
    "memory_replace and memory_consolidate tools, and the user memory only with "
    "user_memory_add, user_memory_replace and user_memory_consolidate."
)

MAX_CONTEXT_CHARS = 9000
"""Below Claude Code's 10,000-character limit on hook output, the tightest of the hosts."""

USER_MEMORY = "user memory"
"""How the user memory's USER.md is named where it is cut."""


class MemoryContext(Frozen):
    """The files as read once: what to inject, and a digest that says whether it changed.

    `stale` is one line naming the entries that may be stale (`staleness.stale_note`), if
    any, or saying that they were not checked this time (the hook's time budget ran out);
    `on_disk` the workspace files' text as read (uncut), for a stale check made after the
    read; `too_large` the sizes of the files too large to read. `user_memory` is the user
    memory's USER.md as read ("" when there is none), `user_memory_problem` why it could not
    be read (its section is then a note saying so). (A plain class, not a dataclass: the
    hook imports this, see `store/values.py`.)"""

    __slots__ = (
        "_shown_cache",
        "digest",
        "on_disk",
        "stale",
        "too_large",
        "user_memory",
        "user_memory_problem",
    )
    digest: str
    stale: str | None
    on_disk: Mapping[MemoryFile, str]
    too_large: Mapping[MemoryFile, int]
    user_memory: str
    user_memory_problem: str | None
    _shown_cache: dict[str, str]

    def __init__(
        self,
        digest: str,
        stale: str | None = None,
        on_disk: Mapping[MemoryFile, str] | None = None,
        too_large: Mapping[MemoryFile, int] | None = None,
        user_memory: str = "",
        user_memory_problem: str | None = None,
    ) -> None:
        init_field(self, "digest", digest)
        init_field(self, "stale", stale)
        init_field(self, "on_disk", {} if on_disk is None else on_disk)
        init_field(self, "too_large", {} if too_large is None else too_large)
        init_field(self, "user_memory", user_memory)
        init_field(self, "user_memory_problem", user_memory_problem)
        init_field(self, "_shown_cache", {})

    def __repr__(self) -> str:
        return (
            f"MemoryContext(digest={self.digest!r}, stale={self.stale!r}, "
            f"too_large={dict(self.too_large)!r}, "
            f"user_memory_problem={self.user_memory_problem!r})"
        )

    def with_stale(self, stale: str | None) -> MemoryContext:
        """The same read with `stale` as its note (what is shown is kept, not made again)."""
        context = MemoryContext(
            self.digest,
            stale,
            self.on_disk,
            self.too_large,
            self.user_memory,
            self.user_memory_problem,
        )
        context._shown_cache.update(self._shown_cache)
        return context

    @property
    def user(self) -> str:
        return self._shown(MemoryFile.USER)

    @property
    def memory(self) -> str:
        return self._shown(MemoryFile.MEMORY)

    @property
    def user_memory_shown(self) -> str:
        """What the model reads of the user memory: as a workspace's USER.md is shown, or the
        one-line note saying why it could not be read; "" when there is none."""
        shown = self._shown_cache.get(USER_MEMORY)
        if shown is None:
            if self.user_memory_problem is not None:
                shown = _one_line(
                    redact(f"[Your user memory was not read: {self.user_memory_problem}]")
                )
            else:
                shown = _within_hard_cap(
                    MemoryFile.USER, self.user_memory, USER_MEMORY, "user_memory_consolidate"
                )
            self._shown_cache[USER_MEMORY] = shown
        return shown

    def _shown(self, f: MemoryFile) -> str:
        """What the model reads of `f`: cut at its hard cap, then redacted (a secret across
        the cut is redacted whole; a 1 MiB file costs the scan of what is shown), only when
        asked, and once: a prompt whose memory did not change sends nothing, and pays for no
        redaction."""
        shown = self._shown_cache.get(f.value)
        if shown is None:
            if f in self.too_large:
                shown = _too_large_note(f, self.too_large[f])
            else:
                shown = _within_hard_cap(f, self.on_disk.get(f, ""))
            self._shown_cache[f.value] = shown
        return shown

    @property
    def has_user_memory(self) -> bool:
        """Whether the user memory has a section: text in it, or a note that it was not read."""
        return self.user_memory_problem is not None or bool(self.user_memory.strip())

    @property
    def empty(self) -> bool:
        return (
            not self.too_large
            and not any(t.strip() for t in self.on_disk.values())
            and not self.has_user_memory
        )

    def text(self, *, changed: bool = False, delimiters: Delimiters = TAGS) -> str:
        """The injection: the delimited header and sections (never over MAX_CONTEXT_CHARS:
        past it, the user memory's section is cut first, with a note)."""
        if self.has_user_memory:
            header = CHANGED_USER_MEMORY_HEADER if changed else USER_MEMORY_HEADER
        else:
            header = CHANGED_HEADER if changed else HEADER
        opening, closing, neutralise = delimiters.open, delimiters.close, delimiters.neutralise
        note = f"\n\n{neutralise(self.stale)}" if self.stale else ""

        def whole(user_memory: str) -> str:
            body = compose_prompt("", self.user, self.memory, user_memory=user_memory)
            return f"{opening}\n{header}\n\n{neutralise(body)}{note}\n{closing}"

        user_memory = self.user_memory_shown
        text = whole(user_memory)
        over = len(text) - MAX_CONTEXT_CHARS
        if over > 0 and user_memory:
            cut = over
            for _ in range(3):  # (more, where escaping a delimiter lengthened what was kept)
                text = whole(_cut_user_memory(user_memory, cut, over))
                if len(text) <= MAX_CONTEXT_CHARS:
                    break
                cut += len(text) - MAX_CONTEXT_CHARS
        if len(text) > MAX_CONTEXT_CHARS:  # only reachable through multi-line cut notes
            text = text[: MAX_CONTEXT_CHARS - len(closing) - 2] + "…\n" + closing
        return text


def read_context(store: MemoryStore, *, stale: bool = True) -> MemoryContext:
    """The user memory (`store.user_memory`) and the workspace's two files; raises
    MemoryStoreError when a workspace file cannot be read (a symlink out of the workspace, a
    permission problem), while a user memory that cannot be read is a note in its section.
    With `stale=False` the stale check is left to the caller (the hook runs it against a
    deadline: `hook.STALE_BUDGET_S`)."""
    too_large: dict[MemoryFile, int] = {}
    on_disk: dict[MemoryFile, str] = {}
    user_memory, problem, parts = _read_user_memory(store)
    for f in (MemoryFile.USER, MemoryFile.MEMORY):  # (fingerprint.FILES' order)
        try:
            snap = store.snapshot(f)
        except MemoryFileTooLarge as exc:
            too_large[f] = exc.size
            parts.append(fingerprint.too_large_part(f.value, exc.size))
            continue
        on_disk[f] = snap.text
        parts.append(fingerprint.part_of_sha(f.value, snap.sha256))
    context = MemoryContext(
        fingerprint.digest(parts),
        on_disk=on_disk,
        too_large=too_large,
        user_memory=user_memory,
        user_memory_problem=problem,
    )
    if not stale:
        return context
    return context.with_stale(stale_note_for(store, on_disk))


def stale_note_for(store: MemoryStore, on_disk: Mapping[MemoryFile, str]) -> str | None:
    """The one-line stale note for the files' text, however long the check takes; a
    reference holding a secret (a token in a path) is named redacted, like the files."""
    from ..workspace.staleness import stale_note, stale_references

    note = stale_note(stale_references(store, on_disk))
    return None if note is None else redact(note)


def _read_user_memory(store: MemoryStore) -> tuple[str, str | None, list[str]]:
    """(the user memory's text, why it could not be read, its share of the digest: none when
    there is no file). Whatever goes wrong here is said in its section, and the workspace's
    memory is read and sent as ever."""
    name = fingerprint.USER_MEMORY_PART
    try:
        user = store.user_memory
        path = os.path.join(user.workspace_path, user.folder, MemoryFile.USER.value)
        snap = user.snapshot(MemoryFile.USER)
    except MemoryFileTooLarge as exc:
        problem = (
            f"{path} is {fmt_bytes(exc.size)}, far past its {fmt_bytes(exc.hard_cap)} hard "
            "cap; replace it whole with user_memory_consolidate"
        )
        return "", problem, [fingerprint.too_large_part(name, exc.size)]
    except (MemoryStoreError, OSError, KeyError, ValueError) as exc:
        # (KeyError: no account to find a home in; ValueError: a path no OS takes)
        problem = str(exc) if isinstance(exc, MemoryStoreError) else repr(exc)
        return "", problem, [fingerprint.unreadable_part(name, problem)]
    if not snap.exists:
        return "", None, []
    part = [fingerprint.part_of_sha(name, snap.sha256)]
    if not snap.utf8_valid:
        problem = (
            f"{path} is not valid UTF-8 (its first bad byte is at offset "
            f"{snap.utf8_error_offset:,}); save it as UTF-8, or replace it whole with "
            "user_memory_consolidate"
        )
        return "", problem, part
    return snap.text, None, part


def _within_hard_cap(
    f: MemoryFile, text: str, name: str | None = None, tool: str = "memory_consolidate"
) -> str:
    hard = CAPS[f].hard
    kept, left_out = redact_within(text, hard)
    if not left_out:
        return kept
    return (
        f"{kept}\n[… {fmt_bytes(left_out)} more not shown: {name or f.value} is "
        f"{fmt_bytes(len(text.encode('utf-8')))}, over its {fmt_bytes(hard)} hard cap. Rewrite "
        f"it shorter with {tool}.]"
    )


def _cut_user_memory(shown: str, cut: int, over: int) -> str:
    """The user memory's section as shown, `cut` characters (and its note's) shorter, with a
    note that the whole memory was `over` characters too long: it is cut first, as the one
    part that is not this workspace's."""
    note = (
        f"[… the rest of the user memory is not shown: with it, the memory is {over:,} "
        f"characters over the {MAX_CONTEXT_CHARS:,} a hook sends. Shorten it with "
        "user_memory_consolidate.]"
    )
    shown = shown.rstrip()  # (as composed: its trailing blank lines are not shown either)
    keep = max(0, len(shown) - cut - len(note) - 1)
    return f"{shown[:keep].rstrip()}\n{note}" if keep else note


def _one_line(text: str) -> str:
    """`text` on one line: a path or an error can hold a line break."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _too_large_note(f: MemoryFile, size: int) -> str:
    return (
        f"[{f.value} is {fmt_bytes(size)}, too large to read; rewrite it with "
        f"memory_consolidate (hard cap {fmt_bytes(CAPS[f].hard)}).]"
    )
