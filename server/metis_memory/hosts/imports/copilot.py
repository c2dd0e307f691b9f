"""GitHub Copilot's memory on this machine, where and as the Copilot CLI 1.0.102 and VS Code's
Copilot Chat keep it:

- **Your instructions, every project** (Copilot CLI): `copilot-instructions.md` in
  `$COPILOT_HOME` or `~/.copilot` (the CLI's shipped bundle, `@github/copilot-linux-x64`
  unpacked to `~/.cache/copilot/pkg/linux-x64/1.0.102/cli-main.js`: its instruction sources
  list `$HOME/.copilot/copilot-instructions.md`; `resolveCopilotHome(configDir,
  COPILOT_HOME, homedir)`). Imported into the user memory.
- **The memory tool's user memory** (VS Code, Copilot Chat): every file (not hidden) in
  `<user data>/User/globalStorage/github.copilot-chat/memory-tool/memories/`
  (microsoft/vscode-copilot-chat `src/extension/tools/node/memoryTool.tsx`:
  `MEMORY_BASE_DIR = 'memory-tool/memories'` under the extension's `globalStorageUri`;
  `memoryContextPrompt.tsx` loads its first 200 lines into every chat). The user data folder
  is VS Code's (`Code`, `Code - Insiders`, `VSCodium` in `$XDG_CONFIG_HOME` or `~/.config` on
  Linux, `~/Library/Application Support` on macOS, `%APPDATA%` on Windows) or code-server's
  (`~/.local/share/code-server`). Imported into the user memory.
- **The memory tool's repository memory** (`/memories/repo/`, kept locally when Copilot
  Memory is off): `<user data>/User/workspaceStorage/<id>/github.copilot-chat/memory-tool/
  memories/repo/`, `<id>` VS Code's id of the folder (microsoft/vscode
  `src/vs/platform/workspaces/node/workspaces.ts`, `getSingleFolderWorkspaceIdentifier`: the
  MD5 of the folder's path and its inode on Linux, its birth time elsewhere), confirmed by that
  folder's `workspace.json` naming the workspace. A file the tool stored as JSON
  (`{"subject", "fact", ...}`) gives its `fact`. Imported into MEMORY.md (an entry about the
  user into USER.md).

Not read: Copilot Memory itself (the CLI's and Copilot Chat's memories when it is on live in
GitHub's service, not on this machine: `copilot memories` only imports into it), session
memory (`/memories/session/`: one chat's notes), and the repository's
`.github/copilot-instructions.md` (the team's, committed, loaded anyway).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

from .memories import Location, Memory, Scope, instructions_file
from .reading import MAX_LISTED, Context, Reader

NAME = "copilot"
TITLE = "GitHub Copilot"
EXTENSION = "github.copilot-chat"
MEMORY_DIR = ("memory-tool", "memories")
EDITORS = ("Code", "Code - Insiders", "VSCodium")


def copilot_home(ctx: Context) -> Path:
    return ctx.folder("COPILOT_HOME", ctx.home / ".copilot")


def user_folders(ctx: Context) -> list[Path]:
    """Every VS Code `User` folder this user may have (VS Code, Insiders, VSCodium,
    code-server), whether or not it is there."""
    if sys.platform == "darwin":  # pragma: no cover - macOS
        config = ctx.home / "Library" / "Application Support"
    elif sys.platform == "win32":  # pragma: no cover - Windows
        config = ctx.folder("APPDATA", ctx.home / "AppData" / "Roaming")
    else:
        config = ctx.folder("XDG_CONFIG_HOME", ctx.home / ".config")
    data = ctx.folder("XDG_DATA_HOME", ctx.home / ".local" / "share")
    folders = [config / name / "User" for name in EDITORS]
    folders.append(data / "code-server" / "User")
    return folders


def workspace_storage(user: Path, workspace: Path) -> Path | None:
    """The workspace's folder in `user`'s `workspaceStorage`: its id as VS Code makes it,
    confirmed by `workspace.json`; else the folder whose `workspace.json` names the workspace
    (a bounded search); None when none does."""
    storage = user / "workspaceStorage"
    if not os.path.isdir(storage):
        return None
    guess = storage / folder_id(workspace)
    if _names(guess, workspace):
        return guess
    try:
        with os.scandir(storage) as it:
            names = sorted(e.name for _, e in zip(range(MAX_LISTED), it, strict=False))
    except OSError:
        return None
    for name in names:
        if _names(storage / name, workspace):
            return storage / name
    return None


def folder_id(workspace: Path) -> str:
    """VS Code's id of a local folder: MD5 of its path and, on Linux, its inode (macOS: birth
    time in ms; Windows: birth time, floored)."""
    try:
        st = os.stat(workspace)
    except OSError:
        return ""
    if sys.platform == "darwin":  # pragma: no cover - macOS
        salt = str(int(st.st_birthtime * 1000))
    elif sys.platform == "win32":  # pragma: no cover - Windows
        salt = str(int(getattr(st, "st_birthtime", st.st_ctime) * 1000))
    else:
        salt = str(st.st_ino)
    return hashlib.md5(str(workspace).encode() + salt.encode(), usedforsecurity=False).hexdigest()


def _names(folder: Path, workspace: Path) -> bool:
    """Whether `folder/workspace.json` names `workspace` (`{"folder": "file:///..."}`)."""
    from ...store.reading import read_bounded

    text = read_bounded(folder / "workspace.json", 64 * 2**10).text
    if not text:
        return False
    try:
        uri = json.loads(text).get("folder")
    except (ValueError, AttributeError, RecursionError):
        return False
    if not isinstance(uri, str):
        return False
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return False
    path = unquote(parsed.path)
    return os.path.realpath(path) == os.path.realpath(workspace)


def locations(ctx: Context) -> list[Location]:
    found = [Location(NAME, str(copilot_home(ctx) / "copilot-instructions.md"), "user")]
    for user in user_folders(ctx):
        found.append(
            Location(NAME, str(user.joinpath("globalStorage", EXTENSION, *MEMORY_DIR)), "user")
        )
        storage = workspace_storage(user, ctx.workspace)
        if storage is not None:
            found.append(
                Location(NAME, str(storage.joinpath(EXTENSION, *MEMORY_DIR, "repo")), "workspace")
            )
    return found


def read(ctx: Context, reader: Reader) -> list[Memory]:
    out: list[Memory] = []
    home = copilot_home(ctx)
    out += instructions_file(NAME, home / "copilot-instructions.md", home, reader)
    for user in user_folders(ctx):
        if not os.path.isdir(user):
            continue
        memories = user.joinpath("globalStorage", EXTENSION, *MEMORY_DIR)
        reader.look(memories)
        for path in reader.files(memories, user, suffix=""):
            out += _memory_file(path, user, "user", reader)
        storage = workspace_storage(user, ctx.workspace)
        if storage is None:
            continue
        repo = storage.joinpath(EXTENSION, *MEMORY_DIR, "repo")
        reader.look(repo)
        for path in reader.files(repo, user, suffix=""):
            out += _memory_file(path, user, "workspace", reader)
    return out


def _memory_file(path: Path, root: Path, scope: Scope, reader: Reader) -> list[Memory]:
    text = reader.text(path, root)
    if not text or not text.strip():
        return []
    fact = _stored_fact(text)
    if fact is not None:
        return [Memory(NAME, str(path), scope, fact, whole=True)]
    return [Memory(NAME, str(path), scope, text)]


def _stored_fact(text: str) -> str | None:
    """The `fact` of a memory the tool stored as JSON (`RepoMemoryEntry`), else None."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    fact = value.get("fact") if isinstance(value, dict) else None
    return fact if isinstance(fact, str) and fact.strip() else None
