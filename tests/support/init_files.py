"""Running `metis-memory init` as a user does, and seeing every byte it left."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(sys.executable).parent / "metis-memory"


def init(*args: str | bytes, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`metis-memory init ARGS` as a user runs it (bytes arguments go through as bytes)."""
    done = subprocess.run(
        [os.fsencode(SCRIPT), b"init", *(os.fsencode(a) for a in args)],
        cwd=cwd,
        capture_output=True,
        timeout=60,
        check=False,
    )
    return subprocess.CompletedProcess(
        done.args,
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
    )


def snapshot(root: Path) -> dict[str, tuple[str, bytes, int]]:
    """Every file and folder under `root`: its kind, bytes and mtime (to the nanosecond)."""
    out = {}
    for path in sorted(root.rglob("*")):
        st_ = path.lstat()
        kind = "dir" if path.is_dir() else "file"
        data = path.read_bytes() if kind == "file" else b""
        out[path.relative_to(root).as_posix()] = (kind, data, st_.st_mtime_ns)
    return out


def write(workspace: Path, rel: str, text: str) -> None:
    path = workspace / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))  # a rewrite could not keep this mtime
