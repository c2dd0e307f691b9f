"""The write log as people and scripts read it, and what they do with it: each record's
entries added and removed, blame, undo, restore, and the archive of removed entries.

The store keeps each write's whole file before and after; entries are derived here (the
store knows bytes, not Markdown). Every text shown is redacted, as on every read path. Undo,
restore and put-back are whole-file compare-and-swap writes through the store, so they keep
the caps, never overwrite a write that lands meanwhile, and are logged themselves.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass
from datetime import datetime, timezone

from ..analysis.entries import Entry, Outline, common_prefix, parse, removal_span
from ..store.errors import fmt_bytes
from ..store.files import MemoryFile, parse_memory_file
from ..store.memory_store import MemoryStore, WriteResult, sha256_hex
from ..store.provenance import USER, Provenance
from ..store.trace import TraceRecord
from .errors import ToolExecutionError
from .people import EDITOR, Surface
from .redaction import redact
from .secret_guard import refuse_new_secrets

ARCHIVING = frozenset({"consolidate", "undo", "restore"})
"""Operations whose removed entries the archive keeps (a replace shows its old text in its
own record; an outside edit is not ours to archive)."""

_SHORT = 60


# ---- entries of a record -------------------------------------------------------------------
_OUTLINES_KEPT = 8
_outlines: OrderedDict[str, Outline] = OrderedDict()
_CHANGES_KEPT = 2048
_changes: OrderedDict[tuple[str, str], tuple[tuple[Entry, ...], tuple[Entry, ...]]] = OrderedDict()
_cache_lock = threading.Lock()


def _outline(text: str, near: str | None = None) -> Outline:
    """`parse(text)`, from the outline of `near` when one is at hand: a record's before is
    the previous record's after, and one write changes a few entries, so a replay of the log
    parses again only what each write changed (`parse`'s `previous`: exactly a full parse).
    The last few outlines are kept."""
    with _cache_lock:
        found = _outlines.get(text)
        if found is not None:
            _outlines.move_to_end(text)
            return found
        base = _outlines.get(near) if near is not None else None
    outline = parse(text, previous=base)
    with _cache_lock:
        _outlines[text] = outline
        while len(_outlines) > _OUTLINES_KEPT:
            _outlines.popitem(last=False)
    return outline


def entries(text: str | None) -> list[Entry]:
    return [] if text is None else [e for e in _outline(text).entries if not e.is_empty]


def _diff(before: str | None, after: str | None) -> tuple[list[Entry], list[Entry]]:
    """The entries `after` added and those `before` lost (see `entry_changes`): of each
    text, the copies past the other's count, the later ones. Entries the two share from the
    top are skipped unread (a multiset difference is the same without them, and they are
    the first copies, which are never the ones counted)."""
    old = [] if before is None else _outline(before, after).entries
    new = [] if after is None else _outline(after, before).entries
    old_keys = [e.key for e in old]
    new_keys = [e.key for e in new]
    same = common_prefix(old_keys, new_keys)
    return _counted(new[same:], old_keys[same:]), _counted(old[same:], new_keys[same:])


def _counted(these: list[Entry], other_keys: list[str]) -> list[Entry]:
    """The entries of `these` (empty ones aside) past the count of their key in the other."""
    left = Counter(other_keys)
    beyond: list[Entry] = []
    for e in these:
        key = e.key
        if not key:
            continue
        if left[key] > 0:
            left[key] -= 1
        else:
            beyond.append(e)
    return beyond


def entry_changes(before: str | None, after: str | None) -> tuple[list[str], list[str]]:
    """Entries `after` has that `before` had not, and those it lost (as written), counted as
    a multiset of normalised texts: a reflowed entry is neither."""
    added, removed = _diff(before, after)
    return [e.text for e in added], [e.text for e in removed]


def _record_diff(record: TraceRecord) -> tuple[tuple[Entry, ...], tuple[Entry, ...]]:
    """`_diff` of a record's two sides, kept by their hashes (a record never changes, and the
    same two texts always differ alike): a hover after a write replays the log again, and
    only the new records are parsed."""
    if record.before_text is None or record.after_text is None:
        added, removed = _diff(record.before_text, record.after_text)
        return tuple(added), tuple(removed)
    key = (record.before_hash, record.after_hash)
    with _cache_lock:
        found = _changes.get(key)
        if found is not None:
            _changes.move_to_end(key)
            return found
    added, removed = _diff(record.before_text, record.after_text)
    # Only the changed entries are kept, cut loose from the text they were parsed from.
    kept = (tuple(added), tuple(removed))
    with _cache_lock:
        _changes[key] = kept
        while len(_changes) > _CHANGES_KEPT:
            _changes.popitem(last=False)
    return kept


def record_changes(record: TraceRecord) -> tuple[list[str], list[str]]:
    """`entry_changes` of a record's before and after."""
    added, removed = _record_diff(record)
    return [e.text for e in added], [e.text for e in removed]


# ---- how a record reads ------------------------------------------------------------------
KNOWN_ACTORS = {
    # Who writes, as the write log records it (a name, then a space and a version), and the
    # product a person knows. MCP writes: each client's `clientInfo.name` from `initialize`.
    # The four hosts' were seen by tests/real_hosts (the real binaries, one MCP write each,
    # read back from the log): Claude Code 2.1.330 sends "claude-code" "2.1.330", Codex
    # 0.169.0 "codex-mcp-client" "0.169.0", Gemini CLI 0.61.0 "gemini-cli-mcp-client"
    # "0.61.0" (also in its bundle: `new Client({name: "gemini-cli-mcp-client", version:
    # clientVersion})`), Copilot CLI 1.0.102 "copilot-cli" "1.0.102".
    "claude-code": "Claude Code",
    "codex-mcp-client": "Codex",
    "gemini-cli-mcp-client": "Gemini CLI",
    "copilot-cli": "Copilot CLI",
    # The CLI run from a host's shell tool is logged under the names hosts/actor.py gives
    # (claude-code and copilot-cli as above, and these two).
    "codex": "Codex",
    "gemini-cli": "Gemini CLI",
    # VS Code sends its product's `nameLong` and `version` (workbench.js of VS Code 1.139.1,
    # in .cache/code-server: `clientInfo:{name:l.nameLong,version:l.version}`): "Visual
    # Studio Code", "Visual Studio Code - Insiders"; code-server sends "code-server", its
    # own name, kept as it is.
    "visual studio code": "VS Code",
    "visual studio code - insiders": "VS Code Insiders",
    # The MCP Inspector (github.com/modelcontextprotocol/inspector): its web UI sends
    # "inspector-client" from 0.16 (client/src/lib/constants.ts, the package's name) and
    # "mcp-inspector" before that and again in 2.x (core/mcp/inspectorClient.ts); its CLI
    # "inspector-cli", its 2.x terminal UI "inspector-tui".
    "mcp-inspector": "MCP Inspector",
    "inspector-client": "MCP Inspector",
    "inspector-cli": "MCP Inspector",
    "inspector-tui": "MCP Inspector",
    # The hosts of issue 42, seen the same way (opencode 1.18.33, Qwen Code 0.24.4, the Cline
    # CLI 3.0.65). opencode sends its name and version (its binary, the MCP client it makes
    # per server: `new Client({name:"opencode",version:<its version>},...)`): "opencode"
    # "1.18.33".
    "opencode": "opencode",
    # Qwen Code names its client after the server entry (chunks/chunk-DPEB6S2R.js,
    # `McpClient`: `qwen-cli-mcp-client-${this.serverName}`) and gives it a version of
    # "0.0.1" (`createMcpClient`: `{ name, version: "0.0.1" }`): "qwen-cli-mcp-client-metis-
    # memory" "0.0.1". A name ending in "*" stands for any name it begins.
    "qwen-cli-mcp-client-*": "Qwen Code",
    # The Cline CLI names its client nothing, so its SDK's defaults go (@cline/core 0.0.86,
    # dist/index.js, the MCP client factory: `{name: clientName?.trim() || "@cline/core",
    # version: clientVersion?.trim() || "0.0.0"}`): "@cline/core" "0.0.0". Any program on
    # Cline's SDK that names itself no better sends the same: it reads as Cline.
    "@cline/core": "Cline",
    # Their shell doors (hosts/actor.py): opencode as above, and these two.
    "qwen-code": "Qwen Code",
    "cline-cli": "Cline CLI",
}

PLACEHOLDER_VERSIONS = {"qwen-cli-mcp-client-*": "0.0.1", "@cline/core": "0.0.0"}
"""Versions these clients send whatever their own is: not shown, since "Qwen Code 0.0.1"
would read as the product's version."""


@functools.lru_cache(maxsize=256)
def named(text: str) -> str:
    """An actor or session as the log shows it: redacted. A client names itself (MCP's
    `clientInfo`, the Anthropic tool's application) and a host's session variable is
    whatever the environment holds, so either may carry a token; a log holds few of them."""
    return redact(text)


def actor_name(actor: str) -> str:
    """A person's word for who wrote: `user` is "you"; a known client its product name,
    keeping its version ("claude-code 2.1.4" → "Claude Code 2.1.4"). Names may hold spaces
    ("Visual Studio Code 1.139.1"): the longest known name the actor starts with wins.
    Redacted (`named`)."""
    if actor == USER:
        return "you"
    folded = actor.casefold()
    for name in sorted(KNOWN_ACTORS, key=len, reverse=True):
        version = _version_after(name, folded, actor)
        if version is not None:
            version = "" if version == PLACEHOLDER_VERSIONS.get(name) else version
            return named(f"{KNOWN_ACTORS[name]} {version}".strip())
    return named(actor)


def _version_after(name: str, folded: str, actor: str) -> str | None:
    """What follows known `name` in `actor` (its version, or ""), or None when the actor is
    not that name. A `name*` is followed by the rest of a name, then a version: the last word,
    when it begins with a digit."""
    if name.endswith("*"):
        prefix = name[:-1]
        if not folded.startswith(prefix) or len(folded) == len(prefix):
            return None
        rest, _, last = actor[len(prefix) :].rpartition(" ")
        return last if rest and last[:1].isdigit() else ""
    if folded == name or folded.startswith(name + " "):
        return actor[len(name) :].strip()
    return None


def door_phrase(record: TraceRecord, *, user_memory: bool = False) -> str:
    """How the write arrived, e.g. "through memory_add over MCP", "with metis-memory undo"
    (with `user_memory`, a record of the user memory's log: "through user_memory_add over
    MCP", "with metis-memory add --user")."""
    tool = {
        "add": "memory_add",
        "replace": "memory_replace",
        "consolidate": "memory_consolidate",
    }.get(record.operation, record.operation)
    if user_memory and record.operation in ("add", "replace", "consolidate"):
        tool = f"user_{tool}"
    flag = " --user" if user_memory else ""
    return {
        "mcp": f"through {tool} over MCP",
        "language-model-tool": f"through {tool} in VS Code chat",
        "anthropic-memory-tool": "through the Anthropic memory tool",
        "cli": f"with metis-memory {record.operation}{flag}",
        "editor": "in the editor"
        if record.operation in _TOOLS
        else f"in the editor ({record.operation})",
        "python": f"through the Python API ({record.operation})",
        "outside": "outside Metis (an editor without it, git, another program)",
    }.get(record.door, f"through {record.door}")


_TOOLS = frozenset({"add", "replace", "consolidate", "edit"})


def person(record: TraceRecord, *, user_memory: bool = False) -> str:
    """Who and how, capitalised: "Claude Code 2.1.4 through memory_add over MCP", "You in
    the editor", "An outside edit"."""
    if record.door == "outside":
        return "An outside edit"
    who = actor_name(record.actor)
    who = "You" if who == "you" else who
    accepted = (
        " (accepted by you)" if record.detail and record.detail.startswith("accepted") else ""
    )
    return f"{who} {door_phrase(record, user_memory=user_memory)}{accepted}"


def short(text: str, limit: int = _SHORT) -> str:
    line = " ".join(redact(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def summary(record: TraceRecord, added: list[str], removed: list[str]) -> str:
    """One line: what the write did to the entries."""
    op = record.operation
    label = {"outside": "outside edit", "create": "created"}.get(op, op)
    if record.before_text is None or record.after_text is None:
        return (
            f"{label}: {fmt_bytes(record.before_size_bytes)} → "
            f"{fmt_bytes(record.after_size_bytes)} (too large to keep)"
        )
    if op == "add" and len(added) == 1 and not removed:
        return f"added “{short(added[0])}”"
    if op == "replace" and len(added) == 1 and len(removed) == 1:
        old, new = where_they_differ(removed[0], added[0])
        return f"replaced “{old}” with “{new}”"
    parts = []
    if added:
        parts.append(
            f"{len(added)} added" + (f" (“{short(added[0], 40)}”)" if len(added) == 1 else "")
        )
    if removed:
        parts.append(
            f"{len(removed)} removed"
            + (f" (“{short(removed[0], 40)}”)" if len(removed) == 1 else "")
        )
    what = ", ".join(parts) if parts else "no entry changed"
    return f"{label}: {what}"


def where_they_differ(old: str, new: str, width: int = 28) -> tuple[str, str]:
    """Both texts shortened around their first difference: "- Build with make; run the
    tests" → "… run the tests first" says what a replace changed; both cut from the start
    would say the same twice."""
    a, b = (" ".join(redact(t).split()) for t in (old, new))
    same = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        same += 1
    start = 0
    if same > width // 2:  # begin at the word a few characters before the difference
        space = a.rfind(" ", 0, same - 8)
        start = space + 1 if space > 0 else same - 8

    def cut(text: str) -> str:
        text = text[start:]
        text = text if len(text) <= width else text[: width - 1] + "…"
        return ("…" if start else "") + text

    return cut(a), cut(b)


def record_json(record: TraceRecord, *, user_memory: bool = False) -> dict[str, object]:
    """A record as `metis-memory log --json` and the editor's history show it (redacted;
    `user_memory`: a record of the user memory's log)."""
    added, removed = record_changes(record)
    return {
        "id": record.id,
        "time": record.time,
        "file": record.file,
        "operation": record.operation,
        "door": record.door,
        "actor": named(record.actor),
        "session": named(record.session) if record.session is not None else None,
        "before_hash": record.before_hash,
        "after_hash": record.after_hash,
        "before_size_bytes": record.before_size_bytes,
        "after_size_bytes": record.after_size_bytes,
        "added": [redact(t) for t in added],
        "removed": [redact(t) for t in removed],
        "summary": summary(record, added, removed),
        "person": person(record, user_memory=user_memory),
        "detail": record.detail,
    }


def ago(time: str, now: datetime | None = None) -> str:
    """ "2 days ago" for an ISO time from the log."""
    try:
        then = datetime.fromisoformat(time.replace("Z", "+00:00"))
    except ValueError:
        return time
    seconds = int(((now or datetime.now(timezone.utc)) - then).total_seconds())
    if seconds < 60:
        return "just now"
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            n = seconds // size
            return f"{n} {unit}{'s' if n != 1 else ''} ago"
    return "just now"  # pragma: no cover - unreachable


# ---- blame -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Blamed:
    line: int
    """1-based first line of the entry."""
    end_line: int
    text: str
    origin: str
    """`log` (a record added it), `before-log` (it predates the log), `outside` (an edit the
    log has not seen yet)."""
    record: TraceRecord | None
    user_memory: bool = False
    """An entry of the user memory (its writers' tools are the user memory's)."""

    def hover(self, now: datetime | None = None) -> str:
        record = self.record
        if self.origin == "before-log" or record is None:
            if self.origin == "outside":
                return "Added by an outside edit not yet in the history"
            return "Added before the history began"
        when = ago(record.time, now)
        if record.door == "outside":
            return f"Added by an outside edit, {when}"
        who = person(record, user_memory=self.user_memory)
        who = "you" + who[3:] if who.startswith("You") else who
        return f"Added by {who}, {when}"

    def to_json(self) -> dict[str, object]:
        record = self.record
        return {
            "line": self.line,
            "end_line": self.end_line,
            "text": redact(self.text),
            "id": record.id if record else None,
            "actor": named(record.actor) if record else None,
            "door": record.door if record else None,
            "operation": record.operation if record else None,
            "time": record.time if record else None,
            "origin": self.origin,
            "hover": self.hover(),
        }


def blame(store: MemoryStore, file: MemoryFile | str) -> list[Blamed]:
    """Who added each entry of the file as it is now."""
    f = parse_memory_file(file)
    snap = store.snapshot(f)
    found = blame_text(snap.text, snap.sha256, store.history_oldest_first(f))
    if store.is_user_memory:
        found = [dataclasses.replace(b, user_memory=True) for b in found]
    return found


def blame_text(text: str, sha256: str, records: list[TraceRecord]) -> list[Blamed]:
    """Replay the log: each entry key has the records that added its living copies (a
    multiset, oldest first); what the first record found, or what a gap in the chain let
    in, is from before the log."""
    owners: dict[str, list[TraceRecord | None]] = {}
    previous_after: str | None = None
    for record in records:
        if record.before_text is None or record.after_text is None:
            owners = {}  # too large to keep: what follows counts as from before the log
            previous_after = record.after_hash
            continue
        if previous_after != record.before_hash:  # first record, or a gap: start from here
            owners = {}
            for e in entries(record.before_text):
                owners.setdefault(e.key, []).append(None)
        added, removed = _record_diff(record)
        for e in removed:
            stack = owners.get(e.key)
            if stack:
                stack.pop()
        for e in added:
            owners.setdefault(e.key, []).append(record)
        previous_after = record.after_hash
    unseen = bool(records) and previous_after != sha256
    result: list[Blamed] = []
    taken: Counter[str] = Counter()
    for e in entries(text):
        stack = owners.get(e.key, [])
        i = taken[e.key]
        taken[e.key] += 1
        if i < len(stack):
            owner = stack[i]
            origin = "log" if owner is not None else "before-log"
        else:
            owner, origin = None, "outside" if unseen else "before-log"
        result.append(Blamed(e.first_line + 1, e.last_line + 1, e.text, origin, owner))
    return result


def _key(text: str) -> str:
    found = entries(text)
    return found[0].key if found else " ".join(text.split()).casefold()


# ---- undo, restore, put back -------------------------------------------------------------
class Refused(ToolExecutionError):
    """An undo, restore or put-back that cannot be made: nothing was written."""

    def __init__(self, message: str, code: str = "conflict", *, editor: str | None = None) -> None:
        """`editor`: the same for a person in the editor, where the terminal's commands
        named in `message` are buttons of Memory History."""

        def people(surface: Surface) -> str:
            return editor if editor is not None and surface is EDITOR else message

        super().__init__(code, message, people=people)  # type: ignore[arg-type]


def find_record(store: MemoryStore, record_id: int) -> TraceRecord:
    record = store.record(record_id)
    if record is None:
        raise Refused(
            f"there is no change #{record_id} in the history (the history keeps the last "
            "1,000 writes): nothing was written. List them with `metis-memory log`.",
            "not_found",
            editor=f"There is no change #{record_id} in the history (it keeps the last 1,000 "
            "writes): nothing was written.",
        )
    return record


def undo(store: MemoryStore, record_id: int, by: Provenance) -> WriteResult:
    """Reverse change `record_id` where its entries are still as it left them."""
    record = find_record(store, record_id)
    f = parse_memory_file(record.file)
    if record.before_text is None or record.after_text is None:
        raise Refused(
            f"change #{record_id} to {f.value} was too large to keep "
            f"({fmt_bytes(max(record.before_size_bytes, record.after_size_bytes))}), so it "
            "cannot be undone: nothing was written."
        )
    snap = store.snapshot(f)
    current = snap.text
    new = record.before_text if snap.sha256 == record.after_hash else _reverse(record, current)
    refuse_new_secrets(
        "undo",
        "file as the undo would leave it",
        new,
        current,
        f,
        user_memory=store.is_user_memory,
    )
    return store.consolidate(
        f,
        new,
        expected_hash=snap.sha256,
        by=by,
        operation="undo",
        detail=f"undoes #{record_id}",
    )


def _reverse(record: TraceRecord, current: str) -> str:
    added, removed = record_changes(record)
    if not added and not removed:
        raise Refused(
            f"change #{record.id} to {record.file} changed no entry (only headings or "
            "spacing), and the file has changed since: undo it by hand, or restore the "
            f"version before it (`metis-memory log {record.file}` lists the change before "
            f"#{record.id}; `metis-memory restore {record.file} --to` that change's id). "
            "Nothing was written.",
            editor=f"Change #{record.id} to {record.file} changed no entry (only headings or "
            "spacing), and the file has changed since: undo it by hand, or select the change "
            "before it in Memory History and Restore This Version. Nothing was written.",
        )
    text = current
    outline = parse(text)
    have = Counter(e.key for e in outline.entries)
    blocked = [t for t in added if have[_key(t)] <= 0]
    if blocked:
        what = (
            f"change #{record.id} to {record.file} cannot be undone: a later write changed "
            f"or removed what it added (“{short(blocked[0])}”"
            + (f" and {len(blocked) - 1} more" if len(blocked) > 1 else "")
            + "). Nothing was written."
        )
        raise Refused(
            f"{what} See `metis-memory log` for the later writes.",
            editor=f"{what[0].upper()}{what[1:]} The later writes are above it in Memory History.",
        )
    for t in added:  # remove the last copy of each added entry
        outline = parse(text)
        key = _key(t)
        target = [e for e in outline.entries if e.key == key][-1]
        start, end = removal_span(outline, target)
        text = text[:start] + text[end:]
    back = [t for t in removed if _key(t) not in {e.key for e in parse(text).entries}]
    for t in back:
        text = _put_back(text, t, record.before_text or "")
    return text


def _put_back(text: str, entry: str, before: str) -> str:
    """`entry` inserted after the entry that preceded it in `before` when that is still
    there, else at the end."""
    newline = "\r\n" if "\r\n" in text else "\n"
    old = entries(before)
    key = _key(entry)
    prev_key = None
    for i, e in enumerate(old):
        if e.key == key:
            prev_key = old[i - 1].key if i > 0 else None
            break
    outline = parse(text)
    if prev_key is not None:
        for e in outline.entries:
            if e.key == prev_key:
                at = outline.next_line_start(e.last_line)
                head = text[:at]
                if head and not head.endswith(("\n", "\r")):
                    head += newline
                return head + entry.rstrip("\r\n") + newline + text[at:]
    if text and not text.endswith(("\n", "\r")):
        text += newline
    return text + entry.rstrip("\r\n") + newline


def restore(store: MemoryStore, record_id: int, by: Provenance) -> WriteResult:
    """The file as it was right after change `record_id`."""
    record = find_record(store, record_id)
    f = parse_memory_file(record.file)
    if record.after_text is None:
        raise Refused(
            f"the version after change #{record_id} was too large to keep "
            f"({fmt_bytes(record.after_size_bytes)}), so it cannot be restored: nothing was "
            "written."
        )
    snap = store.snapshot(f)
    if snap.sha256 == record.after_hash:
        raise Refused(
            f"{f.value} is already as it was after change #{record_id}: nothing was written.",
            "unchanged",
        )
    refuse_new_secrets(
        "restore",
        "version to restore",
        record.after_text,
        snap.text,
        f,
        user_memory=store.is_user_memory,
    )
    return store.consolidate(
        f,
        record.after_text,
        expected_hash=snap.sha256,
        by=by,
        operation="restore",
        detail=f"restores the version after #{record_id}",
    )


# ---- the archive ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Archived:
    id: str
    """`<record id>:<n>`: the n-th entry (from 1) that record removed."""
    text: str
    record: TraceRecord
    user_memory: bool = False
    """An entry the user memory's log archived."""

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "file": self.record.file,
            "text": redact(self.text),
            "time": self.record.time,
            "operation": self.record.operation,
            "actor": named(self.record.actor),
            "person": person(self.record, user_memory=self.user_memory),
            "record": self.record.id,
        }


def archived(store: MemoryStore, file: MemoryFile | str | None = None) -> list[Archived]:
    """What consolidations, undos and restores removed, newest first, less what is back in
    the file now, each entry once (its latest removal). Kept as long as the log keeps the
    record that removed it."""
    records = store.history(file, limit=None)
    present: dict[str, set[str]] = {}
    result: list[Archived] = []
    for record in records:
        if record.operation not in ARCHIVING:
            continue
        if record.file not in present:
            present[record.file] = {e.key for e in entries(store.snapshot(record.file).text)}
        _, removed = _record_diff(record)
        for n, e in enumerate(removed, 1):
            if e.key not in present[record.file]:
                # Listed once, as its latest removal: an entry removed, put back and removed
                # again is one thing to put back, not three.
                present[record.file].add(e.key)
                result.append(Archived(f"{record.id}:{n}", e.text, record, store.is_user_memory))
    return result


def put_back(store: MemoryStore, archive_id: str, by: Provenance) -> WriteResult:
    """Append an archived entry to its file again (within the caps)."""
    head, _, tail = archive_id.partition(":")
    if not (head.isascii() and head.isdigit() and tail.isascii() and tail.isdigit()):
        raise Refused(
            f"{archive_id!r} is not an archived entry's id (they look like 12:1): nothing was "
            "written. List them with `metis-memory archive`.",
            "invalid_input",
            editor=f"{archive_id!r} is not an archived entry's id: nothing was written.",
        )
    record = find_record(store, int(head))
    _, removed = record_changes(record)
    n = int(tail)
    if record.operation not in ARCHIVING or not 1 <= n <= len(removed):
        raise Refused(
            f"change #{head} archived no entry {n}: nothing was written. List archived entries "
            "with `metis-memory archive`.",
            "not_found",
            editor=f"Change #{head} archived no entry {n}: nothing was written.",
        )
    entry = removed[n - 1]
    f = parse_memory_file(record.file)
    snap = store.snapshot(f)
    if _key(entry) in {e.key for e in entries(snap.text)}:
        raise Refused(
            f"“{short(entry)}” is in {f.value} already: nothing was written.", "unchanged"
        )
    new = _put_back(snap.text, entry, record.before_text or "")
    refuse_new_secrets(
        "put back",
        "file with the entry put back",
        new,
        snap.text,
        f,
        user_memory=store.is_user_memory,
    )
    return store.consolidate(
        f,
        new,
        expected_hash=snap.sha256,
        by=by,
        operation="unarchive",
        detail=f"puts back an entry archived by #{record.id}",
    )


def staged_json(change: object, *, user_memory: bool = False) -> dict[str, object]:
    """A waiting change as `metis-memory review --json` and the editor show it (redacted;
    `user_memory`: one waiting in the user memory's inbox)."""
    from ..store.trace import StagedChange

    assert isinstance(change, StagedChange)
    added, removed = entry_changes(change.before_text, change.after_text)
    fake = TraceRecord(
        id=change.id,
        time=change.time,
        file=change.file,
        operation=change.operation,
        door=change.door,
        actor=change.actor,
        session=change.session,
        agent=True,
        before_hash=change.base_hash,
        after_hash=sha256_hex(change.after_text.encode()),
        before_size_bytes=len(change.before_text.encode()),
        after_size_bytes=len(change.after_text.encode()),
        before_text=change.before_text,
        after_text=change.after_text,
        detail=None,
    )
    return {
        "id": change.id,
        "time": change.time,
        "file": change.file,
        "operation": change.operation,
        "door": change.door,
        "actor": named(change.actor),
        "session": named(change.session) if change.session is not None else None,
        "added": [redact(t) for t in added],
        "removed": [redact(t) for t in removed],
        "before": redact(change.before_text),
        "after": redact(change.after_text),
        "summary": summary(fake, added, removed),
        "person": person(fake, user_memory=user_memory),
    }
