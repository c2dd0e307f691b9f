"""A write may keep a secret already in the file only if it was already found there, at that
place (issue 39, item 2). "Already in the file" was a substring test: after `AKIA…R5z` (one
character too long for any rule) was stored, `replace R5z→R5`, a consolidation without the
`z`, and the Anthropic tool's `str_replace` wrote the clean, detectable key, because its text
was part of the file's.

Every door calls the tool layer's guard (`tools/secret_guard.py`): the dispatcher (which the
CLI, MCP and the language server's commands call) and the Anthropic tool are driven here,
and the CLI and the MCP server over their real transports. What still passes is kept too: a
hand-typed secret that a write leaves where it is, or that a consolidation moves.

The tokens are put together here, never written out, so that secret scanners do not flag
this file; none is real."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp
import pytest
from anthropic.lib.tools import ToolError
from anthropic.types.beta import BetaMemoryTool20250818StrReplaceCommand

from metis_memory import MemoryStore
from metis_memory.analysis.secrets import find_secrets
from metis_memory.anthropic import MetisMemoryTool
from metis_memory.tools import ToolExecutionError, memory_dispatcher
from metis_memory.tools.secret_guard import new_secrets
from support.cli import Runner
from support.mcp_stdio import mcp_server
from support.mcp_values import text as text_of
from support.secret_writes import by_hand, digest, refusal

AWS = "AKIA" + "Z7Q2M4K8W3N6P9R5"
GITHUB = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
VALUE = "Tr0ub4dor" + "x7Q9wZ2k"
"""A value that is a secret after `password:`, and not after `note:`."""
ALMOST = f"- CI pushes images with {AWS}z (rotate quarterly).\n"
"""An access key one character too long: no rule matches it."""
CLEAN = f"- CI pushes images with {AWS} (rotate quarterly).\n"
HAND_TYPED = f"- Deploys run from CI.\n- CI token: {GITHUB}\n- Tests need Postgres.\n"


def test_the_samples_are_what_this_file_says() -> None:
    assert find_secrets(ALMOST) == []
    assert [CLEAN[m.start : m.end] for m in find_secrets(CLEAN)] == [AWS]
    assert find_secrets(f"- note: {VALUE}") == []
    assert [m.end for m in find_secrets(f"- password: {VALUE}")] == [len(f"- password: {VALUE}")]
    assert [HAND_TYPED[m.start : m.end] for m in find_secrets(HAND_TYPED)] == [GITHUB]


def assert_refused_at(error: ToolExecutionError, line: int, column: int) -> None:
    assert error.code == "secret_detected", error.message
    assert f"AWS access key (line {line}, column {column})" in error.message, error.message
    assert AWS[4:12] not in error.message and "nothing was written" in error.message


# ---- the tool layer --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"), [("R5z", "R5"), ("5z (", "5 ("), ("z (rotate", " (rotate")]
)
def test_a_replace_that_makes_an_unmatched_token_a_match_is_refused(
    store: MemoryStore, workspace: Path, old: str, new: str
) -> None:
    path = by_hand(workspace, "- Deploys run from CI.\n" + ALMOST)
    before = digest(path)
    error = refusal(store, "memory_replace", {"file": "MEMORY.md", "old": old, "new": new})
    assert_refused_at(error, 2, len("- CI pushes images with ") + 1)
    assert digest(path) == before


def test_a_consolidation_that_makes_an_unmatched_token_a_match_is_refused(
    store: MemoryStore, workspace: Path
) -> None:
    path = by_hand(workspace, ALMOST + "- Tests need Postgres.\n")
    before = digest(path)
    for content in (
        CLEAN + "- Tests need Postgres.\n",  # only the `z` taken out
        "- Tests need Postgres.\n" + CLEAN,  # and the entries moved about
    ):
        error = refusal(store, "memory_consolidate", {"file": "MEMORY.md", "content": content})
        line = content.split("\n").index(CLEAN.rstrip("\n")) + 1
        assert_refused_at(error, line, len("- CI pushes images with ") + 1)
        assert digest(path) == before


def test_a_keyword_put_before_an_unmatched_value_is_refused(
    store: MemoryStore, workspace: Path
) -> None:
    """The value was in the file, but not a secret there: `password:` makes it one."""
    path = by_hand(workspace, f"- Deploys run from CI.\n- note: {VALUE}\n")
    before = digest(path)
    error = refusal(
        store, "memory_replace", {"file": "MEMORY.md", "old": "note:", "new": "password:"}
    )
    assert error.code == "secret_detected"
    assert f"(line 2, column {len('- password: ') + 1})" in error.message, error.message
    assert VALUE[:8] not in error.message
    assert digest(path) == before


def test_a_second_copy_of_a_hand_typed_secret_is_new(store: MemoryStore, workspace: Path) -> None:
    path = by_hand(workspace, HAND_TYPED)
    before = digest(path)
    twice = HAND_TYPED + f"- Backup token: {GITHUB}\n"
    error = refusal(store, "memory_consolidate", {"file": "MEMORY.md", "content": twice})
    assert error.code == "secret_detected"
    assert "GitHub" in error.message and "(line 4, column 17)" in error.message, error.message
    assert "line 2" not in error.message  # the one that was there is not new
    assert digest(path) == before
    error = refusal(
        store,
        "memory_replace",
        {"file": "MEMORY.md", "old": "- Tests need Postgres.", "new": f"- Again: {GITHUB}"},
    )
    assert error.code == "secret_detected"
    assert digest(path) == before


def test_a_hand_typed_secret_left_in_place_or_moved_still_passes(
    store: MemoryStore, workspace: Path
) -> None:
    path = by_hand(workspace, HAND_TYPED)
    dispatcher = memory_dispatcher(store)
    # Edits before it, after it and on its line (not of it) keep it at its place.
    for old, new in (
        ("- Deploys run from CI.", "- Deploys run from CI on every tag."),
        ("- Tests need Postgres.", "- Tests need Postgres 16."),
        ("- CI token:", "- CI:"),
    ):
        dispatcher.dispatch("memory_replace", {"file": "MEMORY.md", "old": old, "new": new})
    assert f"- CI: {GITHUB}\n" in path.read_text()
    # A consolidation may move it, and rewrite what is around it.
    moved = f"- Tests need Postgres 16; deploys run from CI on every tag.\n- CI: {GITHUB}\n"
    dispatcher.dispatch("memory_consolidate", {"file": "MEMORY.md", "content": moved})
    assert path.read_text() == moved


def test_the_anthropic_tool_cannot_make_an_unmatched_token_a_match(workspace: Path) -> None:
    path = by_hand(workspace, ALMOST)
    before = digest(path)
    tool = MetisMemoryTool(workspace)
    with pytest.raises(ToolError) as caught:
        tool.str_replace(
            BetaMemoryTool20250818StrReplaceCommand(
                command="str_replace", path="/memories/MEMORY.md", old_str="R5z", new_str="R5"
            )
        )
    assert "AWS access key (line 1, column 25)" in str(caught.value), caught.value
    assert AWS[4:12] not in str(caught.value)
    assert digest(path) == before


def test_new_secrets_pairs_each_match_once_and_by_place() -> None:
    """The rule itself, on texts: in the part a write left alone, a match must have been one
    at the same offset; in the part it rewrote, one of the same text in the rewritten part."""
    line = f"- CI token: {GITHUB}\n"
    spans = [(m.start, m.end) for m in new_secrets(ALMOST, CLEAN)]
    assert spans == [(len("- CI pushes images with "), len("- CI pushes images with ") + 20)]
    assert new_secrets(line, "- Deploys.\n" + line) == []  # moved by an insertion before it
    assert new_secrets(line, line + "- Tests.\n") == []
    assert new_secrets("- a\n" + line + "- b\n", "- b\n" + line + "- a\n") == []  # rewritten
    assert len(new_secrets(line, line + line)) == 1  # a copy
    assert len(new_secrets(line + line, line)) == 0  # one taken out
    assert len(new_secrets("", line)) == 1


# ---- real doors: the CLI and the MCP server --------------------------------------------------


def test_the_cli_refuses_to_make_an_unmatched_token_a_match(cli: Runner, workspace: Path) -> None:
    path = by_hand(workspace, ALMOST)
    before = digest(path)
    replaced = cli("replace", "MEMORY.md", "R5z", "R5")
    assert replaced.returncode == 1, replaced
    assert "AWS access key (line 1, column 25)" in replaced.stderr, replaced.stderr
    consolidated = cli("consolidate", "MEMORY.md", "-", stdin=CLEAN)
    assert consolidated.returncode == 1, consolidated
    assert "AWS access key (line 1, column 25)" in consolidated.stderr, consolidated.stderr
    assert AWS[4:12] not in replaced.stderr + consolidated.stderr
    assert digest(path) == before


async def test_mcp_refuses_to_make_an_unmatched_token_a_match(workspace: Path) -> None:
    path = by_hand(workspace, ALMOST)
    before = digest(path)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("memory_replace", {"file": "MEMORY.md", "old": "R5z", "new": "R5"}),
        ("memory_consolidate", {"file": "MEMORY.md", "content": CLEAN}),
    ]
    async with mcp.Client(mcp_server(str(workspace))) as client:
        for tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            message = text_of(result.content[0])
            assert result.is_error, (tool, message)
            assert result.structured_content == {"code": "secret_detected", "message": message}
            assert "AWS access key (line 1, column 25)" in message, message
    assert digest(path) == before
