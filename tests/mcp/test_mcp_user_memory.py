"""The user memory over MCP, with the real server over stdio (a forked `metis-memory mcp`,
the test's own XDG_CONFIG_HOME): its three tools, its resource, and its section first and
once in the `memory` prompt, `memory_read` and `memory_assemble_prompt`; a write from one
workspace's server is read, and heard, by another workspace's."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp
import pytest
from mcp_types import Implementation

from metis_memory import MemoryStore
from metis_memory.store.files import MemoryFile
from metis_memory.store.prompt import MEMORY_HEADING, USER_HEADING, USER_MEMORY_HEADING
from metis_memory.tools.history import person, record_json
from support.mcp_stdio import mcp_server
from support.mcp_values import text
from support.spec_schemas import SPEC_SCHEMAS

USER_MEMORY_URI = "metis-memory://user-memory/USER.md"
NAMED = "your user memory (USER.md read in every workspace)"
GITHUB = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
CLIENT = Implementation(name="metis-test-client", version="9.9.9")
WAIT_S = 15


def folder(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.mkdir()
    return path


def client(workspace: Path, **options: Any) -> mcp.Client:
    return mcp.Client(mcp_server(str(workspace)), client_info=CLIENT, **options)


def only_text(result: Any) -> str:
    assert len(result.content) == 1, result
    return str(text(result.content[0]))


async def next_uri(events: Any, what: str) -> str | None:
    """The URI of the next update a listen stream hears, within WAIT_S."""
    try:
        with anyio.fail_after(WAIT_S):
            event = await events.__anext__()
    except TimeoutError:
        raise AssertionError(f"no resource update within {WAIT_S} s of {what}") from None
    return getattr(event, "uri", None)


def user_file(user_config_home: Path) -> Path:
    return user_config_home / "metis-memory" / "USER.md"


def seed_workspace(workspace: Path) -> None:
    store = MemoryStore(workspace)
    store.add_entry(MemoryFile.USER, "- Owns the billing service here")
    store.add_entry(MemoryFile.MEMORY, "- Build with make")


async def test_the_user_memory_tools_take_the_specs_fields_less_file(tmp_path: Path) -> None:
    async with client(tmp_path) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    for spec_name, spec in SPEC_SCHEMAS.items():
        assert tools[spec_name].input_schema == spec  # the spec's own, exactly as before
        schema = tools[f"user_{spec_name}"].input_schema
        assert schema["properties"] == {k: v for k, v in spec["properties"].items() if k != "file"}
        assert schema["required"] == [k for k in spec["required"] if k != "file"]
        assert schema["additionalProperties"] is False
        annotations = tools[f"user_{spec_name}"].annotations
        assert annotations is not None and annotations.read_only_hint is False
        assert "every workspace" in str(tools[f"user_{spec_name}"].description)


async def test_a_write_in_one_workspace_is_read_in_another(
    tmp_path: Path, user_config_home: Path
) -> None:
    first, second = folder(tmp_path, "a"), folder(tmp_path, "b")
    seed_workspace(second)
    async with client(first) as c:
        r = await c.call_tool("user_memory_add", {"entry": "- Answers in British English"})
        assert not r.is_error, only_text(r)
        assert only_text(r) == (
            f"Added entry to {NAMED}: 0 B → 29 B (soft cap 1,536 B, hard cap 3,072 B).\n\n"
            "Your user memory now reads (the whole file):\n\n- Answers in British English"
        )
    assert user_file(user_config_home).read_text() == "- Answers in British English\n"
    assert not (first / ".metis").exists()
    async with client(second) as c:
        read = await c.read_resource(USER_MEMORY_URI)
        assert [text(part) for part in read.contents] == ["- Answers in British English\n"]
        assert read.contents[0].mime_type == "text/markdown"
        prompt = text((await c.get_prompt("memory")).messages[0].content)
    # Once, and before the workspace's USER.md, then its MEMORY.md.
    assert prompt.count("British English") == 1
    at = prompt.index(f"{USER_MEMORY_HEADING}\n\n- Answers in British English")
    assert at < prompt.index(f"{USER_HEADING}\n\n- Owns the billing service here")
    assert prompt.index(USER_HEADING) < prompt.index(f"{MEMORY_HEADING}\n\n- Build with make")


async def test_memory_read_and_the_assembled_prompt_put_it_first_and_once(
    tmp_path: Path, user_config_home: Path
) -> None:
    seed_workspace(tmp_path)
    path = user_file(user_config_home)
    path.parent.mkdir(mode=0o700)
    path.write_text(f"- Reviews diffs unified\n- token {GITHUB}\n")  # typed in by hand
    path.chmod(0o600)
    async with client(tmp_path) as c:
        read = json.loads(only_text(await c.call_tool("memory_read", {})))
        prompt = only_text(await c.call_tool("memory_assemble_prompt", {"base": "Base."}))
        resource = text((await c.read_resource(USER_MEMORY_URI)).contents[0])
    assert list(read) == ["user-memory", "MEMORY.md", "USER.md"]
    assert read["user-memory"]["path"] == str(path)
    assert read["user-memory"]["content"] == (
        "- Reviews diffs unified\n- token [redacted: GitHub token]\n"
    )
    assert prompt == (
        f"Base.\n\n{USER_MEMORY_HEADING}\n\n- Reviews diffs unified\n- token "
        f"[redacted: GitHub token]\n\n{USER_HEADING}\n\n- Owns the billing service here\n\n"
        f"{MEMORY_HEADING}\n\n- Build with make"
    )
    assert resource == "- Reviews diffs unified\n- token [redacted: GitHub token]\n"
    assert GITHUB not in json.dumps(read) + prompt + resource


async def test_a_subscriber_in_one_workspace_hears_a_write_from_another(
    tmp_path: Path, user_config_home: Path
) -> None:
    """subscriptions/listen on the user memory: another workspace's server writes it, then
    the CLI does, and this server announces each."""
    first, second = folder(tmp_path, "a"), folder(tmp_path, "b")
    async with client(second) as listener, client(first) as writer:
        async with listener.listen(resource_subscriptions=[USER_MEMORY_URI]) as events:
            r = await writer.call_tool("user_memory_add", {"entry": "- Uses vim keys"})
            assert not r.is_error, only_text(r)
            assert await next_uri(events, "the other workspace's write") == USER_MEMORY_URI
            cli = [sys.executable, "-m", "metis_memory", "add", "--user", "- Likes tea"]
            done = await anyio.run_process(cli, cwd=first, check=False)
            assert done.returncode == 0, done.stderr
            assert await next_uri(events, "the CLI's write") == USER_MEMORY_URI
        read = await listener.read_resource(USER_MEMORY_URI)
        assert text(read.contents[0]) == "- Uses vim keys\n- Likes tea\n"


async def test_a_write_is_logged_with_the_clients_name(
    tmp_path: Path, user_config_home: Path
) -> None:
    async with client(tmp_path) as c:
        r = await c.call_tool("user_memory_add", {"entry": "- Prefers short answers"})
        assert not r.is_error, only_text(r)
    records = MemoryStore.for_user().history()
    assert [(r.operation, r.door, r.actor) for r in records] == [
        ("add", "mcp", "metis-test-client 9.9.9")
    ]
    assert record_json(records[0], user_memory=True)["person"] == (
        "metis-test-client 9.9.9 through user_memory_add over MCP"
    )
    assert person(records[0]) == "metis-test-client 9.9.9 through memory_add over MCP"
    assert MemoryStore(tmp_path).history() == []


async def test_refusals_are_tool_errors_naming_the_user_memory(
    tmp_path: Path, user_config_home: Path
) -> None:
    async with client(tmp_path) as c:
        await c.call_tool("user_memory_add", {"entry": "y" * 1500})
        over = await c.call_tool("user_memory_add", {"entry": "z" * 1600})
        secret = await c.call_tool("user_memory_add", {"entry": f"token {GITHUB}"})
        wrong = await c.call_tool("user_memory_add", {"file": "USER.md", "entry": "x"})
    assert over.is_error and over.structured_content is not None
    assert over.structured_content["code"] == "hard_cap_exceeded"
    assert only_text(over).startswith(
        f"add rejected: {NAMED} would be 3,102 B, 30 B over its hard cap of 3,072 B"
    )
    assert "user_memory_consolidate to at most 1,471 B" in only_text(over)
    assert secret.is_error and secret.structured_content is not None
    assert secret.structured_content["code"] == "secret_detected"
    assert "with every prompt, in every workspace" in only_text(secret)
    assert GITHUB not in only_text(secret)
    assert wrong.is_error and "'file' is not an accepted field" in only_text(wrong)
    assert user_file(user_config_home).read_text() == "y" * 1500 + "\n"


@pytest.mark.parametrize("review_on", ["user memory", "workspace"])
async def test_with_review_on_a_write_waits_in_the_user_memorys_inbox(
    tmp_path: Path, user_config_home: Path, review_on: str
) -> None:
    store = MemoryStore(tmp_path)
    (store.user_memory if review_on == "user memory" else store).set_review(True)
    async with client(tmp_path) as c:
        r = await c.call_tool("user_memory_add", {"entry": "- Likes tea"})
    assert not r.is_error
    waiting = MemoryStore.for_user().staged()
    assert [(w.operation, w.actor, w.payload) for w in waiting] == [
        ("add", "metis-test-client 9.9.9", {"entry": "- Likes tea"})
    ]
    assert only_text(r) == (
        f"Staged for the user's review as change #{waiting[0].id}: {NAMED} is unchanged until "
        "the user accepts it (they may reject it). Do not retry this write; carry on with your "
        "task."
    )
    assert not user_file(user_config_home).exists()


async def test_an_unknown_resource_names_the_user_memorys(tmp_path: Path) -> None:
    async with client(tmp_path) as c:
        with pytest.raises(mcp.MCPError) as caught:
            await c.read_resource("metis-memory://user-memory/MEMORY.md")
    assert USER_MEMORY_URI in str(caught.value)


async def test_a_config_folder_made_by_the_servers_own_write_is_watched_from_then_on(
    tmp_path: Path,
) -> None:
    """A fresh account has no config folder: the watch begins at the write that makes it, so
    the CLI's write after it is heard too."""
    config = tmp_path / "fresh" / "config"
    workspace = folder(tmp_path, "ws")
    params = mcp_server(str(workspace), env={"XDG_CONFIG_HOME": str(config)})
    async with (
        mcp.Client(params, client_info=CLIENT) as c,
        c.listen(resource_subscriptions=[USER_MEMORY_URI]) as events,
    ):
        r = await c.call_tool("user_memory_add", {"entry": "- Uses vim keys"})
        assert not r.is_error, only_text(r)
        assert (config / "metis-memory" / "USER.md").read_text() == "- Uses vim keys\n"
        assert await next_uri(events, "the server's own first write") == USER_MEMORY_URI
        cli = [sys.executable, "-m", "metis_memory", "add", "--user", "- Likes tea"]
        env = {**os.environ, "XDG_CONFIG_HOME": str(config)}
        done = await anyio.run_process(cli, cwd=workspace, env=env, check=False)
        assert done.returncode == 0, done.stderr
        assert await next_uri(events, "the CLI's write after it") == USER_MEMORY_URI
