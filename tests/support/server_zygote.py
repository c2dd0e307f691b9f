"""A pre-imported language server to fork from: the LSP tests start about 200 servers, the MCP
tests about 20.

A server's first 0.7 s of CPU is importing pygls and lsprotocol (whose ~600 attrs classes each
compile their methods), the same work every time: on two cores, a minute of the suite. This
process imports the server once and forks a child per session. The child is the real server:
the launcher (`zygote_launch.py`, the command pytest-lsp runs) hands it its stdin, stdout and
stderr, environment, working directory and arguments, and the child runs `metis-memory`'s
entry point with them as `python -m metis_memory` would. Only the interpreter's start and the
imports are shared. `tests/lsp/test_lifecycle.py`, the editor tests and the reliability tests
start `python -m metis_memory lsp` itself.

The launcher behaves as the server's process would for its client: its pipes are the server's,
it exits when the server does, with its status, and if it is killed (pytest-lsp's terminate
on a fatal error) the server is killed too. The zygote ends when the test process that started
it does (its stdin, a pipe from that process, closes), and takes its servers with it.

What the child does not get from its launcher: its hash seed (the zygote's, shared by the
servers a test process forks), rlimits and signal mask (the zygote's, as the test process set
them), and `sys.argv[0]` ("metis-memory").

Protocol, a SOCK_SEQPACKET connection per server: the launcher sends one JSON message (argv,
env, cwd, umask) with its fds 0-2 attached; the zygote answers with the server's pid, then, once the
server has exited, its exit status as `os.waitstatus_to_exitcode` gives it.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import selectors
import signal
import socket
import sys
import threading
from typing import Any, NoReturn

MAX_HEADER = 1 << 20
PRELOAD = (
    "metis_memory.entry",
    "metis_memory.cli",
    "metis_memory.lsp.server",
    "metis_memory.mcp.server",
)
"""What an `lsp` or `mcp` child runs: imported once, here (the MCP SDK costs a spawned MCP
server about 1.1 of its 1.3 CPU-s)."""


class _Session:
    """One launcher's connection and the server forked for it."""

    def __init__(self, conn: socket.socket, pid: int, zygote: Zygote) -> None:
        self.conn, self.pid, self.zygote = conn, pid, zygote
        self.pidfd = os.pidfd_open(pid)
        zygote.sel.register(self.pidfd, selectors.EVENT_READ, self.exited)
        zygote.sel.register(conn, selectors.EVENT_READ, self.launcher_gone)

    def exited(self) -> None:
        """The server ended: its status to its launcher, which exits with it."""
        _, status = os.waitpid(self.pid, 0)
        self.zygote.sel.unregister(self.pidfd)
        os.close(self.pidfd)
        self.zygote.sessions.discard(self)
        if self.conn.fileno() >= 0:
            self.zygote.sel.unregister(self.conn)
            with contextlib.suppress(OSError):  # the launcher may be gone already
                self.conn.send(str(os.waitstatus_to_exitcode(status)).encode())
            self.conn.close()

    def launcher_gone(self) -> None:
        """The launcher was killed: its server goes too (reaped when its pidfd reports it)."""
        if self.conn.fileno() < 0:
            return  # a stale event: the server's exit, in the same batch, closed it already
        self.zygote.sel.unregister(self.conn)
        self.conn.close()
        self.kill()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)


class Zygote:
    def __init__(self, path: str) -> None:
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.listener.bind(path)
        self.listener.listen(64)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.listener, selectors.EVENT_READ, self.accept)
        self.sel.register(sys.stdin, selectors.EVENT_READ, self.parent_gone)
        self.sessions: set[_Session] = set()

    def run(self) -> NoReturn:
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        while True:
            for key, _ in self.sel.select():
                key.data()

    def parent_gone(self) -> NoReturn:
        for session in self.sessions:
            session.kill()
        raise SystemExit(0)

    def accept(self) -> None:
        """One launcher's request; whatever goes wrong with it, the other servers live on."""
        conn, _addr = self.listener.accept()
        fds: list[int] = []
        try:
            message, fds, _flags, _ = socket.recv_fds(conn, MAX_HEADER, 3)
            if len(fds) != 3:
                raise ValueError(f"expected the launcher's fds 0-2, got {len(fds)} fds")
            header = json.loads(message)
            pid = os.fork()
        except Exception as exc:  # reported; that launcher exits 1
            sys.stderr.write(f"server_zygote: a launcher's request failed: {exc!r}\n")
            for fd in fds:
                os.close(fd)
            conn.close()
            return
        if pid == 0:
            self._become_server(conn, header, fds)
        for fd in fds:
            os.close(fd)
        with contextlib.suppress(OSError):  # a launcher gone already: its session kills it
            conn.send(str(pid).encode())
        self.sessions.add(_Session(conn, pid, self))

    def _become_server(
        self, conn: socket.socket, header: dict[str, Any], fds: list[int]
    ) -> NoReturn:
        """In the forked child: the launcher's server, never back in the loop."""
        self.sel.close()
        self.listener.close()
        conn.close()
        for session in self.sessions:
            session.conn.close()
            os.close(session.pidfd)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.umask(header["umask"])
        os.environ.clear()
        os.environ.update(header["env"])
        os.chdir(header["cwd"])
        sys.path[0] = os.getcwd()  # as `python -m` has it
        argv: list[str] = header["argv"]
        sys.argv = ["metis-memory", *argv]
        from metis_memory.entry import main

        # Out through Python's own exit (atexit handlers, threads joined, stdio flushed), or,
        # on an exception, its traceback on the launcher's stderr and status 1.
        sys.exit(main(argv))


def main() -> NoReturn:
    # As the servers' own entry point does (metis_memory/entry.py), and as Python's gc docs
    # advise before forking: no collection while importing, then the imports frozen, so that
    # no child's collector walks (and copies, page by page) what it shares with this process.
    gc.disable()
    for module in PRELOAD:
        importlib.import_module(module)
    # Each server builds a converter, which resolves the forward references of every lsprotocol
    # class (about 50 ms); attrs keeps that on the class, so one built here serves them all.
    from pygls.protocol import default_converter

    default_converter()  # type: ignore[no-untyped-call]  # pygls leaves it unannotated
    gc.freeze()
    gc.enable()
    if threading.active_count() != 1:
        raise SystemExit("server_zygote: importing the server started a thread; cannot fork")
    Zygote(sys.argv[1]).run()


if __name__ == "__main__":
    main()
