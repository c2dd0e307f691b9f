"""Helpers shared by the reliability tests (imported by name; fixtures live in conftest.py).

`METIS_RELIABILITY_SCALE` (default 1) multiplies every load figure: the defaults are the
issue's (16 writers x 200 operations, 10,000 didChange, 500 kills); set it below 1 for a
quick local pass. Each test prints the figures it ran with and what it measured
(`pytest -s tests/reliability`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from rpc_client import LspServer

SCALE = float(os.environ.get("METIS_RELIABILITY_SCALE", "1"))


def scaled(n: int, minimum: int = 1) -> int:
    """`n` times the scale, never below `minimum`."""
    return max(minimum, round(n * SCALE))


def report(name: str, **figures: object) -> None:
    """Print one test's figures on a line of their own (shown with `pytest -s`), and
    append them as JSON to `$METIS_RELIABILITY_FIGURES` when that is set."""
    shown = ", ".join(f"{k}={v}" for k, v in figures.items())
    print(f"\n[reliability] {name}: {shown}")
    out = os.environ.get("METIS_RELIABILITY_FIGURES")
    if out:
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"test": name, **figures}, default=str) + "\n")


def tree(root: Path) -> dict[str, tuple[int, bytes | str]]:
    """Every path under `root` (not following symlinks) with its mode and its bytes
    (or its link target): what "nothing on disk changed" is checked against.

    The store's lock file, `.metis/.lock`, is left out: any write that gets as far as
    the lock creates it (a write refused at the hard cap decides under the lock). It
    must stay empty: it is a lock, never data.
    """
    found: dict[str, tuple[int, bytes | str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            if name == ".lock" and path.parent.name == ".metis":
                assert st.st_size == 0, f"{path} holds data"
                continue
            rel = str(path.relative_to(root))
            if path.is_symlink():
                found[rel] = (st.st_mode, os.readlink(path))
            elif path.is_file():
                found[rel] = (st.st_mode, path.read_bytes())
            else:
                found[rel] = (st.st_mode, b"")
    return found


def temp_files(directory: Path) -> list[str]:
    """Leftover temp files of atomic writes in `directory`."""
    if not directory.is_dir():
        return []
    return sorted(n for n in os.listdir(directory) if n.endswith(".tmp"))


def server_tracebacks(server: LspServer) -> list[str]:
    """Tracebacks the server logged: each is a fault the test did not ask for."""
    text = server.stderr_text()
    return [chunk[:2000] for chunk in text.split("Traceback (most recent call last)")[1:]]
