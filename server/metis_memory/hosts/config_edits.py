"""The pieces every host's entry in `configs.py` is made of: one `Edit` per file, merged
into what is there (a JSON object, a whole file of ours), and the rules for which keys of
an entry init owns. Kept apart from the hosts themselves so that a host's own module
(`opencode.py`, `qwen.py`...) builds on them without importing every other host.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..store.errors import ConfigRefused
from .jsonfiles import child

SERVER_NAME = "metis-memory"
OWNED_MARK = "Written by metis-memory init"


@dataclass(frozen=True)
class Edit:
    """One change to one file: `apply(current text or None) -> new text`."""

    host: str
    path: str
    """Relative to the workspace, with forward slashes."""
    what: str
    apply: Callable[[str | None], str]
    mode: int = 0o644
    json: bool = True
    change: Callable[[dict[str, Any]], None] | None = None
    """For a JSON file: the change to its object (which `apply` splices into the text);
    tests apply it to the plain parsed document to know what the file must hold after."""
    alternatives: tuple[Edit, ...] = ()
    """The same change for other files the host reads in place of `path`, in the host's
    order: the edit goes into the first of `path` and these that exists, and creates
    `path` when none does (opencode's `opencode.json` or `opencode.jsonc`...)."""


@dataclass(frozen=True)
class HostSetup:
    name: str
    title: str
    edits: Callable[[str], list[Edit]]
    """`edits(command)`: `command` runs metis-memory (e.g. "metis-memory")."""
    still_to_do: str


def is_ours(entry: object, host: str) -> bool:
    if not isinstance(entry, dict):
        return False
    pattern = rf"\bhook --host {re.escape(host)}(?![\w-])"
    return any(
        isinstance(command, str) and re.search(pattern, command) is not None
        for command in (entry.get("command"), entry.get("bash"))
    )


RUNS = frozenset(
    {"type", "command", "args", "shell", "bash", "powershell", "windows", "linux", "osx"}
    | {"cwd", "env", "envFile"}
)
"""The keys of a hook entry that decide what it runs: the command (per shell or system),
its arguments, the shell, and what it runs as (`cwd`, `env`). On an entry of its own, init
owns these: it sets its own and removes the others, since a cloned repository could have
put them there for the command init vouches for (as `env` goes from Codex's server table).
Every other key of the entry (a timeout, a status message, a name, a matcher, a key of the
user's own) and of its group is the user's once the entry exists: init writes those only
in an entry it creates."""
SERVER_RUNS = RUNS | {"url", "httpUrl", "serverUrl", "headers", "transport", "dev"}
"""The same for an MCP server entry, which can also name a remote server instead of the
command (`url`, Gemini's `httpUrl`...), or a debugger to start it under (VS Code's `dev`).
A timeout, a tool filter, a description, `trust`... are the user's, as Codex's table keeps
its timeouts and tool settings."""
PLAIN_TYPES = frozenset({"command", "stdio", "local"})
"""A `type` init does not write that still names what its entry is (a command hook, a
local server): the user's spelling of the default, kept."""


def update_ours(entry: dict[str, Any], ours: dict[str, Any], runs: frozenset[str] = RUNS) -> None:
    """`entry`, one of init's own, made to run what `ours` runs, changed in place (so that
    only those members of the file's text change)."""
    for key in [k for k in entry if k in runs and k not in ours]:
        if not (key == "type" and entry[key] in PLAIN_TYPES):
            del entry[key]
    for key, value in ours.items():
        if key in runs:
            entry[key] = value


def hook_entries(entries: list[Any], ours: dict[str, Any], host: str) -> None:
    """A flat list of hook entries (Cursor's, Copilot's): each of init's is updated,
    one is added when there is none; every other entry is kept."""
    found = [entry for entry in entries if is_ours(entry, host)]
    for entry in found:
        update_ours(entry, ours)
    if not found:
        entries.append(dict(ours))


def grouped_hook(
    doc: dict[str, Any], where: str, event: str, group: dict[str, Any], host: str
) -> None:
    """Claude-shaped hooks (`hooks.EVENT = [{matcher?, hooks: [handler]}]`): each handler
    of ours is updated in place (its group, matcher and all, stays as it is), and a group
    added when there is none; every other group and handler is kept."""
    hooks = child(doc, "hooks", dict, where)
    groups = child(hooks, event, list, f"{where} hooks")
    found = False
    for existing in groups:
        handlers = existing.get("hooks") if isinstance(existing, dict) else None
        for handler in handlers if isinstance(handlers, list) else ():
            if is_ours(handler, host):
                update_ours(handler, group["hooks"][0])
                found = True
    if not found:
        groups.append(group)


def mcp_server(doc: dict[str, Any], where: str, key: str, entry: dict[str, Any]) -> None:
    servers = child(doc, key, dict, where)
    existing = servers.get(SERVER_NAME)
    if isinstance(existing, dict):
        update_ours(existing, entry, SERVER_RUNS)
    else:
        servers[SERVER_NAME] = entry


def json_edit(host: str, path: str, what: str, change: Callable[[dict[str, Any]], None]) -> Edit:
    from .jsonfiles import merged, parse_object

    def apply(current: str | None) -> str:
        doc = parse_object(current or "", path)
        change(doc)
        return merged(current, doc, path)  # only what `change` added or replaced differs

    return Edit(host, path, what, apply, change=change)


def owned_file(
    host: str, path: str, what: str, content: str, mode: int = 0o644, *, seal: str | None = None
) -> Edit:
    """A whole file that is ours: created, or rewritten when it still carries our mark;
    a file of the same name written by someone else is refused, never replaced.

    `seal`, the file's line-comment start (`//`): the file ends with a line holding the
    SHA-256 of all before it, and a file whose seal no longer matches (the user changed it)
    is refused too, whichever init wrote it (an upgrade replaces an unchanged one). Line
    endings do not count, as git's autocrlf changes them. A file of ours without a seal
    (written before seals) is replaced as before."""
    assert seal is None or content.endswith("\n"), "a sealed file ends with a line end"
    written = content if seal is None else content + _seal_line(seal, content)

    def apply(current: str | None) -> str:
        if current is not None and OWNED_MARK not in current:
            raise ConfigRefused(
                f"{path} exists and was not written by metis-memory init; nothing was "
                "written. Move it aside (or merge this in by hand), then run init again:\n"
                + written
            )
        if current is not None and seal is not None and _edited(seal, current):
            raise ConfigRefused(
                f"{path} was changed after metis-memory init wrote it (its last line no "
                "longer matches the rest); nothing was written, so your changes are kept. "
                "Move it aside and run init again, then bring your changes into the new "
                "file; or leave it as it is and run init for your other hosts only "
                "(--host)."
            )
        return written

    return Edit(host, path, what, apply, mode=mode, json=False)


SEAL_WORDS = "metis-memory init, sha256 of the lines above:"


def _seal_line(comment: str, body: str) -> str:
    return f"{comment} {SEAL_WORDS} {_digest(body)}\n"


def _digest(body: str) -> str:
    import hashlib

    normal = body.replace("\r\n", "\n").encode("utf-8", "surrogatepass")
    return hashlib.sha256(normal).hexdigest()


def _edited(comment: str, current: str) -> bool:
    """Whether `current`, a sealed file of ours, was changed since it was sealed (one
    without a seal line is an older one of ours: not edited, as far as init can tell)."""
    text = current.replace("\r\n", "\n")
    body, _, last = text.removesuffix("\n").rpartition("\n")
    found = re.fullmatch(rf"{re.escape(comment)} {re.escape(SEAL_WORDS)} ([0-9a-f]{{64}})", last)
    if found is None:
        return SEAL_WORDS in text  # a seal moved or mangled: changed; none at all: older
    return found.group(1) != _digest(body + "\n")


def stdio(command: str, *args: str) -> dict[str, Any]:
    program, *rest = split_command(command)
    return {"command": program, "args": [*rest, "mcp", *args]}


def split_command(command: str) -> list[str]:
    import shlex

    return shlex.split(command)
