"""Which agent hosts are in use here: for the editor's Connect Agents picker, which ticks
the hosts it finds and says why.

A host counts as found when its own files are in the folder (`.claude/`, `CLAUDE.md`,
`AGENTS.md`...) or it is installed for this user (its command on PATH, its settings folder
in the home directory). Only names are looked up (`lstat` and PATH's `stat`s, a fixed
number of them): nothing is read, and nothing in the folder is followed (a sign beneath a
symlinked folder is not there), so a cloned repository cannot make this slow or make it
open anything. PATH's relative entries and a relative CODEX_HOME would be looked up from
wherever the server runs, maybe the repository itself: they are not this machine's.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .configs import SETUPS

MAX_PATH_ENTRIES = 256
"""PATH folders looked in for a host's command (a longer PATH is cut, not refused)."""


@dataclass(frozen=True)
class Signs:
    """What shows that a host is used: files in the workspace, commands on PATH, and
    folders or files in the home directory (`~/...`, or beneath an environment variable
    the host reads instead when it is set)."""

    folder: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    home: tuple[str, ...] = ()
    home_variable: tuple[str, str] | None = None
    """(variable, what it stands for): e.g. Codex's CODEX_HOME replaces `~/.codex`."""
    variable_reads_tilde: bool = False
    """Whether the host reads a leading `~/` in that variable as the home folder (a value
    quoted in a shell keeps its `~`)."""


SIGNS: dict[str, Signs] = {
    "claude": Signs(
        folder=(".claude/", "CLAUDE.md", "CLAUDE.local.md"),
        commands=("claude",),
        home=("~/.claude/", "~/.claude.json"),
    ),
    "codex": Signs(
        folder=(".codex/", "AGENTS.md", "AGENTS.override.md"),
        commands=("codex",),
        home=("~/.codex/",),
        home_variable=("CODEX_HOME", "~/.codex/"),
    ),
    "gemini": Signs(folder=(".gemini/", "GEMINI.md"), commands=("gemini",), home=("~/.gemini/",)),
    "cursor": Signs(
        folder=(".cursor/", ".cursorrules", ".cursorignore"),
        commands=("cursor", "cursor-agent"),
        home=("~/.cursor/",),
    ),
    # The Cline CLI (@cline/shared, storage `resolvePluginConfigSearchPaths` and its kin)
    # reads `.clinerules` and `.cline/{rules,hooks,plugins,workflows}` in a workspace.
    "cline": Signs(
        folder=(".clinerules", ".cline/", ".clineignore"),
        commands=("cline",),
        home=("~/.cline/", "~/Documents/Cline/"),
    ),
    "copilot": Signs(
        folder=(
            ".github/copilot-instructions.md",
            ".github/instructions/",
            ".github/prompts/",
            ".vscode/mcp.json",
        ),
        home=("~/.config/github-copilot/",),
    ),
    "copilot-cli": Signs(
        folder=(".github/copilot-instructions.md", ".github/hooks/"),
        commands=("copilot",),
        home=("~/.copilot/",),
    ),
    # opencode 1.18 (its Bun binary's Config service and `ConfigPaths`): `opencode.jsonc` and
    # `opencode.json` found walking up from the project, every `.opencode/` on the way and in
    # the home folder, and `~/.config/opencode/` (written at its first run); its installer
    # puts the binary in `~/.opencode/bin`, and its sessions live in `~/.local/share/opencode/`.
    "opencode": Signs(
        folder=("opencode.json", "opencode.jsonc", ".opencode/"),
        commands=("opencode",),
        home=("~/.config/opencode/", "~/.opencode/", "~/.local/share/opencode/"),
    ),
    # Qwen Code 0.24 (chunks: `QWEN_DIR = ".qwen"`, `DEFAULT_CONTEXT_FILENAME = "QWEN.md"`,
    # `.qwenignore`; `Storage.getGlobalQwenDir`: QWEN_HOME, else `~/.qwen`).
    "qwen": Signs(
        folder=(".qwen/", "QWEN.md", ".qwenignore"),
        commands=("qwen",),
        home=("~/.qwen/",),
        home_variable=("QWEN_HOME", "~/.qwen/"),
        variable_reads_tilde=True,  # Storage.resolvePath
    ),
}
"""Every host `init` sets up has its signs (tests/hosts/test_detect.py holds the two sets
equal). A file several hosts read (AGENTS.md is read by Codex, Cursor, Copilot, opencode and
Qwen Code) is a sign of the host whose own file it is."""


def detect(workspace: Path, environ: Mapping[str, str] | None = None) -> dict[str, list[str]]:
    """For each host, why it seems in use here (phrases such as "CLAUDE.md in this folder",
    "claude on PATH", "~/.claude/ on this machine"); an empty list when nothing was found."""
    env = os.environ if environ is None else environ
    home = _home(env)
    search = absolute_path_entries(env.get("PATH", ""))
    found: dict[str, list[str]] = {}
    for name in SETUPS:
        signs = SIGNS[name]
        why = [f"{f} in this folder" for f in signs.folder if in_folder(workspace, f)]
        why += [f"{c} on PATH" for c in signs.commands if search and shutil.which(c, path=search)]
        if signs.home_variable and env.get(signs.home_variable[0]):
            variable, stands_for = signs.home_variable
            folder = _variable_folder(env[variable], home if signs.variable_reads_tilde else None)
            if folder is not None and _exists(folder):
                why.append(f"{variable} ({stands_for}) on this machine")
        else:
            why += [
                f"{h} on this machine"
                for h in signs.home
                if home is not None and _exists(home / h.removeprefix("~/").rstrip("/"))
            ]
        found[name] = why
    return found


def absolute_path_entries(path: str) -> str:
    """PATH's first MAX_PATH_ENTRIES entries that are absolute (a longer PATH is cut, not
    refused; "", "." or "bin" would be looked up where the server runs)."""
    entries = path.split(os.pathsep)[:MAX_PATH_ENTRIES]
    return os.pathsep.join(e for e in entries if os.path.isabs(e))


def in_folder(workspace: Path, sign: str) -> bool:
    """Whether `sign` (a relative name, `/` between its parts) is in the workspace, each
    folder on the way a real folder (not a symlink) and the last name there as itself."""
    parts = sign.rstrip("/").split("/")
    folder = workspace
    for part in parts[:-1]:
        folder /= part
        try:
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                return False
        except (OSError, ValueError):
            return False
    return _exists(folder / parts[-1])


def _variable_folder(value: str, home: Path | None) -> Path | None:
    """The folder a variable such as CODEX_HOME names, when it is absolute (or `~/...`
    and `home` is given); a relative one would be found from wherever the host runs."""
    if home is not None and (value == "~" or value.startswith(("~/", "~" + os.sep))):
        return home / value[2:]
    return Path(value) if os.path.isabs(value) else None


def _home(env: Mapping[str, str]) -> Path | None:
    home = env.get("HOME") or (env.get("USERPROFILE") if os.name == "nt" else None)
    return Path(home) if home and os.path.isabs(home) else None


def _exists(path: Path) -> bool:
    """Whether the name is there (a symlink counts as itself, never followed)."""
    try:
        os.lstat(path)
    except (OSError, ValueError):  # missing, unreadable folder, NUL in a variable
        return False
    return True
