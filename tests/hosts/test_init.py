"""`metis-memory init`: hosts' configuration merged in, nothing lost, all or nothing."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from metis_memory.hosts.configs import INSTRUCTIONS_PATH, SETUPS

ALL_FILES = {
    ".claude/settings.json",
    ".mcp.json",
    ".codex/hooks.json",
    ".codex/config.toml",
    ".gemini/settings.json",
    ".cursor/hooks.json",
    ".cursor/mcp.json",
    ".clinerules/hooks/TaskStart",
    ".clinerules/hooks/TaskResume",
    ".clinerules/hooks/UserPromptSubmit",
    ".cline/plugins/metis-memory.js",
    INSTRUCTIONS_PATH,
    ".github/hooks/metis-memory.json",
    ".vscode/mcp.json",
    ".opencode/plugins/metis-memory.js",
    "opencode.json",
    ".qwen/settings.json",
}


def init(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / "metis-memory"
    return subprocess.run(
        [str(script), "init", *args],
        cwd=cwd,
        capture_output=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )


def tree(root: Path) -> dict[str, bytes]:
    """Every file under `root` with its bytes (symlinks as their target)."""
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = b"-> " + os.readlink(path).encode()
        elif path.is_file():
            out[rel] = path.read_bytes()
    return out


def load(workspace: Path, rel: str) -> Any:
    return json.loads((workspace / rel).read_text(encoding="utf-8"))


def hook_commands(doc: dict[str, Any], event: str) -> list[str]:
    return [h["command"] for group in doc["hooks"][event] for h in group["hooks"]]


def test_empty_workspace_gets_every_hosts_files(workspace: Path) -> None:
    done = init(cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert set(tree(workspace)) == ALL_FILES
    claude = load(workspace, ".claude/settings.json")
    assert hook_commands(claude, "SessionStart") == ["metis-memory hook --host claude"]
    assert claude["hooks"]["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
    assert hook_commands(claude, "UserPromptSubmit") == ["metis-memory hook --host claude"]
    assert hook_commands(load(workspace, ".codex/hooks.json"), "UserPromptSubmit") == [
        "metis-memory hook --host codex"
    ]
    gemini = load(workspace, ".gemini/settings.json")
    assert gemini["hooks"]["BeforeAgent"][0]["hooks"][0]["timeout"] == 10_000  # milliseconds
    assert gemini["mcpServers"]["metis-memory"] == {"command": "metis-memory", "args": ["mcp"]}
    assert load(workspace, ".mcp.json")["mcpServers"]["metis-memory"]["args"] == ["mcp"]
    assert load(workspace, ".cursor/hooks.json") == {
        "version": 1,
        "hooks": {"sessionStart": [{"command": "metis-memory hook --host cursor"}]},
    }
    vscode = load(workspace, ".vscode/mcp.json")["servers"]["metis-memory"]
    assert vscode == {
        "type": "stdio",
        "command": "metis-memory",
        "args": ["mcp", "${workspaceFolder}"],
    }
    cline = workspace / ".clinerules/hooks/UserPromptSubmit"
    assert cline.stat().st_mode & stat.S_IXUSR
    assert cline.read_text().splitlines()[-1] == "exec metis-memory hook --host cline"
    instructions = (workspace / INSTRUCTIONS_PATH).read_text()
    assert "applyTo: '**'" in instructions
    assert "](../../.metis/MEMORY.md)" in instructions and "](../../.metis/USER.md)" in instructions
    assert "/memories/" in instructions  # steers Copilot away from its own memory tool
    for setup in SETUPS.values():
        assert setup.title in done.stdout  # what is left to do, per host


def test_second_run_changes_no_byte(workspace: Path) -> None:
    assert init(cwd=workspace).returncode == 0
    before = tree(workspace)
    mtimes = {p: (workspace / p).stat().st_mtime_ns for p in before}
    done = init(cwd=workspace)
    assert done.returncode == 0
    assert tree(workspace) == before
    assert {p: (workspace / p).stat().st_mtime_ns for p in before} == mtimes  # not even rewritten
    assert done.stdout.count("unchanged") == len(ALL_FILES)


EXISTING_CLAUDE = {
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "./start.sh"}]}
        ],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
        ],
    },
}
EXISTING_GEMINI = {
    "theme": "GitHub",
    "mcpServers": {"github": {"command": "gh-mcp", "args": []}},
    "hooks": {"BeforeAgent": [{"matcher": "*", "hooks": [{"type": "command", "command": "lint"}]}]},
}


def contains(big: Any, small: Any) -> bool:
    """Every key and list item of `small` is still in `big` (lists may have grown)."""
    if isinstance(small, dict):
        return isinstance(big, dict) and all(
            k in big and contains(big[k], v) for k, v in small.items()
        )
    if isinstance(small, list):
        return isinstance(big, list) and all(any(contains(b, s) for b in big) for s in small)
    return bool(big == small)


def test_existing_configuration_is_merged_and_nothing_is_lost(workspace: Path) -> None:
    (workspace / ".claude").mkdir()
    (workspace / ".claude/settings.json").write_text(json.dumps(EXISTING_CLAUDE, indent=4) + "\n")
    (workspace / ".gemini").mkdir()
    (workspace / ".gemini/settings.json").write_text(json.dumps(EXISTING_GEMINI, indent="\t"))
    (workspace / ".vscode").mkdir()
    mcp = {"servers": {"db": {"type": "stdio", "command": "db-mcp"}}, "inputs": []}
    (workspace / ".vscode/mcp.json").write_text(json.dumps(mcp, indent=2) + "\n")
    assert init(cwd=workspace).returncode == 0
    claude = load(workspace, ".claude/settings.json")
    assert contains(claude, EXISTING_CLAUDE)
    assert hook_commands(claude, "SessionStart") == [
        "./start.sh",
        "metis-memory hook --host claude",
    ]
    gemini = load(workspace, ".gemini/settings.json")
    assert contains(gemini, EXISTING_GEMINI) and set(gemini["mcpServers"]) == {
        "github",
        "metis-memory",
    }
    assert contains(load(workspace, ".vscode/mcp.json"), mcp)
    # Each file keeps its own indentation and final newline.
    assert (workspace / ".claude/settings.json").read_text().startswith('{\n    "permissions"')
    gemini_text = (workspace / ".gemini/settings.json").read_text()
    assert gemini_text.startswith('{\n\t"theme"') and not gemini_text.endswith("\n")
    before = tree(workspace)
    assert init(cwd=workspace).returncode == 0
    assert tree(workspace) == before


def test_our_old_entry_is_updated_in_place_not_duplicated(workspace: Path) -> None:
    assert init("--command", "/old/venv/bin/metis-memory", cwd=workspace).returncode == 0
    assert init(cwd=workspace).returncode == 0
    claude = load(workspace, ".claude/settings.json")
    assert hook_commands(claude, "UserPromptSubmit") == ["metis-memory hook --host claude"]
    assert load(workspace, ".cursor/hooks.json")["hooks"]["sessionStart"] == [
        {"command": "metis-memory hook --host cursor"}
    ]


@pytest.mark.parametrize(
    ("path", "text", "where"),
    [
        (
            ".claude/settings.json",
            '{\n  "hooks": {\n    "Stop": [,]\n  }\n}\n',
            "line 3, column 14",
        ),
        (".vscode/mcp.json", '{\n  // my servers\n  "servers": {}\n}\n', "line 2, column 3"),
        (".cursor/mcp.json", '{"mcpServers": {}, "mcpServers": {}}', "'mcpServers' twice"),
        (".gemini/settings.json", "[]", "a JSON array, not an object"),
        (".claude/settings.json", '{"hooks": []}', "'hooks' is an array"),
    ],
)
def test_a_file_that_cannot_be_merged_stops_everything(
    path: str, text: str, where: str, workspace: Path
) -> None:
    target = workspace / path
    target.parent.mkdir(parents=True)
    target.write_text(text)
    before = tree(workspace)
    done = init(cwd=workspace)
    assert done.returncode == 1
    assert (
        path in done.stderr
        and where in done.stderr
        and "nothing was written" in done.stderr.lower()
    )
    assert tree(workspace) == before  # not one file anywhere
    assert done.stdout == ""


def test_comments_are_named_as_the_likely_reason(workspace: Path) -> None:
    (workspace / ".vscode").mkdir()
    (workspace / ".vscode/mcp.json").write_text('{\n  // my servers\n  "servers": {}\n}\n')
    assert "comments" in init(cwd=workspace).stderr


def test_dry_run_prints_the_diff_and_writes_nothing(workspace: Path) -> None:
    (workspace / ".cursor").mkdir()
    (workspace / ".cursor/hooks.json").write_text('{"version": 1, "hooks": {}}\n')
    before = tree(workspace)
    done = init("--dry-run", "--host", "cursor", cwd=workspace)
    assert done.returncode == 0
    assert tree(workspace) == before
    assert "--- a/.cursor/hooks.json\n+++ b/.cursor/hooks.json\n" in done.stdout
    assert '+      "sessionStart": [' in done.stdout.replace("\t", "  ") or "+" in done.stdout
    assert "--- /dev/null\n+++ b/.cursor/mcp.json\n" in done.stdout
    assert ".claude" not in done.stdout  # only the chosen host
    assert "would create" in done.stderr and "would update" in done.stderr


def test_only_the_chosen_hosts_are_written(workspace: Path) -> None:
    assert init("--host", "copilot", "--host", "claude", cwd=workspace).returncode == 0
    assert set(tree(workspace)) == {
        INSTRUCTIONS_PATH,
        ".github/hooks/metis-memory.json",
        ".vscode/mcp.json",
        ".claude/settings.json",
        ".mcp.json",
    }


# ---- an untrusted repository ------------------------------------------------------------
def test_a_config_folder_linked_out_of_the_workspace_is_refused(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / ".claude").symlink_to(outside)
    before = tree(workspace)
    done = init(cwd=workspace)
    assert done.returncode == 1 and "outside" in done.stderr
    assert tree(workspace) == before and list(outside.iterdir()) == []


def test_a_config_file_linked_out_of_the_workspace_is_refused(
    workspace: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "victim.json"
    victim.write_text("{}")
    (workspace / ".mcp.json").symlink_to(victim)
    done = init(cwd=workspace)
    assert done.returncode == 1
    assert victim.read_text() == "{}"


def test_a_foreign_file_in_our_place_is_never_replaced(workspace: Path) -> None:
    hooks = workspace / ".clinerules/hooks"
    hooks.mkdir(parents=True)
    (hooks / "UserPromptSubmit").write_text("#!/bin/sh\necho mine\n")
    done = init(cwd=workspace)
    assert done.returncode == 1
    assert "was not written by metis-memory init" in done.stderr
    assert (hooks / "UserPromptSubmit").read_text() == "#!/bin/sh\necho mine\n"
    assert not (workspace / ".mcp.json").exists()


def test_clinerules_as_a_single_file_is_refused_clearly(workspace: Path) -> None:
    (workspace / ".clinerules").write_text("Always write tests.\n")
    done = init("--host", "cline", cwd=workspace)
    assert done.returncode == 1 and "is a file, not a folder" in done.stderr
    assert (workspace / ".clinerules").read_text() == "Always write tests.\n"


def test_copilot_hooks_are_one_file_both_copilots_run(workspace: Path) -> None:
    """Copilot CLI and VS Code read the same `.github/hooks` file (adapters.COPILOT); init
    for either, or both, writes it once, and keeps every hook of someone else's there."""
    hooks = workspace / ".github/hooks/metis-memory.json"
    hooks.parent.mkdir(parents=True)
    theirs = {"type": "command", "bash": "./audit.sh", "timeoutSec": 5}
    hooks.write_text(json.dumps({"version": 1, "hooks": {"sessionStart": [theirs]}}))
    for hosts in (["copilot"], ["copilot-cli"], ["copilot", "copilot-cli"]):
        done = init(*[a for h in hosts for a in ("--host", h)], cwd=workspace)
        assert done.returncode == 0, done.stderr
        doc = json.loads(hooks.read_text())
        ours = {
            "type": "command",
            "bash": "metis-memory hook --host copilot",
            "powershell": "metis-memory hook --host copilot",
            "timeoutSec": 10,
        }
        assert doc == {
            "version": 1,
            "hooks": {"sessionStart": [theirs, ours], "userPromptSubmitted": [ours]},
        }
    assert load(workspace, ".mcp.json")["mcpServers"]["metis-memory"] == {
        "command": "metis-memory",
        "args": ["mcp"],
    }
