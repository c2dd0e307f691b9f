"""Over real stdio, a request whose JSON holds a lone surrogate (`"\\ud800"`, valid JSON but
not text) is answered: the SDK's parser refused the line and the client waited forever."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

from support.lsp_session import forked_server

WAIT_S = 15.0


class RawMcp:
    """The real `metis-memory mcp`, spoken to one JSON line at a time."""

    def __init__(self, workspace: Path) -> None:
        self.proc = subprocess.Popen(
            forked_server("mcp", str(workspace)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self.lines.put(line)

    def send(self, raw: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(raw.encode("ascii") + b"\n")
        self.proc.stdin.flush()

    def response(self, rid: int) -> dict[str, Any]:
        while True:
            try:
                message = json.loads(self.lines.get(timeout=WAIT_S))
            except queue.Empty:
                raise AssertionError(f"no response to request {rid} within {WAIT_S:g} s") from None
            if message.get("id") == rid:
                return dict(message)

    def close(self) -> str:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()  # end of input: the server ends
        self.proc.wait(timeout=WAIT_S)
        return self.proc.stderr.read().decode("utf-8", "replace")


def test_a_lone_surrogate_in_any_request_is_answered(
    tmp_path: Path, user_config_home: Path
) -> None:
    server = RawMcp(tmp_path)
    try:
        server.send(
            '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
            '"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
        )
        assert "result" in server.response(1)
        server.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        calls = {
            2: '{"name":"memory_add","arguments":{"file":"MEMORY.md","entry":"a\\ud800b"}}',
            3: '{"name":"memory_replace","arguments":{"file":"MEMORY.md","old":"\\udfff",'
            '"new":"x"}}',
            4: '{"name":"memory_assemble_prompt","arguments":{"base":"a\\ud800b"}}',
            7: '{"name":"user_memory_add","arguments":{"entry":"a\\ud800b"}}',
        }
        for rid, params in calls.items():
            server.send(f'{{"jsonrpc":"2.0","id":{rid},"method":"tools/call","params":{params}}}')
            result = server.response(rid)["result"]
            assert result["isError"] is True
            assert result["structuredContent"]["code"] == "invalid_input"
        server.send('{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"\\ud800"}}')
        assert server.response(5)["error"]["code"] == -32602
        # The server goes on serving, and nothing was written.
        server.send('{"jsonrpc":"2.0","id":6,"method":"tools/list"}')
        assert len(server.response(6)["result"]["tools"]) == 8
        assert not (tmp_path / ".metis").exists()
        assert not (user_config_home / "metis-memory").exists()
    finally:
        stderr = server.close()
    assert "Traceback" not in stderr, stderr
