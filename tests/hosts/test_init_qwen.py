"""`metis-memory init --host qwen`: `.qwen/settings.json` gets the hooks and the MCP entry in
the shape Qwen Code reads (hosts/qwen.py cites it), merged into what the user has without
losing a byte, and a second run changes nothing (the approval Qwen binds to the entry's
hash survives it)."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest

from metis_memory.hosts.configs import SETUPS
from support.init_files import init, snapshot, write

PATH = ".qwen/settings.json"
RUN = "metis-memory hook --host qwen"
HANDLER = {"type": "command", "command": RUN, "timeout": 10}
SERVER = {"command": "metis-memory", "args": ["mcp"], "alwaysLoadTools": True}

USERS = (
    "{\n"
    '    "model": {"name": "qwen3-coder-plus", "temperature": 1e-1},\n'
    '    "hooks": {\n'
    '        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", '
    '"command": "./banner.sh"}]}],\n'
    '        "PreToolUse": [{"matcher": "run_shell_command", "hooks": [{"type": "command", '
    '"command": "./guard.sh"}]}]\n'
    "    },\n"
    '    "mcpServers": {"github": {"httpUrl": "https://example.invalid/mcp", "trust": false}},\n'
    '    "permissions": {"allow": ["Bash(npm test)"]},\n'
    '    "ui": {"theme": "caf\\u00e9 \\ud83d\\ude00"},\n'
    '    "$version": 4\n'
    "}\n"
)


def load(workspace: Path) -> dict[str, object]:
    doc: dict[str, object] = json.loads((workspace / PATH).read_text("utf-8"))
    return doc


def test_a_new_settings_file_holds_the_hooks_and_the_server_as_qwen_reads_them(
    workspace: Path,
) -> None:
    done = init("--host", "qwen", cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert load(workspace) == {
        "$version": 4,  # as Qwen marks a file it reads: its first run leaves this one be
        "hooks": {
            "SessionStart": [{"matcher": "startup|resume|clear|compact", "hooks": [HANDLER]}],
            "UserPromptSubmit": [{"hooks": [HANDLER]}],
        },
        "mcpServers": {"metis-memory": SERVER},
    }
    assert "Qwen Code: " in done.stdout and "qwen mcp approve metis-memory" in done.stdout
    assert '"mcp__metis-memory__*"' in done.stdout and "folderTrust" in done.stdout


def test_the_users_settings_are_kept_byte_for_byte_and_a_rerun_changes_nothing(
    workspace: Path,
) -> None:
    write(workspace, PATH, USERS)
    assert init("--host", "qwen", cwd=workspace).returncode == 0
    after = (workspace / PATH).read_text("utf-8")
    edits = difflib.SequenceMatcher(None, USERS, after, autojunk=False).get_opcodes()
    assert {op for op, *_ in edits} == {"equal", "insert"}, "a byte of the user's changed"
    doc = load(workspace)
    hooks = doc["hooks"]
    assert isinstance(hooks, dict)
    assert hooks["SessionStart"] == [
        {"matcher": "startup", "hooks": [{"type": "command", "command": "./banner.sh"}]},
        {"matcher": "startup|resume|clear|compact", "hooks": [HANDLER]},
    ]
    assert hooks["UserPromptSubmit"] == [{"hooks": [HANDLER]}]
    assert doc["mcpServers"] == {
        "github": {"httpUrl": "https://example.invalid/mcp", "trust": False},
        "metis-memory": SERVER,
    }
    before = snapshot(workspace)
    again = init("--host", "qwen", cwd=workspace)
    assert again.returncode == 0 and f"{PATH}: unchanged" in again.stdout
    assert snapshot(workspace) == before  # not a byte, not the mtime


def test_an_existing_file_is_not_marked_with_a_version(workspace: Path) -> None:
    """A file without `$version` may hold Qwen's old layout, which it migrates only while
    the file is unmarked: init adds its entries and leaves the marking to Qwen."""
    write(workspace, PATH, '{"theme": "GitHub"}\n')
    assert init("--host", "qwen", cwd=workspace).returncode == 0
    doc = load(workspace)
    assert "$version" not in doc and doc["theme"] == "GitHub"


def test_the_users_choices_on_inits_server_entry_stay(workspace: Path) -> None:
    """`alwaysLoadTools: false` (the user wants the tools behind tool_search), a timeout and
    a description stay; what the entry runs is init's (a cloned repository's `env` and
    `cwd` go); an entry that lacks `alwaysLoadTools` gets it."""
    entry = {
        "command": "./evil",
        "args": ["mcp"],
        "env": {"PATH": "./bin"},
        "cwd": "vendor",
        "alwaysLoadTools": False,
        "timeout": 30000,
        "description": "my notes",
    }
    write(workspace, PATH, json.dumps({"mcpServers": {"metis-memory": entry}}, indent=2))
    assert init("--host", "qwen", cwd=workspace).returncode == 0
    assert load(workspace)["mcpServers"] == {
        "metis-memory": {
            "command": "metis-memory",
            "args": ["mcp"],
            "alwaysLoadTools": False,
            "timeout": 30000,
            "description": "my notes",
        }
    }
    write(workspace, PATH, json.dumps({"mcpServers": {"metis-memory": {"command": "x"}}}))
    assert init("--host", "qwen", cwd=workspace).returncode == 0
    assert load(workspace)["mcpServers"] == {"metis-memory": SERVER}


@pytest.mark.parametrize(
    "text",
    [
        '{\n  // Qwen reads comments; init does not rewrite them\n  "theme": "GitHub"\n}\n',
        '{"mcpServers": ["not", "an", "object"]}',
        '{"hooks": {"SessionStart": {"not": "a list"}}}',
    ],
)
def test_a_file_init_cannot_merge_safely_is_refused_and_nothing_is_written(
    text: str, workspace: Path
) -> None:
    write(workspace, PATH, text)
    before = snapshot(workspace)
    done = init("--host", "qwen", cwd=workspace)
    assert done.returncode != 0 and PATH in done.stderr, done.stderr
    assert snapshot(workspace) == before


def test_the_still_to_do_names_each_approval() -> None:
    todo = SETUPS["qwen"].still_to_do
    for words in (
        "qwen mcp approve metis-memory",
        "mcp__metis-memory__*",
        "permissions.allow",
        "security.folderTrust.enabled",
    ):
        assert words in todo, words
