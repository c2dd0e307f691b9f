"""A trap for traffic that would leave the machine: the hosts' proxy variables point at it.

Bun's fetch (opencode, the Cline CLI) and npm honour `HTTP(S)_PROXY`, so whatever they would
send past loopback (an update check, a model catalogue, a download) arrives here, named,
instead of leaving the machine; `NO_PROXY` keeps the fake model direct. A test asserts that
`seen` stays empty, or names what it allows."""

from __future__ import annotations

import contextlib
import socket
import threading


class Outbound:
    """A listener on 127.0.0.1 that notes the first line of each connection made to it
    (`CONNECT github.com:443 HTTP/1.1`) and closes it."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.seen: list[str] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.getsockname()[1]}"

    def __enter__(self) -> Outbound:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.server.shutdown(socket.SHUT_RDWR)  # (wakes accept(), which close() would not)
        self.server.close()
        self.thread.join(timeout=5)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                with contextlib.suppress(OSError):
                    self.seen.append(conn.recv(512).split(b"\r\n", 1)[0].decode("latin-1"))
