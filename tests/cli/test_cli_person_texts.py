"""What `metis-memory` prints is read by a person: results and errors name the CLI's own
commands with the numbers, never a tool (memory_consolidate) or its schema; `--json` keeps
the tools' fields for scripts."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import Runner
from support.memory_files import write_memory

TOOL_WORDS = ("memory_add", "memory_replace", "memory_consolidate", "memory_read", '{"file"')
EIGHTY_BYTES = "# Workspace memory\n\n- Build with `make build`; the binary lands in `out/tallyd`\n"


def read_by_a_person(text: str) -> str:
    for word in (*TOOL_WORDS, "Expected {"):
        assert word not in text, (word, text)
    return text


def test_an_entry_larger_than_the_file_can_hold_says_what_would_fit(
    cli: Runner, workspace: Path
) -> None:
    path = write_memory(workspace, "MEMORY.md", EIGHTY_BYTES)
    result = cli("add", "MEMORY.md", "x" * 4103)
    assert result.returncode == 1
    assert read_by_a_person(result.stderr) == (
        "metis-memory: Not added: this entry is 4,103 B, more than MEMORY.md can ever hold: its "
        "hard cap is 4,096 B, so even with every other entry removed, keeping its 19 B heading, "
        "an entry can be at most 4,076 B (a line break follows it). Nothing was written. "
        "Shorten it by at least 27 B, to 4,076 B or less (keep long detail in a file of the "
        "repository and remember where), then run the add again.\n"
    )
    assert path.read_text() == EIGHTY_BYTES
    # The boundary the message names: 4,076 B is added once the heading is all that is left.
    done = cli("consolidate", "MEMORY.md", "--content", "# Workspace memory\n")
    assert done.returncode == 0, done.stderr
    fits = cli("add", "MEMORY.md", "x" * 4076)
    assert fits.returncode == 0, fits.stderr
    assert path.stat().st_size == 4096


def test_making_room_names_the_cli_commands(cli: Runner, workspace: Path) -> None:
    write_memory(workspace, "MEMORY.md", "m" * 4090 + "\n")
    result = cli("add", "MEMORY.md", "- one more fact")
    assert result.returncode == 1
    assert read_by_a_person(result.stderr) == (
        "metis-memory: Not added: MEMORY.md would be 4,107 B, 11 B over its 4,096 B hard cap "
        "(it is 4,091 B now). Nothing was written. Make room first: bring .metis/MEMORY.md to at "
        "most 4,080 B (under the 2,048 B soft cap is better): edit it, or write a shorter "
        "version with `metis-memory consolidate MEMORY.md --from FILE`, then run the add "
        "again.\n"
    )
    as_json = cli("add", "--json", "MEMORY.md", "- one more fact")
    error = json.loads(as_json.stdout)["error"]
    assert error["code"] == "hard_cap_exceeded"
    assert "Consolidate MEMORY.md with memory_consolidate" in error["message"]  # the tool's


def test_over_the_soft_cap_an_add_says_how_to_shorten(cli: Runner, workspace: Path) -> None:
    write_memory(workspace, "USER.md", "u" * 1530 + "\n")
    result = cli("add", "user.md", "- likes tea")
    assert result.returncode == 0, result.stderr
    assert read_by_a_person(result.stdout) == (
        "Added entry to USER.md: 1,531 B → 1,543 B (soft cap 1,536 B, hard cap 3,072 B), 7 B "
        "over the soft cap: edit .metis/USER.md to shorten it, or write a shorter version with "
        "`metis-memory consolidate USER.md --from FILE`.\n"
    )


def test_an_empty_entry_and_a_secret_read_as_sentences(cli: Runner, workspace: Path) -> None:
    empty = cli("add", "MEMORY.md", "")
    assert empty.returncode == 1
    assert read_by_a_person(empty.stderr) == (
        "metis-memory: Nothing was written: 'entry' must not be empty.\n"
    )
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    secret = cli("add", "MEMORY.md", f"- CI token: {token}")
    assert secret.returncode == 1
    assert read_by_a_person(secret.stderr).startswith(
        "metis-memory: Not added: the entry holds what looks like a GitHub"
    )
    assert token not in secret.stderr


def test_help_names_no_tool(cli: Runner) -> None:
    for command in ("add", "replace", "consolidate"):
        shown = cli(command, "--help")
        assert shown.returncode == 0
        read_by_a_person(shown.stdout)
