"""Codex's memory, where and as Codex 0.169.0 keeps it (its shipped binary,
`@openai/codex-linux-x64`, installed by scripts/install-agent-hosts.sh: the embedded prompts
`memories/read_path.md` and the consolidation prompt; openai/codex `codex-rs/core/src/
agents_md.rs` and `codex-rs/ext/memories/src/local.rs`; developers.openai.com/codex/memories):

- **Your instructions, every project**: `AGENTS.override.md`, else `AGENTS.md`, in
  `$CODEX_HOME` or `~/.codex` (`load_global_instructions`: the first of the two that is a
  file). Imported into the user memory.
- **Memories** (opt-in; `[features] memories = true`), global to the user, in
  `<CODEX_HOME>/memories/` (`LocalMemoriesBackend::from_codex_home`: `codex_home.join(
  "memories")`):
  - `memory_summary.md`, injected into every session: the line `v1`, then `## User Profile`,
    `## User preferences`, `## General Tips` and `## What's in Memory` (pointers to Codex's
    own rollout summaries). The first three are imported into the user memory; the pointers
    lead to files only Codex reads, and are not.
  - `MEMORY.md`, the handbook: `# Task Group: ...` blocks, each with `applies_to: cwd=<the
    working folder>; reuse_rule=...`, task sections (`## Task 1: ...` with rollout files and
    keywords: Codex's routing, not imported) and `## User preferences`, `## Reusable
    knowledge`, `## Failures and how to do differently`. Only the blocks whose `cwd` is this
    workspace (or a folder in it) are imported, their preferences into USER.md and the rest
    into MEMORY.md: a block of another project is that project's (openai/codex#23658: a rule
    learned in one project applied in another).
  - `extensions/ad_hoc/notes/<timestamp>-<slug>.md`: what the user asked Codex to remember,
    one note a file (`add_ad_hoc_note`), waiting to be folded into the summary. Each is
    imported into the user memory.
  - `raw_memories.md` and `rollout_summaries/` are Codex's working material (raw extracts of
    past sessions), not imported.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .memories import About, Location, Memory, instructions_file, sections
from .reading import Context, Reader

NAME = "codex"
TITLE = "Codex"
USER_SECTIONS = ("user profile", "user preferences", "general tips")
BLOCK_SECTIONS: dict[str, About] = {
    "user preferences": "user",
    "reusable knowledge": "workspace",
    "failures and how to do differently": "workspace",
}
_APPLIES_TO = re.compile(r"^applies_to:.*?\bcwd=([^;\n]+)", re.MULTILINE)
_TASK_REFS = re.compile(r"(?:[ \t]*\[(?:Task|task) \d+\])+[ \t]*$", re.MULTILINE)
"""The `[Task 1][Task 2]` references Codex ends a handbook bullet with: its own cross-references."""


def codex_home(ctx: Context) -> Path:
    return ctx.folder("CODEX_HOME", ctx.home / ".codex")


def locations(ctx: Context) -> list[Location]:
    home = codex_home(ctx)
    return [
        Location(NAME, str(home / "AGENTS.override.md"), "user"),
        Location(NAME, str(home / "AGENTS.md"), "user"),
        Location(NAME, str(home / "memories"), "user"),
    ]


def read(ctx: Context, reader: Reader) -> list[Memory]:
    home = codex_home(ctx)
    out: list[Memory] = []
    for name in ("AGENTS.override.md", "AGENTS.md"):
        path = home / name
        if os.path.lexists(path):
            out += instructions_file(NAME, path, home, reader)
            break  # the first that is there is the one Codex loads
        reader.look(path)
    memories = home / "memories"
    reader.look(memories)
    summary = memories / "memory_summary.md"
    text = reader.text(summary, home)
    if text:
        for heading, body, line in sections(text, 2):
            if heading.casefold() in USER_SECTIONS and body.strip():
                out.append(Memory(NAME, str(summary), "user", body, "user", line=line))
    handbook = memories / "MEMORY.md"
    text = reader.text(handbook, home)
    if text:
        out += _blocks_of_this_workspace(ctx, str(handbook), text)
    notes = memories / "extensions" / "ad_hoc" / "notes"
    for path in reader.files(notes, home):
        text = reader.text(path, home)
        if text and text.strip():
            out.append(Memory(NAME, str(path), "user", text, whole=True))
    return out


def _blocks_of_this_workspace(ctx: Context, source: str, text: str) -> list[Memory]:
    out: list[Memory] = []
    for _group, block, block_line in sections(text, 1):
        applies = _APPLIES_TO.search(block)
        if applies is None or not _is_this_workspace(ctx, applies.group(1)):
            continue
        for heading, body, line in sections(block, 2):
            about = BLOCK_SECTIONS.get(heading.casefold())
            if about is None or not body.strip():
                continue
            cleaned = _TASK_REFS.sub("", body)
            out.append(
                Memory(NAME, source, "workspace", cleaned, about, line=block_line + line - 1)
            )
    return out


def _is_this_workspace(ctx: Context, cwd: str) -> bool:
    """Whether a block's `cwd=` is the workspace or a folder in it (`~/` is the home), not
    one in a repository of its own inside it: run from the home folder, or from a checkout
    with another repository vendored in it, that repository's block is its project's."""
    value = cwd.strip().strip("`'\"")
    if value.startswith("~/"):
        path = ctx.home / value[2:]
    else:
        path = Path(value)
        if not path.is_absolute():
            return False
    workspace = os.path.realpath(ctx.workspace)
    inside = workspace.rstrip(os.sep) + os.sep
    return any(
        candidate == workspace
        or (candidate.startswith(inside) and not _in_another_repository(candidate, workspace))
        for candidate in (os.path.normpath(path), os.path.realpath(path))
    )


def _in_another_repository(path: str, workspace: str) -> bool:
    """Whether a folder between `path` (in `workspace`) and the workspace, `path` included,
    holds a `.git` (a folder, or a submodule's or worktree's file): the root of another
    repository. One `lstat` a level."""
    current = path
    while current != workspace and len(current) > len(workspace):
        if os.path.lexists(os.path.join(current, ".git")):
            return True
        current = os.path.dirname(current)
    return False
