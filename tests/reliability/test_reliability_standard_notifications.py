"""The notifications every client sends are handled, not answered with a warning each
(`didSave` after every save, `didChangeConfiguration` after every settings change)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.lsp_values import file_uri


def test_did_save_and_did_change_configuration_raise_no_warning(
    workspace: Path, start_server: Any
) -> None:
    memory = workspace / ".metis" / "MEMORY.md"
    memory.parent.mkdir()
    memory.write_text("- uses make\n")
    server = start_server(workspace)
    uri = file_uri(memory)
    item = {"uri": uri, "languageId": "markdown", "version": 1, "text": "- uses make\n"}
    server.notify("textDocument/didOpen", {"textDocument": item})
    for _ in range(3):
        server.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        server.notify("workspace/didChangeConfiguration", {"settings": {"metis": {}}})
    usage = server.request(
        "workspace/executeCommand", {"command": "metis.usage", "arguments": [{}]}
    )
    assert usage["MEMORY.md"]["size_bytes"] == len(b"- uses make\n")  # still serving
    assert "Ignoring notification" not in server.stderr_text(), server.stderr_text()
    assert "unknown method" not in server.stderr_text()
