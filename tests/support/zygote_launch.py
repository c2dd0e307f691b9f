"""The command pytest-lsp runs for a forked server (see `server_zygote.py`): it hands its stdio,
environment, working directory and arguments to the zygote listening at argv[1], and ends as
the server does. Standard library only, run with `-I -S`: it starts in milliseconds."""

import contextlib
import json
import os
import signal
import socket
import sys


def main() -> int:
    path, argv = sys.argv[1], sys.argv[2:]
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    conn.connect(path)
    umask = os.umask(0)
    os.umask(umask)
    header = json.dumps({"argv": argv, "env": dict(os.environ), "cwd": os.getcwd(), "umask": umask})
    socket.send_fds(conn, [header.encode()], [0, 1, 2])
    # The server's now: the client sees EOF when the server, not this process, closes them.
    for fd in (0, 1, 2):
        os.close(fd)
    conn.recv(64)  # the server's pid
    status = conn.recv(64).decode()
    return int(status) if status.lstrip("-").isdigit() else 1


if __name__ == "__main__":
    code = main()
    if code < 0:  # the server was killed by a signal: so is this process
        with contextlib.suppress(OSError, ValueError):  # SIGKILL's cannot be set, nor need be
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)
