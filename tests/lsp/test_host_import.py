"""What the agent hosts remember, brought in from the editor over real stdio
(`metis.hostMemoryFound`, `metis.importHostMemory`, then Apply as the consolidation diff does
it: `metis.memoryConsolidate` with `expectedHash`). Claude Code's memory is laid out as it
writes it (hosts/imports/claude.py cites where): `CLAUDE.md` in its config folder (the user's),
and the workspace's auto memory under `projects/<the root, sanitised>/memory/`; every host's
folder is the test's own (`tests/support/forked_server.py` passes them to the server)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from metis_memory.budgets.paths import claude_project
from support.cli import cli_elsewhere
from support.lsp_session import MetisClient
from support.lsp_values import file_uri
from support.memory_files import write_memory

TOKEN = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
"""A GitHub token the secret rules match, built here so that none is committed."""


@pytest.fixture(autouse=True)
def claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Claude Code's config folder, and every other host's empty: nothing of the machine's
    (autouse: set before the `client` fixture starts the server, which takes them)."""
    homes = tmp_path / "hosts"
    for variable in ("CODEX_HOME", "GEMINI_CLI_HOME", "QWEN_HOME", "COPILOT_HOME", "XDG_DATA_HOME"):
        folder = homes / variable.lower()
        folder.mkdir(parents=True)
        monkeypatch.setenv(variable, str(folder))
    config = homes / "claude"
    config.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    return config


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    (root / "Makefile").write_text(".PHONY: itest\nitest:\n\tpytest\n")
    return root


def lay_out_claude(config: Path, workspace: Path) -> None:
    (config / "CLAUDE.md").write_text(
        "# My preferences\n\n"
        "- Answer in British English\n"
        "- Run `make itest` before pushing\n"
        f"- My deploy token is {TOKEN}\n"
    )
    memory = config / "projects" / claude_project(workspace) / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text(
        "- [Tone](tone.md) — how answers should read\n- The API lives in `api/server.go`\n"
    )
    (memory / "tone.md").write_text(
        "---\nname: tone\ndescription: how answers should read\ntype: feedback\n---\n"
        "Keep answers short.\n"
    )


def target(proposal: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [t for t in proposal["targets"] if t["target"] == name]
    assert isinstance(found, dict)
    return found


async def test_found_says_which_hosts_remember_and_whether_the_folder_has_ours(
    client: MetisClient, claude: Path, shop: Path, tmp_path: Path
) -> None:
    lay_out_claude(claude, shop)
    empty = tmp_path / "empty"
    empty.mkdir()
    (claude / "CLAUDE.md").unlink()  # the user's file gone: only the shop's auto memory
    await client.start_session([shop, empty])
    found = await client.command("metis.hostMemoryFound", {"folder": file_uri(shop)})
    assert found["hosts"] == ["claude"] and found["ours"] is False
    assert found["folder"] == file_uri(shop)
    assert [loc["scope"] for loc in found["locations"]] == ["workspace"]
    nothing = await client.command("metis.hostMemoryFound", {"folder": file_uri(empty)})
    assert nothing["hosts"] == [] and nothing["ours"] is False
    write_memory(shop, "MEMORY.md", "- ours\n")
    again = await client.command("metis.hostMemoryFound", {"folder": file_uri(shop)})
    assert again["ours"] is True


async def test_the_proposal_places_each_entry_and_apply_writes_it_as_proposed(
    client: MetisClient, claude: Path, shop: Path, user_config_home: Path
) -> None:
    lay_out_claude(claude, shop)
    memory = write_memory(shop, "MEMORY.md", "# Shop\n\n- the api lives in  `api/server.go`\n")
    await client.start_session([shop])
    proposal = await client.command(
        "metis.importHostMemory", {"folder": file_uri(shop), "hosts": ["claude"]}
    )
    assert proposal["workspace"] == file_uri(shop) and proposal["hosts"] == ["claude"]
    assert TOKEN not in str(proposal), "a secret is named by its rule, never shown"

    workspace = target(proposal, "MEMORY.md")
    assert workspace["current"] == memory.read_text()
    assert [a["text"] for a in workspace["added"]] == ["- Run `make itest` before pushing"]
    assert [d["of"] for d in workspace["duplicates"]] == ["MEMORY.md"]  # the API entry
    user_md = target(proposal, "USER.md")
    assert [a["text"] for a in user_md["added"]] == ["- Keep answers short."]
    user = target(proposal, "user-memory")
    assert user["path"] == str(user_config_home / "metis-memory" / "USER.md")
    assert user["exists"] is False and user["current"] == ""
    assert [a["text"] for a in user["added"]] == ["- Answer in British English"]
    assert [(r["rule"], r["line"]) for r in user["refused"]] == [("GitHub token", 5)]

    # Apply, as the consolidation diff does it: each place a compare-and-swap on its hash.
    for name in ("MEMORY.md", "USER.md", "user-memory"):
        place = target(proposal, name)
        await client.command(
            "metis.memoryConsolidate",
            {
                "file": name,
                "content": place["proposed"],
                "workspace": file_uri(shop),
                "expectedHash": place["expected_hash"],
            },
        )
        assert Path(str(place["path"])).read_text() == place["proposed"]
    assert memory.read_text().endswith("- Run `make itest` before pushing\n")


async def test_a_place_written_since_the_proposal_is_not_overwritten(
    client: MetisClient, claude: Path, shop: Path, user_config_home: Path
) -> None:
    lay_out_claude(claude, shop)
    await client.start_session([shop])
    proposal = await client.command("metis.importHostMemory", {"folder": file_uri(shop)})
    user = target(proposal, "user-memory")
    await cli_elsewhere("add", "--user", "- Written meanwhile by another workspace's agent")
    try:
        await client.command(
            "metis.memoryConsolidate",
            {
                "file": "user-memory",
                "content": user["proposed"],
                "expectedHash": user["expected_hash"],
            },
        )
    except JsonRpcException as exc:
        assert isinstance(exc.data, dict) and exc.data["code"] == "conflict"
    else:
        raise AssertionError("the proposal was applied over a write made since")
    path = user_config_home / "metis-memory" / "USER.md"
    assert path.read_text() == "- Written meanwhile by another workspace's agent\n"


async def test_an_unknown_host_is_refused_naming_the_known_ones(
    client: MetisClient, claude: Path, shop: Path
) -> None:
    await client.start_session([shop])
    try:
        await client.command("metis.importHostMemory", {"folder": file_uri(shop), "hosts": ["vim"]})
    except JsonRpcException as exc:
        assert isinstance(exc.data, dict) and exc.data["code"] == "invalid_input"
        assert "claude, codex, gemini, qwen, copilot" in str(exc)
    else:
        raise AssertionError("an unknown host was accepted")


async def test_nothing_found_is_a_proposal_that_changes_nothing(
    client: MetisClient, claude: Path, shop: Path
) -> None:
    await client.start_session([shop])
    proposal = await client.command("metis.importHostMemory", {"folder": file_uri(shop)})
    assert proposal["found_nothing"] is True
    targets = proposal["targets"]
    assert all(t["added"] == [] and t["proposed"] == t["current"] for t in targets)
