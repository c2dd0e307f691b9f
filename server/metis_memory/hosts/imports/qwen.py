"""Qwen Code's memory, where and as Qwen Code 0.24.4 keeps it (its shipped bundle,
`@qwen-code/qwen-code/chunks`, installed by scripts/install-agent-hosts.sh:
`packages/core/src/memory/paths.ts`, `memory/scan.ts`, `memory/types.ts`,
`memory/writeContextFile.ts`, `utils/memory-constants.ts`, `config/storage.ts`):

- **Your memory, every project**: `QWEN.md` and `AGENTS.md` in `$QWEN_HOME` or `~/.qwen`
  (`Storage.getGlobalQwenDir`; the context file names `["QWEN.md", "AGENTS.md"]`);
  `save_memory` appends its facts there under `## Qwen Added Memories`
  (`MEMORY_SECTION_HEADER`, `resolveContextFilePath("global")`). Imported whole into the user
  memory.
- **Auto memory of the user**: `<memory base>/memories/` (`getUserAutoMemoryRoot`), the base
  being `$QWEN_CODE_MEMORY_BASE_DIR`, else `$QWEN_RUNTIME_DIR`, else the Qwen folder
  (`getMemoryBaseDir`, `Storage.getRuntimeBaseDir`): an index `MEMORY.md` and topic files
  (`*.md`, folders such as `pinned/` included) with frontmatter `type:` one of user, feedback,
  project, reference; a file of no such type is not a memory to Qwen Code
  (`parseAutoMemoryTopicDocument`) nor here. Imported into the user memory.
- **Auto memory of this workspace**: `<memory base>/projects/<sanitised root>/memory/`
  (`getAutoMemoryRoot`), the root the git repository's (the nearest folder holding `.git`),
  or the workspace itself with `QWEN_CODE_MEMORY_PROJECT_SCOPE=workspace`, every character
  but ASCII letters and digits made `-` (`sanitizeCwd`); `<workspace>/.qwen/memory` with
  `QWEN_CODE_MEMORY_LOCAL=1`. `user` and `feedback` memories go to USER.md, `project` and
  `reference` ones to MEMORY.md.
- **Facts saved for this workspace**: the `## Qwen Added Memories` section of the
  workspace's `QWEN.md` (`save_memory` with the workspace scope). Only that section is
  imported, into MEMORY.md: the rest of the file is the team's instructions.

Not imported: the team tier `.qwen/team-memory/` (committed and reviewed in git, loaded by
Qwen Code for everyone: copied into memory it would be two copies to keep in step) and
`QWEN.local.md` (instructions the user keeps out of git; MEMORY.md is committed).
"""

from __future__ import annotations

import os
from pathlib import Path

from ...budgets.paths import repository_root
from .memories import (
    TYPES,
    Location,
    Memory,
    Scope,
    instructions_file,
    js_sanitised,
    sections,
    topic_file,
    without_pointers,
)
from .reading import MAX_FILE_BYTES, Context, Reader

NAME = "qwen"
TITLE = "Qwen Code"
CONTEXT_FILES = ("QWEN.md", "AGENTS.md")
SECTION = "Qwen Added Memories"
INDEX = "MEMORY.md"


def qwen_dir(ctx: Context) -> Path:
    return ctx.folder("QWEN_HOME", ctx.home / ".qwen")


def memory_base(ctx: Context) -> Path:
    runtime = ctx.folder("QWEN_RUNTIME_DIR", qwen_dir(ctx))
    return ctx.folder("QWEN_CODE_MEMORY_BASE_DIR", runtime)


def sanitise(path: str) -> str:
    """`sanitizeCwd`: every character but ASCII letters and digits made `-` (lowercased on
    Windows)."""
    if os.name == "nt":  # pragma: no cover - Windows
        path = path.lower()
    return js_sanitised(path)


def project_memory(ctx: Context) -> tuple[Path, Path]:
    """This workspace's auto-memory folder, and the folder it must stay in."""
    if ctx.env.get("QWEN_CODE_MEMORY_LOCAL") == "1":
        return ctx.workspace / ".qwen" / "memory", ctx.workspace
    scope = (ctx.env.get("QWEN_CODE_MEMORY_PROJECT_SCOPE") or "").strip().lower()
    root = ctx.workspace if scope == "workspace" else repository_root(ctx.workspace)
    key = str(root or ctx.workspace)
    base = memory_base(ctx)
    return base / "projects" / sanitise(key) / "memory", base


def locations(ctx: Context) -> list[Location]:
    home = qwen_dir(ctx)
    found = [Location(NAME, str(home / name), "user") for name in CONTEXT_FILES]
    found.append(Location(NAME, str(memory_base(ctx) / "memories"), "user"))
    found.append(Location(NAME, str(project_memory(ctx)[0]), "workspace"))
    shared = ctx.workspace / "QWEN.md"
    if _has_added_memories(shared):  # the team's instructions alone are not memory
        found.append(Location(NAME, str(shared), "workspace"))
    return found


def _has_added_memories(path: Path) -> bool:
    from ...store.reading import read_bounded

    text = read_bounded(path, MAX_FILE_BYTES).text
    return text is not None and f"## {SECTION}" in text


def read(ctx: Context, reader: Reader) -> list[Memory]:
    out: list[Memory] = []
    home = qwen_dir(ctx)
    for name in CONTEXT_FILES:
        out += instructions_file(NAME, home / name, home, reader)
    base = memory_base(ctx)
    user_memory = base / "memories"
    reader.look(user_memory)
    out += _auto_memory(user_memory, base, "user", reader)
    memory, root = project_memory(ctx)
    reader.look(memory)
    out += _auto_memory(memory, root, "workspace", reader)
    shared = ctx.workspace / "QWEN.md"
    reader.look(shared)
    text = reader.text(shared, ctx.workspace)
    if text and SECTION in text:
        for heading, body, line in sections(text, 2):
            if heading == SECTION and body.strip():
                out.append(Memory(NAME, str(shared), "workspace", body, line=line))
    return out


def _auto_memory(folder: Path, root: Path, scope: Scope, reader: Reader) -> list[Memory]:
    out: list[Memory] = []
    index = folder / INDEX
    text = reader.text(index, root)
    if text and without_pointers(text).strip():
        out.append(Memory(NAME, str(index), scope, without_pointers(text)))
    for path in reader.files(folder, root, recursive=True, exclude=(INDEX,)):
        text = reader.text(path, root)
        if not text:
            continue
        topic = topic_file(text)
        about = TYPES.get(topic.kind or "")
        if about is None:
            reader.skip(
                path,
                "its frontmatter has no memory type (user, feedback, project, "
                "reference): Qwen Code does not load it either",
            )
            continue
        body = topic.body if topic.body.strip() else topic.description
        if body.strip():
            out.append(
                Memory(
                    NAME,
                    str(path),
                    scope,
                    body,
                    about,
                    whole=True,
                    line=topic.body_line,
                )
            )
    return out
