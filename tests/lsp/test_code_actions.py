"""Quick fixes over real stdio: each action's workspace edit is applied and the
result checked; the client-side commands carry the documented arguments."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from support.lsp_session import CLIENT_COMMANDS, SERVER_CACHE, MetisClient, apply_workspace_edit
from support.lsp_values import file_uri
from support.memory_files import write_memory

TOKEN = "AKIAIOSFODNN7EXAMPLE"
MEMORY_TEXT = (
    "# Memory 😀\n"  # 0
    "\n"  # 1
    "- uses make 日本\n"  # 2
    "- prefers tabs\n"  # 3
    "- USES  make 日本\n"  # 4: duplicate of line 2
    "-\n"  # 5: empty
    f"- deploy key 🔑 {TOKEN}\n"  # 6: secret
)


def titled(actions: list[types.CodeAction], title: str) -> types.CodeAction:
    found = [a for a in actions if a.title == title]
    assert len(found) == 1, f"no single {title!r} in {[a.title for a in actions]}"
    return found[0]


def applied(client: MetisClient, action: types.CodeAction) -> dict[str, str]:
    assert action.edit is not None, f"{action.title} has no edit"

    def read(uri: str) -> str:
        if uri in client.texts:
            return client.texts[uri]
        path = Path(uri.removeprefix("file://"))
        return path.read_text(encoding="utf-8") if path.exists() else ""

    return apply_workspace_edit(action.edit, read, client.encoding)


async def open_memory(
    client: MetisClient,
    workspace: Path,
    text: str = MEMORY_TEXT,
    caps: str = "visual-studio-code",
    options: object = CLIENT_COMMANDS,
) -> Path:
    """Open MEMORY.md in a client that, by default, implements the client-side commands."""
    memory = write_memory(workspace, "MEMORY.md", text)
    await client.start_session([workspace], client=caps, options=options)
    client.open(memory)
    return memory


async def test_remove_duplicate_entry(client: MetisClient, workspace: Path) -> None:
    memory = await open_memory(client, workspace)
    await client.wait_for_codes(memory, ["duplicate-entry", "empty-entry", "secret"])
    actions = await client.actions(memory, (4, 3))
    action = titled(actions, "Remove duplicate entry “USES make 日本” (it repeats line 3)")
    assert action.kind == types.CodeActionKind.QuickFix and action.is_preferred
    assert action.diagnostics and action.diagnostics[0].code == "duplicate-entry"
    result = applied(client, action)[file_uri(memory)]
    assert result == MEMORY_TEXT.replace("- USES  make 日本\n", "")
    # The edit is versioned (VS Code supports documentChanges).
    assert action.edit is not None and action.edit.document_changes
    change = action.edit.document_changes[0]
    assert isinstance(change, types.TextDocumentEdit)
    assert change.text_document.version == client.versions[file_uri(memory)]
    # One removal of the entry in the menu, not a second "Remove entry" beside it.
    assert [a.title for a in actions if a.title.startswith("Remove")] == [action.title]


async def test_remove_empty_entry(client: MetisClient, workspace: Path) -> None:
    memory = await open_memory(client, workspace)
    await client.wait_for_codes(memory, ["duplicate-entry", "empty-entry", "secret"])
    action = titled(await client.actions(memory, (5, 0)), "Remove the empty entry on line 6")
    assert applied(client, action)[file_uri(memory)] == MEMORY_TEXT.replace("\n-\n", "\n")


async def test_redact_secret(client: MetisClient, workspace: Path) -> None:
    memory = await open_memory(client, workspace)
    await client.wait_for_codes(memory, ["duplicate-entry", "empty-entry", "secret"])
    action = titled(
        await client.actions(memory, (6, 12), (6, 20)), "Redact the AWS access key on line 7"
    )
    result = applied(client, action)[file_uri(memory)]
    assert result == MEMORY_TEXT.replace(TOKEN, "[REDACTED]")


async def test_remove_entry_and_replace_entry_prompt(client: MetisClient, workspace: Path) -> None:
    memory = await open_memory(client, workspace)
    await client.wait_for_codes(memory, ["duplicate-entry", "empty-entry", "secret"])
    actions = await client.actions(memory, (3, 5))
    remove = titled(actions, "Remove entry “prefers tabs”")
    assert applied(client, remove)[file_uri(memory)] == MEMORY_TEXT.replace("- prefers tabs\n", "")
    replace = titled(actions, "Replace entry “prefers tabs”…")
    assert replace.edit is None and replace.command is not None
    assert replace.command.command == "metis.replaceEntryPrompt"
    assert list(replace.command.arguments or ()) == [
        {"file": "MEMORY.md", "old": "- prefers tabs", "workspace": file_uri(workspace)}
    ]


async def test_no_entry_actions_on_a_heading(client: MetisClient, workspace: Path) -> None:
    memory = await open_memory(client, workspace)
    await client.wait_for_codes(memory, ["duplicate-entry", "empty-entry", "secret"])
    assert await client.actions(memory, (0, 3)) == []


async def test_move_entry_to_user_md_edits_both_files(client: MetisClient, workspace: Path) -> None:
    user = write_memory(workspace, "USER.md", "# User\n- likes 🍵")  # closed, no final newline
    memory = await open_memory(client, workspace)
    await client.wait_for_codes(memory, ["duplicate-entry", "empty-entry", "secret"])
    action = titled(await client.actions(memory, (3, 0)), "Move entry “prefers tabs” to USER.md")
    result = applied(client, action)
    assert result[file_uri(memory)] == MEMORY_TEXT.replace("- prefers tabs\n", "")
    assert result[file_uri(user)] == "# User\n- likes 🍵\n- prefers tabs\n"


async def test_move_creates_the_target_when_missing(client: MetisClient, workspace: Path) -> None:
    memory = await open_memory(client, workspace)
    await client.wait_for_codes(memory, ["duplicate-entry", "empty-entry", "secret"])
    action = titled(await client.actions(memory, (3, 0)), "Move entry “prefers tabs” to USER.md")
    assert action.edit is not None and action.edit.document_changes
    create = action.edit.document_changes[0]
    assert isinstance(create, types.CreateFile)
    assert create.uri == file_uri(workspace / ".metis" / "USER.md")
    assert applied(client, action)[create.uri] == "- prefers tabs\n"


async def test_move_from_user_md_back_to_memory_md(client: MetisClient, workspace: Path) -> None:
    memory = write_memory(workspace, "MEMORY.md", "# Memory\n")
    user = write_memory(workspace, "USER.md", "- a\n- b\n")
    await client.start_session([workspace])
    client.open(user)
    action = titled(await client.actions(user, (0, 2)), "Move entry “a” to MEMORY.md")
    result = applied(client, action)
    assert result == {file_uri(user): "- b\n", file_uri(memory): "# Memory\n- a\n"}


async def test_move_is_refused_when_the_target_would_pass_its_hard_cap(
    client: MetisClient, workspace: Path
) -> None:
    write_memory(workspace, "USER.md", "u" * 3060 + "\n")
    memory = await open_memory(client, workspace)
    await client.wait_for_codes(memory, ["duplicate-entry", "empty-entry", "secret"])
    action = titled(await client.actions(memory, (3, 0)), "Move entry “prefers tabs” to USER.md")
    assert action.edit is None and action.disabled is not None
    assert action.disabled.reason == (
        "Moving this entry would make USER.md 3,076 B, over its 3,072 B hard cap: "
        "consolidate USER.md first"
    )


async def test_cap_actions_consolidate_and_tidy(client: MetisClient, workspace: Path) -> None:
    text = "# Memory\n\n\n\n- fact one   \n- FACT one\n\n\n" + "- filler ✓ line\n" * 130
    memory = await open_memory(client, workspace, text)
    await client.wait_for_codes(memory, ["duplicate-entry"] * 130 + ["over-soft-cap"])
    cap = client.diagnostic(memory, "over-soft-cap")
    actions = await client.actions(memory, (cap.range.start.line, cap.range.start.character))
    consolidate = titled(actions, "Consolidate MEMORY.md…")
    assert consolidate.command is not None and consolidate.edit is None
    assert consolidate.command.command == "metis.openConsolidation"
    assert list(consolidate.command.arguments or ()) == [
        {"file": "MEMORY.md", "workspace": file_uri(workspace)}
    ]
    assert consolidate.diagnostics and consolidate.diagnostics[0].code == "over-soft-cap"
    tidy = titled(actions, "Tidy MEMORY.md")
    tidied = applied(client, tidy)[file_uri(memory)]
    assert tidied == "# Memory\n\n- fact one\n\n- filler ✓ line\n"
    # It agrees with the metis.tidy command.
    proposal = await client.command("metis.tidy", {"file": "MEMORY.md"})
    assert proposal == {"file": "MEMORY.md", "content": tidied, "changed": True}


async def test_no_tidy_when_nothing_to_tidy(client: MetisClient, workspace: Path) -> None:
    memory = await open_memory(client, workspace, "".join(f"- fact {i:04}\n" for i in range(200)))
    await client.wait_for_codes(memory, ["over-soft-cap"])
    cap = client.diagnostic(memory, "over-soft-cap")
    start = (cap.range.start.line, cap.range.start.character)
    titles = [a.title for a in await client.actions(memory, start)]
    assert "Consolidate MEMORY.md…" in titles and "Tidy MEMORY.md" not in titles


async def test_a_utf8_client_without_document_changes_gets_plain_changes(
    client: MetisClient, workspace: Path
) -> None:
    memory = await open_memory(client, workspace, caps="neovim")
    assert client.encoding == "utf-8"
    await client.wait_for_codes(memory, ["duplicate-entry", "empty-entry", "secret"])
    redact = titled(await client.actions(memory, (6, 20)), "Redact the AWS access key on line 7")
    assert redact.edit is not None and redact.edit.changes and not redact.edit.document_changes
    (edit,) = redact.edit.changes[file_uri(memory)]
    assert edit.range.start == types.Position(6, 18)  # "- deploy key " + 🔑 as 4 UTF-8 bytes
    assert applied(client, redact)[file_uri(memory)] == MEMORY_TEXT.replace(TOKEN, "[REDACTED]")
    move = titled(await client.actions(memory, (3, 0)), "Move entry “prefers tabs” to USER.md")
    result = applied(client, move)
    assert result[file_uri(workspace / ".metis" / "USER.md")] == "- prefers tabs\n"


async def test_a_client_without_disabled_support_gets_no_refused_move(
    client: MetisClient, workspace: Path
) -> None:
    write_memory(workspace, "USER.md", "u" * 3060 + "\n")
    memory = await open_memory(client, workspace, caps="neovim")
    await client.wait_for_codes(memory, ["duplicate-entry", "empty-entry", "secret"])
    titles = [a.title for a in await client.actions(memory, (3, 0))]
    assert "Remove entry “prefers tabs”" in titles
    assert not [t for t in titles if t.startswith("Move")]


async def test_client_side_commands_are_not_advertised(
    client: MetisClient, workspace: Path
) -> None:
    result = await client.start_session([workspace])
    provider = result.capabilities.execute_command_provider
    assert provider is not None
    assert sorted(provider.commands) == [
        "metis.agentContext",
        "metis.agentHosts",
        "metis.applyEdit",
        "metis.assemblePrompt",
        "metis.blame",
        "metis.connectAgents",
        "metis.consolidationPrompt",
        "metis.createMemory",
        "metis.history",
        "metis.historyDiff",
        "metis.hostMemoryFound",
        "metis.hostPrompts",
        "metis.importHostMemory",
        "metis.installLauncher",
        "metis.memoryAdd",
        "metis.memoryConsolidate",
        "metis.memoryReplace",
        "metis.moveToWorkspace",
        "metis.openUserMemory",
        "metis.read",
        "metis.restore",
        "metis.review",
        "metis.reviewAccept",
        "metis.reviewReject",
        "metis.setReview",
        "metis.showConsolidationProposal",
        "metis.tidy",
        "metis.unarchive",
        "metis.undo",
        "metis.usage",
    ]
    assert result.capabilities.code_action_provider is not None


async def test_a_client_without_literal_support_gets_only_commands(
    client: MetisClient, workspace: Path
) -> None:
    """The spec allows only `Command`s to a client that did not declare
    `codeActionLiteralSupport`: edits come as `metis.applyEdit`, which the server sends back
    with `workspace/applyEdit`."""
    capabilities = client_capabilities("visual-studio-code")
    assert capabilities.text_document and capabilities.text_document.code_action
    capabilities.text_document.code_action.code_action_literal_support = None
    text = "# Memory\n\n\n\n- fact one   \n- FACT one\n\n\n" + "- filler ✓ line\n" * 130
    memory = write_memory(workspace, "MEMORY.md", text)
    await client.start_session([workspace], capabilities=capabilities, options=CLIENT_COMMANDS)
    client.open(memory)
    await client.wait_for_codes(memory, ["duplicate-entry"] * 130 + ["over-soft-cap"])
    cap = client.diagnostic(memory, "over-soft-cap")
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=file_uri(memory)),
            range=cap.range,
            context=types.CodeActionContext(diagnostics=[cap]),
        )
    )
    assert result and all(isinstance(r, types.Command) for r in result), result
    by_title = {r.title: r for r in result if isinstance(r, types.Command)}
    assert by_title["Consolidate MEMORY.md…"].command == "metis.openConsolidation"
    tidy = by_title["Tidy MEMORY.md"]
    assert tidy.command == "metis.applyEdit" and tidy.arguments
    reply = await client.command(tidy.command, *tidy.arguments)
    assert reply == {"applied": True, "failureReason": None}
    (sent,) = client.applied_edits
    assert sent.label == "Tidy MEMORY.md"
    tidied = apply_workspace_edit(sent.edit, lambda _uri: text, client.encoding)
    assert tidied[file_uri(memory)] == "# Memory\n\n- fact one\n\n- filler ✓ line\n"
    assert memory.read_text() == text  # the server wrote nothing itself


OVER_SOFT_CAP = "# Memory\n\n\n\n- fact one   \n- FACT one\n\n\n" + "- filler ✓ line\n" * 130


def offered_commands(actions: list[types.CodeAction]) -> set[str]:
    return {a.command.command for a in actions if a.command is not None}


@pytest.mark.parametrize("options", [None, {}, {"clientCommands": []}, {"clientCommands": "x"}])
async def test_a_client_that_declares_no_client_commands_is_offered_none(
    client: MetisClient, workspace: Path, options: object
) -> None:
    """Emacs, Helix, Kakoune: every action offered is one the client can run itself."""
    capabilities = client_capabilities("visual-studio-code")
    assert capabilities.window is not None
    capabilities.window.show_document = None  # and no way to show a proposal either
    memory = write_memory(workspace, "MEMORY.md", OVER_SOFT_CAP)
    await client.start_session([workspace], capabilities=capabilities, options=options)
    client.open(memory)
    await client.wait_for_codes(memory, ["duplicate-entry"] * 130 + ["over-soft-cap"])
    cap = client.diagnostic(memory, "over-soft-cap")
    on_cap = await client.actions(memory, (cap.range.start.line, cap.range.start.character))
    on_entry = await client.actions(memory, (4, 3))
    provider = client.initialize_result.capabilities.execute_command_provider  # type: ignore[union-attr]
    runnable = set(provider.commands if provider else ())
    for action in on_cap + on_entry:
        assert action.edit is not None or (
            action.command is not None and action.command.command in runnable
        ), f"{action.title} runs {action.command}, which this client cannot run"
    cap_titles = [a.title for a in on_cap]
    assert "Tidy MEMORY.md" in cap_titles
    assert not [t for t in cap_titles if t.startswith(("Consolidate", "Show consolidation"))]
    assert "Remove entry “fact one”" in [a.title for a in on_entry]
    assert not offered_commands(on_cap + on_entry)


async def test_a_client_that_can_show_documents_gets_the_proposal_shown(
    client: MetisClient, workspace: Path
) -> None:
    """No consolidation view, but `window/showDocument`: the tidied text opens in a file
    of the user cache, and the memory file is left as it was."""
    memory = await open_memory(client, workspace, OVER_SOFT_CAP, options=None)
    await client.wait_for_codes(memory, ["duplicate-entry"] * 130 + ["over-soft-cap"])
    cap = client.diagnostic(memory, "over-soft-cap")
    actions = await client.actions(memory, (cap.range.start.line, cap.range.start.character))
    command = titled(actions, "Show consolidation proposal for MEMORY.md").command
    assert command is not None and command.command == "metis.showConsolidationProposal"
    assert list(command.arguments or ()) == [
        {"file": "MEMORY.md", "workspace": file_uri(workspace)}
    ]
    result = await client.command(command.command, *command.arguments or ())
    (params,) = client.shown_documents
    assert params.take_focus is True
    assert result == {"file": "MEMORY.md", "uri": params.uri, "shown": True}
    proposal = Path(params.uri.removeprefix("file://"))
    assert proposal.is_relative_to(SERVER_CACHE) and proposal.name == "MEMORY.proposal.md"
    assert proposal.read_text(encoding="utf-8") == "# Memory\n\n- fact one\n\n- filler ✓ line\n"
    assert proposal.stat().st_mode & 0o077 == 0
    assert memory.read_text(encoding="utf-8") == OVER_SOFT_CAP  # nothing written to memory
    assert sorted(p.name for p in (workspace / ".metis").iterdir()) == ["MEMORY.md"]


async def test_apply_edit_only_applies_quick_fixes_to_memory_files(
    client: MetisClient, workspace: Path, tmp_path: Path
) -> None:
    """`metis.applyEdit` is callable by anyone who can send commands: it never asks the
    client to touch another file, to rename or delete one, or to apply a stale fix."""
    memory = await open_memory(client, workspace)
    other = tmp_path / "notes.md"
    edit_other = {"changes": {file_uri(other): [{"range": ZERO, "newText": "x"}]}}
    delete = {"documentChanges": [{"kind": "delete", "uri": file_uri(memory)}]}
    stale = {
        "documentChanges": [
            {
                "textDocument": {"uri": file_uri(memory), "version": 99},
                "edits": [{"range": ZERO, "newText": "x"}],
            }
        ]
    }
    for edit, reason in (
        (
            edit_other,
            "is neither a .metis/MEMORY.md or .metis/USER.md of an open workspace nor another",
        ),
        (delete, "it would delete a file"),
        (stale, "MEMORY.md changed since the fix was offered (version 99, now 1)"),
    ):
        error = await client.command_error("metis.applyEdit", {"label": "x", "edit": edit})
        assert reason in error.message and "Nothing was applied" in error.message
    assert client.applied_edits == []
    assert not other.exists()


ZERO = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
