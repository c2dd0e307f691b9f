"""Gemini CLI's memory, where and as Gemini CLI 0.61.0 keeps it (its shipped bundle,
`@google/gemini-cli/bundle`, installed by scripts/install-agent-hosts.sh: `packages/core/src/
utils/paths.ts`, `config/storage.ts`, `config/projectRegistry.ts`, `utils/memoryDiscovery.ts`;
and google-gemini/gemini-cli `packages/core/src/tools/memoryTool.ts`, which wrote it until
`save_memory` was removed):

- **Your memory, every project**: `GEMINI.md` in `~/.gemini` (`$GEMINI_CLI_HOME` replaces
  the home folder: `homedir()`), its name from `context.fileName` in `settings.json` when set
  (the first of a list). `save_memory` appended its facts there under `## Gemini Added
  Memories` (`MEMORY_SECTION_HEADER`), one `- fact` a line; 0.61 tells the model to edit the
  file itself ("Global Personal Memory"). Imported whole into the user memory.
- **Private project memory, this workspace**: `~/.gemini/tmp/<project>/memory/MEMORY.md`
  ("Personal-to-the-user, project-specific notes that must NOT be committed"), its sibling
  `*.md` notes holding the detail it points at; a `memory/GEMINI.md` before the index existed
  (`getUserProjectMemoryPaths`). `<project>` is the short name `~/.gemini/projects.json` maps
  the workspace's real path to (`{"projects": {"/path": "name"}}`), confirmed by
  `tmp/<name>/.project_root` holding that path; before the registry it was the SHA-256 of the
  path. `save_memory`'s `scope: "project"` appended `- fact` lines to that index. Imported into
  MEMORY.md (an entry about the user into USER.md).

Not imported: the project's `GEMINI.md` files (the team's, committed, which Gemini CLI keeps
loading), and the private folder's `.inbox/` (auto memory's drafts that wait for the user).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from .memories import Location, Memory, instructions_file, without_pointers
from .reading import MAX_LISTED, Context, Reader

NAME = "gemini"
TITLE = "Gemini CLI"
DEFAULT_CONTEXT_FILENAME = "GEMINI.md"
INDEX = "MEMORY.md"
PROJECT_ROOT_FILE = ".project_root"
_SLUG = re.compile(r"[A-Za-z0-9._-]{1,255}")


def gemini_dir(ctx: Context) -> Path:
    return ctx.folder("GEMINI_CLI_HOME", ctx.home) / ".gemini"


def runtime_dir(ctx: Context) -> Path:
    """`Storage.getGlobalRuntimeDir`: `~/.cache/.gemini` under macOS's sandbox-exec."""
    if ctx.env.get("SANDBOX") == "sandbox-exec":
        return ctx.folder("GEMINI_CLI_HOME", ctx.home) / ".cache" / ".gemini"
    return gemini_dir(ctx)


def context_filename(ctx: Context, reader: Reader | None = None) -> str:
    """`context.fileName` of the user's settings (a name, or the first of a list)."""
    settings = gemini_dir(ctx) / "settings.json"
    if reader is None:
        from ...store.reading import read_bounded

        text = read_bounded(settings, 2**20).text
    else:
        text = reader.text(settings, gemini_dir(ctx))
    if not text:
        return DEFAULT_CONTEXT_FILENAME
    try:
        value = json.loads(text).get("context", {}).get("fileName")
    except (ValueError, AttributeError, RecursionError):
        return DEFAULT_CONTEXT_FILENAME  # (Gemini CLI allows comments; then: the default)
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, str) and _SLUG.fullmatch(value.strip()) and value.strip() != "..":
        return value.strip()
    return DEFAULT_CONTEXT_FILENAME


def project_dir(ctx: Context) -> Path | None:
    """`tmp/<project>` of this workspace: the registry's name, confirmed by its marker; else
    a folder whose marker names the workspace (`findExistingSlugForPath`); else the older
    SHA-256 name. None when none is there."""
    tmp = runtime_dir(ctx) / "tmp"
    key = os.path.realpath(ctx.workspace)
    registry = runtime_dir(ctx) / "projects.json"
    from ...store.reading import read_bounded

    text = read_bounded(registry, 4 * 2**20).text
    if text:
        try:
            slug = json.loads(text).get("projects", {}).get(key)
        except (ValueError, AttributeError, RecursionError):
            slug = None
        if isinstance(slug, str) and _SLUG.fullmatch(slug) and slug not in (".", ".."):
            marker = _marker(tmp / slug)
            if marker is None or marker == key:
                return tmp / slug
    try:
        with os.scandir(tmp) as it:
            names = sorted(e.name for _, e in zip(range(MAX_LISTED), it, strict=False))
    except OSError:
        names = []
    for name in names:
        if _marker(tmp / name) == key:
            return tmp / name
    legacy = tmp / hashlib.sha256(key.encode()).hexdigest()
    return legacy if os.path.isdir(legacy) else None


def _marker(folder: Path) -> str | None:
    from ...store.reading import read_bounded

    text = read_bounded(folder / PROJECT_ROOT_FILE, 64 * 2**10).text
    return os.path.realpath(text.strip()) if text and text.strip() else None


def locations(ctx: Context) -> list[Location]:
    found = [Location(NAME, str(gemini_dir(ctx) / context_filename(ctx)), "user")]
    project = project_dir(ctx)
    if project is not None:
        found.append(Location(NAME, str(project / "memory"), "workspace"))
    return found


def read(ctx: Context, reader: Reader) -> list[Memory]:
    out: list[Memory] = []
    home = gemini_dir(ctx)
    name = context_filename(ctx, reader)
    out += instructions_file(NAME, home / name, home, reader)
    project = project_dir(ctx)
    if project is None:
        reader.look(runtime_dir(ctx) / "tmp")
        return out
    memory = project / "memory"
    reader.look(memory)
    root = runtime_dir(ctx)
    index = memory / INDEX
    text = reader.text(index, root)
    if text is None:
        index = memory / name
        text = reader.text(index, root)
    if text:
        out.append(Memory(NAME, str(index), "workspace", without_pointers(text)))
    for path in reader.files(memory, root, exclude=(INDEX, name)):
        text = reader.text(path, root)
        if text and text.strip():
            out.append(Memory(NAME, str(path), "workspace", text, whole=True))
    return out
