"""pytest-lsp's server command, and the MCP tests' server command, with the server forked from
one pre-imported process per test process (`server_zygote.py` says why and what is shared).
METIS_TEST_SPAWN=1 starts each server with `python -m metis_memory` instead, as the editors
and agent hosts do."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from pytest_lsp import ClientServerConfig

HERE = Path(__file__).resolve().parent
ZYGOTE_SCRIPT = HERE / "server_zygote.py"
LAUNCHER_SCRIPT = HERE / "zygote_launch.py"
MODULE_PREFIX = [sys.executable, "-m", "metis_memory"]


class _Zygote:
    """This process's zygote, started on first use, ended with this process."""

    def __init__(self) -> None:
        self.socket: str | None = None
        self.env: dict[str, str] | None = None
        self.pid: int | None = None
        self.proc: subprocess.Popen[str] | None = None

    def start(self, env: dict[str, str] | None) -> str:
        if self.proc is not None and self.proc.poll() is not None:
            sys.stderr.write(f"server_zygote exited ({self.proc.returncode}); starting another\n")
            self.socket = None
        if self.socket is not None:
            if env != self.env:
                raise RuntimeError("forked servers share one environment: the zygote's")
            return self.socket
        folder = tempfile.mkdtemp(prefix="metis-zygote-")
        socket = os.path.join(folder, "socket")
        # stdin a pipe from this process: when it closes (this process ended, however), the
        # zygote kills its servers and exits.
        proc = subprocess.Popen(
            [sys.executable, str(ZYGOTE_SCRIPT), socket],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        assert proc.stdout is not None and proc.stdin is not None
        ready = proc.stdout.readline()
        if ready != "ready\n":
            proc.kill()
            raise RuntimeError(
                f"the server zygote did not start (exit {proc.wait()}, said {ready!r}); "
                "see its traceback above, or run with METIS_TEST_SPAWN=1"
            )

        def stop() -> None:
            proc.stdin.close()  # type: ignore[union-attr]
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
            shutil.rmtree(folder, ignore_errors=True)

        atexit.register(stop)
        self.socket, self.env, self.pid, self.proc = socket, env, proc.pid, proc
        return socket


ZYGOTE = _Zygote()


def forked_command(args: list[str], zygote_env: dict[str, str] | None) -> list[str]:
    """The command that runs `python -m metis_memory ARGS` as a server forked from this
    process's zygote (started with `zygote_env`), or, with METIS_TEST_SPAWN=1, that command
    itself. The launcher passes on its own environment and working directory, so a caller
    sets those as it would for the spawned command."""
    if os.environ.get("METIS_TEST_SPAWN") == "1":
        return [*MODULE_PREFIX, *args]
    socket = ZYGOTE.start(zygote_env)
    return [sys.executable, "-I", "-S", str(LAUNCHER_SCRIPT), socket, *args]


PER_TEST_VARIABLES = (
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "QWEN_HOME",
    "COPILOT_HOME",
)
"""What a server takes from the test's environment as it is when the server starts, not as
it was when `server_env` was made: the user config folder (the autouse `user_config_home`
fixture's), and where the agent hosts keep memory (a test lays one out; unset, none)."""


class ForkedServerConfig(ClientServerConfig):
    """A `ClientServerConfig` whose `python -m metis_memory ARGS` runs as a forked server,
    in `server_env` with `PER_TEST_VARIABLES` as the test has them (the zygote keeps its own
    environment; a forked server takes its launcher's)."""

    async def start(self, devtools: str | None = None) -> Any:
        client = self.client_factory()
        await client.start_io(*self.get_server_command(devtools), env=self.session_env())
        return client

    def session_env(self) -> dict[str, str]:
        env = dict(self.server_env if self.server_env is not None else os.environ)
        for name in PER_TEST_VARIABLES:
            value = os.environ.get(name)
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        return env

    def get_server_command(self, devtools: str | None = None) -> list[str]:
        command = list(self.server_command)
        if os.environ.get("METIS_TEST_SPAWN") == "1" or devtools is not None:
            return list(super().get_server_command(devtools))
        if command[: len(MODULE_PREFIX)] != MODULE_PREFIX:
            raise ValueError(f"only `python -m metis_memory ...` can be forked, not {command}")
        return forked_command(command[len(MODULE_PREFIX) :], self.server_env)
