"""Fixtures for the end-to-end tests: a pytest-lsp client connected to the real
server over stdio. The harness itself (recording client, edit application, file
helpers) is in `lsp_harness.py`."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_lsp
from lsp_harness import SERVER_COMMAND, SERVER_ENV, MetisClient, make_client
from pytest_lsp import ClientServerConfig


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=SERVER_COMMAND, client_factory=make_client, server_env=SERVER_ENV
    )
)
async def client(lsp_client: MetisClient) -> AsyncIterator[None]:
    yield
    if lsp_client.stopped:
        return  # the test ended the server itself
    if lsp_client.capabilities is None and lsp_client.error is None:
        # The test failed before initializing: `exit` still ends the server, so
        # pytest-lsp's stop() (which waits for the process) does not hang.
        lsp_client.exit(None)
        return
    await lsp_client.shutdown_session()
