"""Fixtures for the reliability tests: real workspaces on the real filesystem, the real
language server over raw stdio (`support.rpc_client.LspServer`), real CLI and writer
processes. Helpers shared by the modules live in `support/reliability.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from support.rpc_client import LspServer

StartServer = Callable[..., LspServer]


@pytest.fixture
def start_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StartServer]:
    """Start language servers (each killed at teardown if the test did not end it). Their
    stderr is kept outside the test's tmp_path, which tests compare before and after."""
    started: list[LspServer] = []
    logs = tmp_path_factory.mktemp("lsp-logs")

    def start(
        folder: Path, *, initialize: bool = True, env: dict[str, str] | None = None
    ) -> LspServer:
        server = LspServer(folder, logs / f"server-{len(started)}.stderr", env)
        started.append(server)
        if initialize:
            server.initialize([folder])
        return server

    yield start
    for server in started:
        server.kill()
