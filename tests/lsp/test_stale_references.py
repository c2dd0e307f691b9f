"""Stale references in the memory files over real stdio: squiggled at the reference, kept
fresh by the client's file watching (no keystroke), and fixed by the quick fixes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from support.lsp_session import MetisClient, apply_workspace_edit
from support.lsp_values import file_uri, span
from support.memory_files import write_memory

MEMORY = (
    "# Memory\n\n- Rate limiting lives in `ratelimit/bucket.go`.\n- `make itest` needs Postgres.\n"
)
REMOVE_STALE = (
    "Remove stale entry “Rate limiting lives in `ratelimit/bucket.go`.” "
    "(`ratelimit/bucket.go` does not exist)"
)


def watched(client: MetisClient) -> list[str]:
    """The glob patterns of the server's stale-reference watchers, as registered now."""
    registration = client.live_registrations.get("metis-stale-references")
    if registration is None:
        return []
    options = registration.register_options
    assert isinstance(options, dict)
    return [str(w["globPattern"]) for w in options["watchers"]]


def changed(client: MetisClient, path: Path, kind: types.FileChangeType) -> None:
    """What the editor's file watcher sends."""
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams([types.FileEvent(uri=file_uri(path), type=kind)])
    )


async def test_a_stale_path_is_squiggled_and_follows_the_disk_without_a_keystroke(
    client: MetisClient, workspace: Path
) -> None:
    (workspace / "Makefile").write_text("test:\n\tpytest\nitest:\n\tpytest -m pg\n")
    memory = write_memory(workspace, "MEMORY.md", MEMORY)
    await client.start_session([workspace])
    client.open(memory)
    await client.wait_for_codes(memory, ["stale-reference"])
    stale = client.diagnostic(memory, "stale-reference")
    assert stale.severity == types.DiagnosticSeverity.Information
    line = MEMORY.splitlines()[2]
    start = line.index("ratelimit/")
    assert line[start - 1] == "`" and line[start + 19] == "`"
    assert span(stale.range) == ((2, start), (2, start + 19))  # the path, inside its backticks
    assert stale.message == (
        "`ratelimit/bucket.go` does not exist in this workspace: this entry may be stale; "
        "fix it or remove it"
    )
    # The server asked the client to watch exactly the named path and the Makefile.
    target = workspace / "ratelimit" / "bucket.go"
    await client.wait_until(lambda: str(target) in watched(client), "the path's watcher")
    assert str(workspace / "Makefile") in watched(client)
    # the path, its folder (a deleted folder is reported as itself), GNU make's three names
    assert len(watched(client)) == 2 + 3

    target.parent.mkdir()
    target.write_text("package ratelimit\n")
    changed(client, target, types.FileChangeType.Created)
    await client.wait_for_codes(memory, [])
    target.unlink()
    changed(client, target, types.FileChangeType.Deleted)
    await client.wait_for_codes(memory, ["stale-reference"])
    # A renamed make target is stale too, and the Makefile's change is seen.
    (workspace / "Makefile").write_text("test:\n\tpytest\n")
    changed(client, workspace / "Makefile", types.FileChangeType.Changed)
    await client.wait_for_codes(memory, ["stale-reference", "stale-reference"])


async def test_a_change_before_the_editor_watches_is_seen_once_it_does(
    client: MetisClient, workspace: Path
) -> None:
    """A slow editor starts its watchers a while after the server asks; a file deleted in
    between sends no event. The server asks the disk once more when the watchers are up
    (CI's code-server deleted `api/openapi.yaml` in that window, and the entry was never
    marked)."""
    spec = workspace / "api" / "openapi.yaml"
    spec.parent.mkdir()
    spec.write_text("openapi: 3.1.0\n")
    memory = write_memory(workspace, "MEMORY.md", MEMORY + "- The API is in `api/openapi.yaml`.\n")
    (workspace / "Makefile").write_text("itest:\n\tpytest -m pg\n")
    gate = client.registration_gate = asyncio.Event()
    await client.start_session([workspace])
    client.open(memory)
    await client.wait_for_codes(memory, ["stale-reference"])  # ratelimit/bucket.go
    spec.unlink()  # no watcher yet: no event will come
    gate.set()
    await client.wait_until(lambda: bool(watched(client)), "the stale-reference watchers")
    await client.wait_for_codes(memory, ["stale-reference", "stale-reference"])
    assert "`api/openapi.yaml`" in client.diagnostics[file_uri(memory)][1].message


async def test_the_moved_file_fix_rewrites_the_entry(client: MetisClient, workspace: Path) -> None:
    moved = workspace / "internal" / "ratelimit" / "bucket.go"
    moved.parent.mkdir(parents=True)
    moved.write_text("package ratelimit\n")
    memory = write_memory(workspace, "MEMORY.md", MEMORY)
    await client.start_session([workspace])
    uri = client.open(memory)
    await client.wait_for_codes(memory, ["stale-reference"])
    stale = client.diagnostic(memory, "stale-reference")
    actions = {a.title: a for a in await client.actions(memory, (2, 30))}
    replace = actions["Replace with `internal/ratelimit/bucket.go`"]
    assert replace.is_preferred and replace.edit is not None
    assert replace.diagnostics and replace.diagnostics[0].range == stale.range
    fixed = apply_workspace_edit(replace.edit, lambda _u: MEMORY, client.encoding)[uri]
    assert fixed == MEMORY.replace("ratelimit/bucket.go", "internal/ratelimit/bucket.go")
    removed = apply_workspace_edit(
        actions[REMOVE_STALE].edit or types.WorkspaceEdit(),
        lambda _u: MEMORY,
        client.encoding,
    )[uri]
    assert removed == "# Memory\n\n- `make itest` needs Postgres.\n"
    # Two files of that name: no guess.
    (workspace / "vendor" / "bucket.go").parent.mkdir()
    (workspace / "vendor" / "bucket.go").write_text("package vendor\n")
    titles = [a.title for a in await client.actions(memory, (2, 30))]
    assert REMOVE_STALE in titles and not any(t.startswith("Replace with") for t in titles)
    # One removal of the entry, the stale one: no "Remove entry" beside it.
    assert [t for t in titles if t.startswith("Remove")] == [REMOVE_STALE]


async def test_the_severity_is_set_in_budgets_toml_and_off_switches_it_off(
    client: MetisClient, workspace: Path
) -> None:
    (workspace / ".metis").mkdir()
    config = workspace / ".metis" / "budgets.toml"
    config.write_text('[stale]\nseverity = "warning"\n')
    memory = write_memory(workspace, "MEMORY.md", MEMORY)
    await client.start_session([workspace])
    client.open(memory)
    await client.wait_for_codes(memory, ["stale-reference"])
    assert client.diagnostic(memory, "stale-reference").severity == types.DiagnosticSeverity.Warning
    config.write_text('[stale]\nseverity = "off"\n')
    client.replace_all(memory, MEMORY + "- one more\n")
    await client.wait_for_codes(memory, [])


async def test_other_agents_files_get_the_check_too(client: MetisClient, workspace: Path) -> None:
    """A CLAUDE.md naming a file that went: squiggled, and removable, like a memory entry."""
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print()\n")
    claude = workspace / "CLAUDE.md"
    text = "# Rules\n\n- The app starts in `src/app.py`.\n- Settings live in `src/settings.py`.\n"
    claude.write_text(text)
    await client.start_session([workspace])
    uri = client.open(claude)
    await client.wait_for_codes(claude, ["stale-reference"])
    stale = client.diagnostic(claude, "stale-reference")
    assert stale.message.startswith("`src/settings.py` does not exist in this workspace")
    (remove,) = [
        a
        for a in await client.actions(claude, (3, 25))
        if a.title
        == (
            "Remove stale entry “Settings live in `src/settings.py`.” "
            "(`src/settings.py` does not exist)"
        )
    ]
    assert remove.edit is not None
    fixed = apply_workspace_edit(remove.edit, lambda _u: text, client.encoding)[uri]
    assert fixed == "# Rules\n\n- The app starts in `src/app.py`.\n"


async def test_without_the_clients_file_watching_the_server_watches_the_paths_itself(
    client: MetisClient, workspace: Path
) -> None:
    """Neovim (0.10, 0.11) cannot watch files for a server: the server then watches the
    named paths itself, from the nearest folder that exists, so a file created or deleted
    outside the editor still turns the entry fresh or stale without a keystroke."""
    memory = write_memory(workspace, "MEMORY.md", MEMORY)
    await client.start_session([workspace], client="neovim")
    client.open(memory)
    await client.wait_for_codes(memory, ["stale-reference"])
    assert watched(client) == []  # nothing asked of the client
    target = workspace / "ratelimit" / "bucket.go"
    target.parent.mkdir()  # the folder first: the watch moves down into it
    target.write_text("package ratelimit\n")
    await client.wait_for_codes(memory, [])
    target.unlink()
    await client.wait_for_codes(memory, ["stale-reference"])
    target.write_text("package ratelimit\n")
    await client.wait_for_codes(memory, [])
    # Deleting the whole folder is seen from the folder above it.
    target.unlink()
    target.parent.rmdir()
    await client.wait_for_codes(memory, ["stale-reference"])
