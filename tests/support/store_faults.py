"""Helpers shared by the store tests (imported by name; fixtures live in conftest.py)."""

from __future__ import annotations

import errno
import os
import pickle
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NOBODY = 65534


# ---- running code in a child process, optionally unprivileged ---------------------------


@dataclass(frozen=True)
class ChildOutcome:
    """What a function run in a child process returned or raised."""

    value: Any = None
    error_type: str | None = None
    error_message: str = ""
    error_errno: int | None = None
    error_mro: tuple[str, ...] = field(default_factory=tuple)


def _describe_exception(exc: BaseException) -> ChildOutcome:
    cause = getattr(exc, "cause", None)
    err_no = cause.errno if isinstance(cause, OSError) else getattr(exc, "errno", None)
    return ChildOutcome(
        error_type=type(exc).__name__,
        error_message=str(exc),
        error_errno=err_no,
        error_mro=tuple(c.__name__ for c in type(exc).__mro__),
    )


def run_in_child(fn: Callable[[], Any], *, uid: int | None = None) -> ChildOutcome:
    """Run `fn` in a forked child (optionally after dropping to `uid`) and report its outcome.

    Exceptions cross the process boundary as type name, message and errno: the store's
    exceptions do not round-trip through pickle.
    """
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        status = 0
        try:
            os.close(read_fd)
            try:
                if uid is not None:
                    os.setgroups([])
                    os.setgid(uid)
                    os.setuid(uid)
                outcome = ChildOutcome(value=fn())
            except BaseException as exc:
                outcome = _describe_exception(exc)
            with os.fdopen(write_fd, "wb") as out:
                pickle.dump(outcome, out)
        except BaseException:
            status = 70
        finally:
            os._exit(status)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        payload = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the child process failed to report"
    outcome = pickle.loads(payload)
    assert isinstance(outcome, ChildOutcome)
    return outcome


def chown_tree(root: Path, uid: int = NOBODY) -> None:
    os.chown(root, uid, uid)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.chown(os.path.join(dirpath, name), uid, uid, follow_symlinks=False)


def fill_disk(directory: Path) -> Path:
    """Write a filler file in `directory` until the filesystem refuses with ENOSPC."""
    filler = directory / "filler.bin"
    chunk = b"\0" * 4096
    with open(filler, "wb", buffering=0) as fh:
        while True:
            try:
                fh.write(chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                break
    return filler


# ---- counting opens with an audit hook ----------------------------------------------------


class OpenRecorder:
    """Records `open` audit events on the watched paths. Audit hooks cannot be removed, so
    one hook serves the whole session and records only while something is watched."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watched: frozenset[str] = frozenset()
        self._opens: list[tuple[str, object]] = []

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if event != "open" or not self._watched or not args:
            return
        path = args[0]
        if isinstance(path, (str, bytes, os.PathLike)):
            name = os.fsdecode(path)
            # The store opens names relative to a held directory (`dir_fd`), which the
            # event does not carry: a bare name matches a watched file of that name.
            absolute = os.path.isabs(name)
            key = os.path.abspath(name) if absolute else name
            watched = self._watched if absolute else {os.path.basename(w) for w in self._watched}
            if key in watched:
                with self._lock:
                    self._opens.append((key, args[1] if len(args) > 1 else None))

    def watch(self, *paths: Path) -> None:
        with self._lock:
            self._opens = []
            self._watched = frozenset(os.path.abspath(os.path.realpath(p)) for p in paths)

    def count(self) -> int:
        with self._lock:
            return len(self._opens)

    def stop(self) -> None:
        with self._lock:
            self._watched = frozenset()
