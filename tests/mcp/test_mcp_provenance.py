"""Who writes through MCP: the server names each write's actor from the client's own
`clientInfo`, and with review on an MCP write waits for the user. Driven by the SDK's
real client over stdio, naming itself as a host does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp
import pytest
from mcp_types import Implementation

from metis_memory import MemoryStore
from metis_memory.tools.history import person, record_json
from support.mcp_stdio import mcp_server
from support.mcp_values import text

CLIENT = Implementation(name="metis-test-client", version="9.9.9")
ACTOR = "metis-test-client 9.9.9"


def client(workspace: Path, info: Implementation = CLIENT, **options: Any) -> mcp.Client:
    return mcp.Client(mcp_server(str(workspace)), client_info=info, **options)


def only_text(result: Any) -> str:
    assert len(result.content) == 1, result
    return str(text(result.content[0]))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_write_is_logged_with_the_clients_name_and_version(
    tmp_path: Path, mode: str
) -> None:
    """`legacy` is the `initialize` handshake every host speaks today; `auto` lets the SDK
    pick the newest protocol the server takes."""
    async with client(tmp_path, mode=mode) as c:
        r = await c.call_tool("memory_add", {"file": "MEMORY.md", "entry": "- builds with make"})
        assert not r.is_error, only_text(r)
        r = await c.call_tool(
            "memory_replace", {"file": "MEMORY.md", "old": "make", "new": "make all"}
        )
        assert not r.is_error, only_text(r)
    records = MemoryStore(tmp_path).history()
    assert [(r.operation, r.door, r.actor, r.session) for r in records] == [
        ("replace", "mcp", ACTOR, None),
        ("add", "mcp", ACTOR, None),
    ]
    shown = record_json(records[1])
    assert shown["added"] == ["- builds with make"]
    assert shown["person"] == "metis-test-client 9.9.9 through memory_add over MCP"


async def test_with_review_on_a_write_is_staged_and_the_file_unchanged(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.add_entry("MEMORY.md", "- first fact")
    store.set_review(True)
    before = (tmp_path / ".metis" / "MEMORY.md").read_bytes()
    async with client(tmp_path) as c:
        r = await c.call_tool("memory_add", {"file": "MEMORY.md", "entry": "- second fact"})
        added = only_text(r)
        r = await c.call_tool(
            "memory_consolidate", {"file": "MEMORY.md", "content": "- everything\n"}
        )
        consolidated = only_text(r)
        assert not r.is_error, consolidated
    assert (tmp_path / ".metis" / "MEMORY.md").read_bytes() == before
    staged = store.staged()
    assert [(s.operation, s.door, s.actor) for s in staged] == [
        ("add", "mcp", ACTOR),
        ("consolidate", "mcp", ACTOR),
    ]
    first, second = staged
    assert added == (
        f"Staged for the user's review as change #{first.id}: MEMORY.md is unchanged until "
        "the user accepts it (they may reject it). Do not retry this write; carry on with "
        "your task."
    )
    assert f"change #{second.id}:" in consolidated
    assert [r.operation for r in store.history()] == ["add"]  # only the user's own write


async def test_with_review_off_again_the_write_lands(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.set_review(True)
    store.set_review(False)
    async with client(tmp_path) as c:
        r = await c.call_tool("memory_add", {"file": "USER.md", "entry": "- prefers tabs"})
        assert not r.is_error and "Added entry to USER.md" in only_text(r)
    assert (tmp_path / ".metis" / "USER.md").read_text() == "- prefers tabs\n"
    assert store.staged() == []
    assert [(r.door, r.actor) for r in store.history()] == [("mcp", ACTOR)]


@pytest.mark.parametrize(
    ("name", "version", "actor"),
    [
        ("", "1.0", "unknown MCP client"),
        ("   ", "", "unknown MCP client"),
        ("user", "", "MCP client named user"),
        ("evil\nclient\x1b[31m", "1\n2", "evil client[31m 1 2"),
        ("n" * 5000, "v" * 5000, "n" * 80 + " " + "v" * 80),
    ],
)
async def test_a_client_that_does_not_name_itself_plainly(
    tmp_path: Path, name: str, version: str, actor: str
) -> None:
    """No name: "unknown MCP client"; a name that would read as the user, or a name of
    many lines or kilobytes, is never shown as given."""
    async with client(tmp_path, Implementation(name=name, version=version), mode="legacy") as c:
        r = await c.call_tool("memory_add", {"file": "MEMORY.md", "entry": "- a fact"})
        assert not r.is_error, only_text(r)
    (record,) = MemoryStore(tmp_path).history()
    assert (record.door, record.actor) == ("mcp", actor)
    assert not person(record).startswith("You")


async def test_an_unnamed_clients_write_still_waits_for_review(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.set_review(True)
    async with client(tmp_path, Implementation(name="", version=""), mode="legacy") as c:
        r = await c.call_tool("memory_add", {"file": "MEMORY.md", "entry": "- a fact"})
        assert not r.is_error and "Staged for the user's review" in only_text(r)
    assert not (tmp_path / ".metis" / "MEMORY.md").exists()
    assert [(s.door, s.actor) for s in store.staged()] == [("mcp", "unknown MCP client")]


@pytest.mark.parametrize(
    ("name", "version", "shown"),
    [
        ("Visual Studio Code", "1.139.1", "VS Code 1.139.1"),
        ("Visual Studio Code - Insiders", "1.140.0", "VS Code Insiders 1.140.0"),
        ("inspector-client", "0.17.2", "MCP Inspector 0.17.2"),
        ("code-server", "1.139.1", "code-server 1.139.1"),
    ],
)
async def test_a_known_client_reads_as_its_product(
    tmp_path: Path, name: str, version: str, shown: str
) -> None:
    """The log keeps the client's own words; people read the product's name, also where
    the client's name has spaces (VS Code sends its long name)."""
    async with client(tmp_path, Implementation(name=name, version=version), mode="legacy") as c:
        r = await c.call_tool("memory_add", {"file": "MEMORY.md", "entry": "- a fact"})
        assert not r.is_error, only_text(r)
    (record,) = MemoryStore(tmp_path).history()
    assert record.actor == f"{name} {version}"
    assert person(record) == f"{shown} through memory_add over MCP"
