"""`.metis/budgets.toml` nobody has open (issue 24): a malformed file is reported from disk
after initialize, without didOpen, and the diagnostic follows the disk (the server watches
the file itself, for clients that can watch files and those that cannot), and comes back
when a buffer of it closes. Over real stdio."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from support.lsp_session import MetisClient
from support.lsp_values import file_uri, span

GOOD = (
    '[[budget]]\nname = "team notes"\nfiles = ["notes/*.md"]\nunit = "lines"\nlimit = 2\n'
    'past = "truncated"\n'
)
BAD_UNIT = GOOD.replace('"lines"', '"words"')


def from_disk(client: MetisClient, config: Path, codes: list[str]) -> bool:
    """`codes` are on the file, published for no buffer version (the disk's)."""
    uri = file_uri(config)
    return client.codes(config) == codes and client.published_versions.get(uri, 0) is None


@pytest.mark.parametrize("editor", ["visual-studio-code", "neovim"])
async def test_a_malformed_budgets_toml_is_reported_closed_and_cleared_when_fixed(
    client: MetisClient, workspace: Path, editor: str
) -> None:
    """VS Code can watch files for the server, Neovim on Linux cannot: both see the file's
    problem without opening it, and see it go once the file is fixed on disk."""
    config = workspace / ".metis" / "budgets.toml"
    config.parent.mkdir()
    config.write_text(BAD_UNIT)
    await client.start_session([workspace], client=editor)
    await client.wait_until(
        lambda: from_disk(client, config, ["budgets-config"]),
        "the malformed budgets.toml's diagnostic, with the file closed",
    )
    problem = client.diagnostic(config, "budgets-config")
    assert span(problem.range) == ((0, 0), (0, 10))  # the [[budget]] header line
    assert problem.message.startswith("budget 'team notes': 'unit' must be one of bytes, chars")
    assert problem.message.endswith("(the built-in budgets still apply)")
    assert problem.severity == types.DiagnosticSeverity.Error

    config.write_text(GOOD)  # fixed outside the editor: no didOpen, no didChangeWatchedFiles
    await client.wait_until(
        lambda: from_disk(client, config, []), "the diagnostic to go once budgets.toml is fixed"
    )


async def test_a_budgets_toml_that_appears_or_goes_is_followed(
    client: MetisClient, workspace: Path
) -> None:
    """Written after initialize (`.metis/` too), then deleted; not valid TOML is reported
    on the line TOML names."""
    config = workspace / ".metis" / "budgets.toml"
    await client.start_session([workspace])
    config.parent.mkdir()
    config.write_text('[stale]\nseverity = "warning"\n[[budget]\n')
    await client.wait_until(
        lambda: from_disk(client, config, ["budgets-config"]),
        "a diagnostic on the budgets.toml written after initialize",
    )
    problem = client.diagnostic(config, "budgets-config")
    assert problem.message.startswith("not valid TOML: ")
    assert span(problem.range)[0] == (2, 0)
    config.unlink()
    await client.wait_until(
        lambda: from_disk(client, config, []), "the diagnostic to go with the deleted file"
    )


async def test_closing_a_malformed_buffer_brings_back_the_disks_problem(
    client: MetisClient, workspace: Path
) -> None:
    """A buffer's problems stand while it is open; on close, the disk's come back (its
    fix was not saved)."""
    config = workspace / ".metis" / "budgets.toml"
    config.parent.mkdir()
    config.write_text(BAD_UNIT)
    await client.start_session([workspace])
    await client.wait_until(
        lambda: from_disk(client, config, ["budgets-config"]), "the closed file's diagnostic"
    )
    client.open(config)
    client.replace_all(config, GOOD)
    await client.wait_until(
        lambda: client.published_versions.get(file_uri(config)) == 2 and not client.codes(config),
        "no diagnostic for the fixed, unsaved buffer (version 2)",
    )
    client.close(config)
    await client.wait_until(
        lambda: from_disk(client, config, ["budgets-config"]),
        "the disk's diagnostic after the unsaved buffer closed",
    )
