"""`init --host codex` writes Codex's MCP server into the project's `.codex/config.toml`,
with `required = true`, merged like the JSON files: what was there stays byte for byte,
and a file that cannot be merged safely is refused with nothing written (issue 26, item 3)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from metis_memory.hosts.config_edits import SERVER_NAME
from metis_memory.hosts.configs import CODEX_CONFIG
from metis_memory.hosts.tomlfiles import set_table
from metis_memory.store.errors import ConfigRefused
from support.init_files import init, snapshot, write

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib

OURS = {"command": "metis-memory", "args": ["mcp"], "required": True}


def server_of(workspace: Path) -> object:
    doc = tomllib.loads((workspace / CODEX_CONFIG).read_text("utf-8"))
    return doc["mcp_servers"][SERVER_NAME]


def test_a_new_config_holds_the_required_server(workspace: Path) -> None:
    done = init("--host", "codex", str(workspace), cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert server_of(workspace) == OURS
    assert ".codex/config.toml: created (MCP server 'metis-memory', required)" in done.stdout
    assert "trust the project" in done.stdout and "/hooks" in done.stdout
    again = init("--host", "codex", str(workspace), cwd=workspace)
    assert ".codex/config.toml: unchanged" in again.stdout


USERS = (
    "# my Codex settings\r\n"
    'model = "gpt-5.5"  # keep\r\n'
    "big = 12345678901234567890\r\n"
    "when = 1979-05-27T07:32:00-08:00\r\n"
    "\r\n"
    "[mcp_servers.docs]\r\n"
    'command = "docs-mcp"\r\n'
    "\r\n"
    '[projects."/home/me/project"]\r\n'
    'trust_level = "trusted"\r\n'
)


def test_every_byte_of_the_users_file_is_kept(workspace: Path) -> None:
    write(workspace, CODEX_CONFIG, USERS)
    done = init("--host", "codex", str(workspace), cwd=workspace)
    assert done.returncode == 0, done.stderr
    text = (workspace / CODEX_CONFIG).read_bytes().decode("utf-8")
    assert text.startswith(USERS), "the user's file is no longer its own prefix"
    added = text[len(USERS) :]
    assert added == (
        '\r\n[mcp_servers.metis-memory]\r\ncommand = "metis-memory"\r\nargs = ["mcp"]\r\n'
        "required = true\r\n"
    )
    doc = tomllib.loads(text)
    assert doc["mcp_servers"]["docs"] == {"command": "docs-mcp"}
    assert doc["big"] == 12345678901234567890


def test_our_table_is_updated_in_place_keeping_the_users_settings_and_comments(
    workspace: Path,
) -> None:
    """Timeouts and the tool approvals Codex saves in the table stay; an `env` (or `cwd`)
    would change what init's command runs as, and a cloned repository could have put it
    there, so it goes, as the JSON hosts' entries are replaced whole."""
    before = (
        "[mcp_servers.metis-memory] # added by hand\n"
        'command = "/old/metis-memory"  # an old install\n'
        "startup_timeout_sec = 30\n"
        'env = { LD_PRELOAD = "./evil.so" }\n'
        "\n"
        "[mcp_servers.metis-memory.tools.memory_add]\n"
        'approval_mode = "approve"\n'
        "\n"
        "[tui]\n"
        "notifications = true\n"
    )
    write(workspace, CODEX_CONFIG, before)
    done = init("--host", "codex", str(workspace), cwd=workspace)
    assert done.returncode == 0, done.stderr
    text = (workspace / CODEX_CONFIG).read_text("utf-8")
    assert "# added by hand" in text and "LD_PRELOAD" not in text
    assert text.endswith("[tui]\nnotifications = true\n")
    assert server_of(workspace) == {
        **OURS,
        "startup_timeout_sec": 30,
        "tools": {"memory_add": {"approval_mode": "approve"}},
    }


def test_a_table_that_already_says_it_all_is_left_as_spelled(workspace: Path) -> None:
    """Equal values keep their spelling (spacing, comments, CRLF): a second init is a no-op
    even on a table the user formatted their own way."""
    before = (
        "[mcp_servers.metis-memory]\r\n"
        "command = 'metis-memory'   # from pipx\r\n"
        'args = [ "mcp" ]\r\n'
        "required = true\r\n"
    )
    write(workspace, CODEX_CONFIG, before)
    done = init("--host", "codex", str(workspace), cwd=workspace)
    assert ".codex/config.toml: unchanged" in done.stdout, done.stdout
    assert (workspace / CODEX_CONFIG).read_bytes() == before.encode()


def test_lines_init_adds_to_a_crlf_file_are_crlf(workspace: Path) -> None:
    write(workspace, CODEX_CONFIG, '[mcp_servers.metis-memory]\r\ncommand = "old"\r\n')
    assert init("--host", "codex", str(workspace), cwd=workspace).returncode == 0
    data = (workspace / CODEX_CONFIG).read_bytes()
    assert b"\n" not in data.replace(b"\r\n", b""), data
    assert server_of(workspace) == OURS


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("model = \n", "is not valid TOML"),
        ('mcp_servers = "none"\n', "`mcp_servers` is a string, where init expects a table"),
        (
            "[[mcp_servers.metis-memory]]\ncommand = 'x'\n",
            "`mcp_servers.metis-memory` is a array",
        ),
        (
            "mcp_servers = { docs = { command = 'docs-mcp' } }\n",
            "could not be merged without changing other settings",
        ),
    ],
)
def test_a_file_that_cannot_be_merged_is_refused_and_nothing_is_written(
    workspace: Path, content: str, says: str
) -> None:
    write(workspace, CODEX_CONFIG, content)
    before = snapshot(workspace)
    done = init("--host", "codex", str(workspace), cwd=workspace)
    assert done.returncode == 1
    assert f"metis-memory init: {CODEX_CONFIG}" in done.stderr
    assert says in done.stderr
    assert "[mcp_servers.metis-memory]" in done.stderr, "the refusal gives the entry to add"
    assert snapshot(workspace) == before, "hooks.json was written beside a refused config"


@pytest.mark.parametrize(
    "content",
    [
        "mcp_servers.metis-memory.command = 'x'\n",
        "[mcp_servers]\nmetis-memory.command = 'x'\nmetis-memory.args = []\n",
        "[mcp_servers]\n'metis-memory' = { command = 'x' }\n",
        '[mcp_servers."metis-memory"]\ncommand = "x"\n[mcp_servers."metis-memory".env]\nA = "1"\n',
    ],
)
def test_other_spellings_of_our_table_are_merged_faithfully_or_refused(content: str) -> None:
    """Dotted keys and inline tables are legal TOML that tomlkit may not edit in place: the
    result is either exactly the old document plus our keys, or a refusal."""
    try:
        new = set_table(content, CODEX_CONFIG, ("mcp_servers", SERVER_NAME), OURS, "")
    except ConfigRefused as exc:
        assert "nothing was written" in str(exc)
        return
    expected = tomllib.loads(content)
    expected["mcp_servers"][SERVER_NAME] = dict(OURS)  # (`env`, an unknown key, goes)
    assert tomllib.loads(new) == expected


@pytest.mark.parametrize(
    "deep",
    [
        "[" + ".".join(["a"] * 1000) + "]\nx = 1\n",
        "a = " + "[" * 5000 + "]" * 5000 + "\n",
    ],
    ids=["tables 1,000 deep", "arrays 5,000 deep"],
)
def test_nesting_thousands_deep_is_refused_with_the_bound(deep: str, workspace: Path) -> None:
    """Found attacking item 8 again: a copy and a comparison of the document recursed once
    per level, and the standard parser once per nested array; now a refusal that says so,
    like the JSON files' (`jsonfiles.MAX_DEPTH`)."""
    write(workspace, CODEX_CONFIG, deep)
    before = snapshot(workspace)
    done = init("--host", "codex", str(workspace), cwd=workspace)
    assert done.returncode == 1
    assert f"{CODEX_CONFIG} nests tables and arrays more than 100 levels deep" in done.stderr
    assert "RecursionError" not in done.stderr and "Traceback" not in done.stderr
    assert "[mcp_servers.metis-memory]" in done.stderr, "the refusal gives the entry to add"
    assert snapshot(workspace) == before


def test_nesting_up_to_the_bound_is_merged(workspace: Path) -> None:
    deep = "[" + ".".join(["a"] * 100) + "]\nx = 1\n"
    write(workspace, CODEX_CONFIG, deep)
    done = init("--host", "codex", str(workspace), cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert (workspace / CODEX_CONFIG).read_text("utf-8").startswith(deep)
    assert server_of(workspace) == OURS
