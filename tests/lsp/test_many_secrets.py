"""A MEMORY.md of one long line holding thousands of suspected secrets (issue 39, item 6):
the editor gets the first 1,000 and one diagnostic saying the scan stops there, at the
right places on the line. Before, the server sent all of them: for a 1 MiB line, 42,000
diagnostics, 8 s after the file opened, each position counted from the line's start."""

from __future__ import annotations

from pathlib import Path

import pytest

from metis_memory.analysis.checks import SHOWN_SECRETS
from metis_memory.analysis.positions import units
from metis_memory.analysis.secrets import find_secrets
from support.lsp_session import MetisClient
from support.lsp_values import file_uri, span
from support.memory_files import write_memory

PAIR = "api_key=Zx9Qw3Er7Ty1Ui5O "
LINE = "- 😀 keys: " + PAIR * 6_000  # one line, 150 KB, 6,000 suspected secrets


@pytest.mark.parametrize("client_name", ["visual-studio-code", "neovim"])
async def test_the_first_thousand_secrets_are_shown_and_the_rest_announced(
    client: MetisClient, workspace: Path, client_name: str
) -> None:
    memory = write_memory(workspace, "MEMORY.md", LINE)
    await client.start_session([workspace], client=client_name)
    uri = file_uri(memory)
    await client.wait_until(
        lambda: any(d.code == "secret" for d in client.diagnostics.get(uri, [])),
        "secret diagnostics",
    )
    secrets = [d for d in client.diagnostics[uri] if d.code == "secret"]
    assert len(secrets) == SHOWN_SECRETS + 1, len(secrets)
    *shown, more = secrets
    assert more.message.startswith("More possible secrets in MEMORY.md from here: the first 1,000")
    assert PAIR.strip()[8:] not in more.message
    encoding = "utf-8" if client_name == "neovim" else "utf-16"
    matches = find_secrets(LINE)
    for diagnostic, match in zip([*shown, more], matches, strict=False):
        assert span(diagnostic.range) == (
            (0, units(LINE[: match.start], encoding)),
            (0, units(LINE[: match.end], encoding)),
        )
