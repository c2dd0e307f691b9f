"""Claude Code's memory, where and as Claude Code 2.1.330 keeps it (read in its shipped binary,
`@anthropic-ai/claude-code-linux-x64`, installed by scripts/install-agent-hosts.sh; and
code.claude.com/docs/en/memory):

- **Your instructions, every project**: `CLAUDE.md` in its config folder, `$CLAUDE_CONFIG_DIR`
  or `~/.claude` (the binary: `et = CLAUDE_CONFIG_DIR ?? join(homedir, ".claude")`,
  `mhe("User") = join(et(), "CLAUDE.md")`). Imported into the user memory. Its `@path`
  imports are not followed: they name other files, which stay where they are.
- **Auto memory, this workspace**: `<config>/projects/<sanitised root>/memory/`, the root
  being the git repository's (a linked worktree's main repository), every character but ASCII
  letters and digits made `-` (`w(e) = e.replace(/[^a-zA-Z0-9]/g, "-")`, per UTF-16 unit;
  over 200 cut and given a hash, found here by its prefix); with `$CLAUDE_CONFIG_DIR` set,
  `$CLAUDE_CODE_PROJECT_DIR_NAME` names the folder instead; `autoMemoryDirectory` in the
  user's `settings.json` moves it (project settings may not: "Ignored if set in
  projectSettings ... for security"). It holds `MEMORY.md`, an index of one-line pointers
  (`- [Title](file.md) — hook`), and a topic file per memory with frontmatter (`name`,
  `description`, and `type` one of user, feedback, project, reference: top-level in older
  versions, under `metadata:` in 2.1.330's prompt), and `team/` for memories of team scope.
  `user` and `feedback` memories go to USER.md, `project`, `reference` and team ones to
  MEMORY.md; facts written into the index itself (not pointers) to MEMORY.md.

Not imported: the project's `CLAUDE.md` and `.claude/CLAUDE.md` (the team's checked-in
instructions, which Claude Code keeps loading: copied into memory they would be two copies to
keep in step), `CLAUDE.local.md` (instructions the user keeps out of git for this folder:
MEMORY.md and USER.md are committed), and `rules/` (each rule applies to the files its
`paths:` name; in memory it would apply everywhere).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ...budgets.paths import canonical_repository_root
from .memories import (
    TYPES,
    Location,
    Memory,
    instructions_file,
    js_sanitised,
    topic_file,
    without_pointers,
)
from .reading import MAX_LISTED, Context, Reader

NAME = "claude"
TITLE = "Claude Code"
INDEX = "MEMORY.md"
MAX_NAME = 200
"""A longer folder name is cut here and given a hash (`KN` and `_oe = 200` in the binary)."""
_PROJECT_DIR_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_RESERVED = re.compile(r"(?:con|prn|aux|nul|com[0-9]|lpt[0-9])", re.IGNORECASE)


def config_dir(ctx: Context) -> Path:
    return ctx.folder("CLAUDE_CONFIG_DIR", ctx.home / ".claude")


def auto_memory_dir(ctx: Context, reader: Reader | None = None) -> Path | None:
    """The workspace's auto-memory folder, as Claude Code resolves it (its `resolveEntry`):
    the user's `autoMemoryDirectory`, else `projects/<name>/memory` under
    `$CLAUDE_CODE_REMOTE_MEMORY_DIR` or the config folder. None when the name cannot be told
    (a long name whose hashed form matches no folder, or several)."""
    configured = _configured_dir(ctx, reader)
    if configured is not None:
        return configured
    base = ctx.folder("CLAUDE_CODE_REMOTE_MEMORY_DIR", config_dir(ctx))
    projects = base / "projects"
    name = _named_by_variable(ctx) if base == config_dir(ctx) else None
    if name is None:
        root = canonical_repository_root(ctx.workspace) or ctx.workspace
        name = js_sanitised(str(root))
        if len(name) > MAX_NAME:  # (`-` per UTF-16 unit: the lengths agree)
            name = _hashed(projects, name[:MAX_NAME])
            if name is None:
                return None
    return projects / name / "memory"


def _named_by_variable(ctx: Context) -> str | None:
    """`$CLAUDE_CODE_PROJECT_DIR_NAME`, taken only with `$CLAUDE_CONFIG_DIR` set and only a
    plain name (`m5n` and `Jla` in the binary)."""
    if ctx.variable("CLAUDE_CONFIG_DIR") is None:
        return None
    name = ctx.variable("CLAUDE_CODE_PROJECT_DIR_NAME")
    if name is None or not _PROJECT_DIR_NAME.fullmatch(name) or _RESERVED.fullmatch(name):
        return None
    return name


def _hashed(projects: Path, prefix: str) -> str | None:
    """The one folder named `<prefix>-<hash>` (Claude Code's hash of a path over 200
    characters is not reproduced here), None when there is not exactly one."""
    import os

    try:
        with os.scandir(projects) as it:
            names = [e.name for _, e in zip(range(MAX_LISTED), it, strict=False)]
    except OSError:
        return None
    matching = [n for n in names if n.startswith(prefix + "-") and "-" not in n[len(prefix) + 1 :]]
    return matching[0] if len(matching) == 1 else None


def _configured_dir(ctx: Context, reader: Reader | None) -> Path | None:
    """`autoMemoryDirectory` of the user's `settings.json` (`~/` is the home)."""
    settings = config_dir(ctx) / "settings.json"
    if reader is None:
        from ...store.reading import read_bounded

        text = read_bounded(settings, 2**20).text
    else:
        text = reader.text(settings, config_dir(ctx))
    if not text:
        return None
    try:
        value = json.loads(text).get("autoMemoryDirectory")
    except (ValueError, AttributeError, RecursionError):
        return None
    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    if value.startswith(("~/", "~\\")):
        return ctx.home / value[2:]
    path = Path(value)
    return path if path.is_absolute() else None


def locations(ctx: Context) -> list[Location]:
    found = [Location(NAME, str(config_dir(ctx) / "CLAUDE.md"), "user")]
    memory = auto_memory_dir(ctx)
    if memory is not None:
        found.append(Location(NAME, str(memory), "workspace"))
    return found


def read(ctx: Context, reader: Reader) -> list[Memory]:
    out: list[Memory] = []
    config = config_dir(ctx)
    out += instructions_file(NAME, config / "CLAUDE.md", config, reader)
    memory = auto_memory_dir(ctx, reader)
    if memory is None:
        return out
    reader.look(memory)
    # The host's folder: the config folder, or the folder the user's settings name.
    root = config if _lexically_under(memory, config) else memory
    index = memory / INDEX
    text = reader.text(index, root)
    if text:
        out.append(Memory(NAME, str(index), "workspace", without_pointers(text)))
    for path in reader.files(memory, root, exclude=(INDEX,)):
        out += _topic(path, root, reader, team=False)
    for path in reader.files(memory / "team", root, exclude=(INDEX,)):
        out += _topic(path, root, reader, team=True)
    return out


def _topic(path: Path, root: Path, reader: Reader, *, team: bool) -> list[Memory]:
    text = reader.text(path, root)
    if not text:
        return []
    topic = topic_file(text)
    body = topic.body if topic.body.strip() else topic.description
    if not body.strip():
        return []
    about = "workspace" if team else TYPES.get(topic.kind or "")
    return [Memory(NAME, str(path), "workspace", body, about, whole=True, line=topic.body_line)]


def _lexically_under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
