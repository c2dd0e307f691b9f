"""The usage lens names the file's size: once an open memory file's size moves (typing, a
reload after another process wrote it), the server asks the client for its lenses again
(`workspace/codeLens/refresh`, where the client supports it). VS Code otherwise kept the user
memory's first lens ("29 B") while the file grew (seen in code-server)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from support.lsp_session import CLIENT_COMMANDS, MetisClient, lenses
from support.memory_files import write_user_memory


async def test_a_change_of_size_asks_for_the_lenses_again(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    path = write_user_memory(user_config_home, "- Answer in British English.\n")
    await client.start_session([workspace], options=CLIENT_COMMANDS)
    client.open(path)
    await client.wait_for_codes(path, [])
    before = client.lens_refreshes
    client.replace_all(path, "- Answer in British English.\n- I review diffs in unified form.\n")
    await client.wait_until(
        lambda: client.lens_refreshes > before, "a workspace/codeLens/refresh request"
    )
    titles = [lens.command.title for lens in await lenses(client, path) if lens.command]
    assert any("63 B" in title for title in titles), titles


async def test_a_client_that_cannot_be_asked_is_not(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    path = write_user_memory(user_config_home, "- Answer in British English.\n")
    capabilities = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            code_lens=types.CodeLensWorkspaceClientCapabilities(refresh_support=False)
        )
    )
    await client.start_session([workspace], capabilities=capabilities, options=CLIENT_COMMANDS)
    client.open(path)
    await client.wait_for_codes(path, [])
    client.replace_all(path, "- Answer in British English.\n- I review diffs in unified form.\n")
    await client.wait_for_codes(path, [])
    titles = [lens.command.title for lens in await lenses(client, path) if lens.command]
    assert any("63 B" in title for title in titles), titles
    assert client.lens_refreshes == 0
