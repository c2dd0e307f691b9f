"""A user's machine for the import tests (tests/hosts/imports): a home folder of the
test's own, a workspace, the config folder the autouse `user_config_home` fixture gives, and
each host's memory copied in from tests/hosts/imports/fixtures/ (laid out as the host writes
it: its README cites each format), the names a host computes from the workspace's path
computed here the way that host computes them."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).parents[1] / "hosts" / "imports" / "fixtures"
TOKEN = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
"""A GitHub token the secret rules match, built here so that none is committed."""

CODEX_USER_ENTRIES = [
    "- Prefer ripgrep over grep.",
    "- Write commit messages in the imperative mood.",
    "- The user maintains a Go payments service and a Python data pipeline; they work in "
    "London time.",
    '- when reviewing, the user asked: "show me unified diffs, not whole files" -> reply '
    "with unified diffs",
    "- Run Go tests with -race; flaky tests usually mean a data race.",
    "- Remember: the user wants Makefiles indented with tabs and everything else with four spaces.",
]
"""What the `codex` fixture remembers of the user, as the import proposes it for the user
memory (AGENTS.md's agreements, memory_summary.md's profile, preferences and tips, an ad hoc
note), in that order."""

HOST_VARIABLES = (
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_CODE_REMOTE_MEMORY_DIR",
    "CLAUDE_CODE_PROJECT_DIR_NAME",
    "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "SANDBOX",
    "QWEN_HOME",
    "QWEN_RUNTIME_DIR",
    "QWEN_CODE_MEMORY_BASE_DIR",
    "QWEN_CODE_MEMORY_LOCAL",
    "QWEN_CODE_MEMORY_PROJECT_SCOPE",
    "COPILOT_HOME",
    "XDG_DATA_HOME",
    "APPDATA",
)
"""Where the hosts keep memory when set: unset in every test unless it sets one."""
AGENT_SHELL_VARIABLES = (
    "CLAUDECODE",
    "CLAUDE_CODE_SESSION_ID",
    "CLINE_CONNECTOR_CLI_LAUNCH",
    "CODEX_THREAD_ID",
    "CODEX_VERSION",
    "COPILOT_AGENT",
    "COPILOT_AGENT_SESSION_ID",
    "COPILOT_CLI",
    "COPILOT_CLI_BINARY_VERSION",
    "GEMINI_CLI",
    "OPENCODE",
    "OPENCODE_TERMINAL",
    "QWEN_CODE",
    "QWEN_CODE_SESSION_ID",
    "QWEN_CODE_STARTUP_VERSION",
    "AI_AGENT",
)
"""What an agent host's shell sets (`hosts/actor.py`): the suite may itself run in one, and a
command run there writes as that agent; these tests run as the user."""


def sanitised(path: str) -> str:
    """Claude Code's and Qwen Code's folder name for a path: every character but ASCII letters
    and digits made `-` (`w()` in Claude Code's binary, `sanitizeCwd` in Qwen Code's bundle),
    as JavaScript's regular expressions see characters: UTF-16 code units, two for an emoji."""
    units = path.encode("utf-16-le")
    chars = [units[i : i + 2].decode("utf-16-le", "surrogatepass") for i in range(0, len(units), 2)]
    return "".join(c if re.fullmatch(r"[A-Za-z0-9]", c) else "-" for c in chars)


def vscode_id(folder: Path) -> str:
    """VS Code's id of a local folder on Linux: MD5 of its path, then its inode as a decimal."""
    digest = hashlib.md5(usedforsecurity=False)
    digest.update(str(folder).encode())
    digest.update(str(os.stat(folder).st_ino).encode())
    return digest.hexdigest()


@dataclass
class Machine:
    home: Path
    workspace: Path
    config: Path
    """$XDG_CONFIG_HOME: the user memory's folder is in it, and VS Code's `Code/User`."""

    @property
    def user_memory(self) -> Path:
        return self.config / "metis-memory" / "USER.md"

    def env(self, **extra: str) -> dict[str, str]:
        """The environment a host (or `metis-memory`) would see on this machine."""
        drop = set(HOST_VARIABLES) | set(AGENT_SHELL_VARIABLES)
        env = {k: v for k, v in os.environ.items() if k not in drop}
        env.update(HOME=str(self.home), XDG_CONFIG_HOME=str(self.config))
        env.update(extra)
        return env

    def names(self) -> Mapping[str, str]:
        real = os.path.realpath(self.workspace)
        return {
            "{claude_project}": sanitised(real),
            "{qwen_project}": sanitised(real),
            "{workspace}": real,
            "{workspace_uri}": Path(real).as_uri(),
            "{vscode_id}": vscode_id(Path(real)),
            "{github_token}": TOKEN,
        }

    def install(self, fixture: str) -> None:
        """Copy fixtures/<fixture>/home into the home (its `.config/` into $XDG_CONFIG_HOME)
        and fixtures/<fixture>/workspace into the workspace, placeholders filled in."""
        names = self.names()
        source = FIXTURES / fixture
        assert source.is_dir(), f"no fixture {fixture}"
        for path in sorted(source.rglob("*")):
            if not path.is_file():
                continue
            relative = path.relative_to(source)
            top, rest = relative.parts[0], Path(*relative.parts[1:])
            if top == "home" and rest.parts[0] == ".config":
                target = self.config / Path(*rest.parts[1:])
            elif top == "home":
                target = self.home / rest
            else:
                target = self.workspace / rest
            target = Path(_filled(str(target), names))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(_filled(path.read_text(encoding="utf-8"), names), encoding="utf-8")

    def run(self, *args: str, stdin: str = "", **extra: str) -> subprocess.CompletedProcess[str]:
        """`metis-memory ARGS...`, the real console script, in the workspace, as the user."""
        script = Path(sys.executable).parent / "metis-memory"
        return subprocess.run(
            [str(script), *args],
            cwd=self.workspace,
            input=stdin,
            env=self.env(**extra),
            capture_output=True,
            encoding="utf-8",
            timeout=60,
            check=False,
        )


def _filled(text: str, names: Mapping[str, str]) -> str:
    for placeholder, value in names.items():
        text = text.replace(placeholder, value)
    return text


def tree_digest(*roots: Path) -> dict[str, str]:
    """Every file under `roots` (links as links) -> the SHA-256 of its bytes and its mode."""
    found: dict[str, str] = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_symlink():
                found[str(path)] = "link:" + os.readlink(path)
            elif path.is_file():
                st = path.stat()
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                found[str(path)] = f"{digest}:{st.st_mode:o}:{st.st_mtime_ns}"
    return found


def copy_tree(source: Path, target: Path) -> None:
    shutil.copytree(source, target, dirs_exist_ok=True, symlinks=True)
