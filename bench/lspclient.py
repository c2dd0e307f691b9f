"""A raw JSON-RPC-over-stdio LSP client, as an editor is: a separate process, real pipes.

Deliberately not pygls: the benchmark must not share code paths with what it measures.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

Json = dict[str, Any]


class LspProcess:
    def __init__(self, argv: list[str], cwd: Path | None = None) -> None:
        self.argv = argv
        self.cwd = cwd
        self.proc: asyncio.subprocess.Process | None = None
        self.spawned_at = 0.0
        self._next_id = 0
        self.notifications: list[Json] = []
        self.requests: list[Json] = []
        """Requests the server sent (all answered with a null result)."""
        """Every notification the server sent, in order."""
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._waiters: list[tuple[Callable[[Json], bool], asyncio.Future[tuple[float, Json]]]] = []
        self._reader: asyncio.Task[None] | None = None
        self.capabilities: Json = {}

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    async def spawn(self) -> None:
        self.spawned_at = time.perf_counter()
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            cwd=self.cwd,
            limit=64 * 1024 * 1024,
        )
        self._reader = asyncio.create_task(self._read_loop())

    async def _read_loop(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        out = self.proc.stdout
        while True:
            length = -1
            while True:
                line = await out.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            body = await out.readexactly(length)
            now = time.perf_counter()
            self._dispatch(json.loads(body), now)

    def _dispatch(self, msg: Json, now: float) -> None:
        if "id" in msg and "method" in msg:  # a request from the server: accept it
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            self.requests.append(msg)
            return
        if "id" in msg:
            fut = self._pending.pop(msg["id"], None)
            if fut is not None and not fut.done():
                if "error" in msg:
                    fut.set_exception(RuntimeError(json.dumps(msg["error"])))
                else:
                    fut.set_result((now, msg.get("result")))
            return
        self.notifications.append(msg)
        for i, (pred, fut) in enumerate(self._waiters):
            if not fut.done() and pred(msg):
                fut.set_result((now, msg))
                del self._waiters[i]
                break

    def _send(self, msg: Json) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        body = json.dumps(msg).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def wait_for(self, pred: Callable[[Json], bool]) -> asyncio.Future[tuple[float, Json]]:
        """Register interest before sending, so a fast reply is never missed."""
        fut: asyncio.Future[tuple[float, Json]] = asyncio.get_running_loop().create_future()
        self._waiters.append((pred, fut))
        return fut

    async def request(self, method: str, params: Any) -> tuple[float, Any]:
        self._next_id += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = fut
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        result: tuple[float, Any] = await asyncio.wait_for(fut, 30)
        return result

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def initialize(self, folders: list[Path], *, watches_files: bool = False) -> float:
        """initialize + initialized; returns the time the initialize result arrived. With
        `watches_files`, the client offers `workspace/didChangeWatchedFiles` registration
        (and must then send the file events itself, as an editor's watcher does)."""
        workspace: dict[str, Any] = {"workspaceFolders": True, "configuration": True}
        if watches_files:
            workspace["didChangeWatchedFiles"] = {"dynamicRegistration": True}
        params = {
            "processId": os.getpid(),
            "rootUri": folders[0].as_uri() if folders else None,
            "capabilities": {
                "general": {"positionEncodings": ["utf-16"]},
                "textDocument": {"publishDiagnostics": {"versionSupport": True}},
                "workspace": workspace,
            },
            "workspaceFolders": [{"uri": f.as_uri(), "name": f.name} for f in folders],
        }
        at, result = await self.request("initialize", params)
        self.capabilities = result.get("capabilities", {})
        self.notify("initialized", {})
        return at

    async def shutdown(self) -> None:
        if self.proc is None or self.proc.returncode is not None:
            return
        try:
            await self.request("shutdown", None)
            self.notify("exit", None)
            await asyncio.wait_for(self.proc.wait(), 10)
        except (asyncio.TimeoutError, RuntimeError, ConnectionError):
            self.proc.kill()
            await self.proc.wait()
        if self._reader is not None:
            self._reader.cancel()


def diagnostics_for(uri: str, version: int | None = None) -> Callable[[Json], bool]:
    def pred(msg: Json) -> bool:
        if msg.get("method") != "textDocument/publishDiagnostics":
            return False
        params = msg["params"]
        if params["uri"] != uri:
            return False
        return version is None or params.get("version") == version

    return pred


def proc_stats(pid: int) -> tuple[float, int]:
    """(CPU seconds used, RSS bytes) of a live process, from /proc."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    rss = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    return cpu, rss
