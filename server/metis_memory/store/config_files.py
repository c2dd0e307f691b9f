"""Another tool's configuration file beneath a workspace (for `init`): read bounded,
written atomically, and reached without following a symlink out of the workspace.

The only public way above the store to write outside `.metis/`: `atomic` and `confined`
stay private to this package (the import contracts in pyproject.toml say so).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path, PurePosixPath

from .atomic import atomic_write
from .confined import Dir, Located, resolve_beneath
from .errors import ConfigRefused, StorageError

MAX_CONFIG_BYTES = 1 * 2**20
"""Hosts' configuration files are small; a bigger one is not something to rewrite."""


class ConfigFiles:
    """Files beneath `workspace`, its root held open while in use."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self._root: Dir | None = None

    def __enter__(self) -> ConfigFiles:
        self._root = Dir.open_root(self.workspace)
        return self

    def __exit__(self, *_: object) -> None:
        if self._root is not None:
            self._root.close()

    @property
    def root(self) -> Dir:
        assert self._root is not None, "use ConfigFiles in a with statement"
        return self._root

    def read(self, path: str) -> str | None:
        """`path`'s text (UTF-8, at most MAX_CONFIG_BYTES), or None when it does not exist."""
        try:
            with _Place(self.root, self.workspace, path, create=False) as found:
                return None if found is None else _read_located(found, self.workspace / path)
        except FileNotFoundError:
            return None

    def replace(self, path: str, before: str | None, data: bytes, mode: int) -> None:
        """Write `data` to `path` atomically (its folders made first), refused when the
        file no longer holds `before`."""
        shown = self.workspace / path
        with _Place(self.root, self.workspace, path, create=True) as found:
            if _read_located(found, shown) != before:
                raise ConfigRefused(
                    f"{path} changed while init ran; run init again "
                    "(files before it in this list were written)"
                )
            atomic_write(found.directory, found.name, data, found.st, new_mode=mode)


class _Place:
    """`path`'s directory held open (created with `create`), and its name there."""

    def __init__(self, root: Dir, workspace: Path, path: str, *, create: bool) -> None:
        self.root, self.workspace, self.rel, self.create = (
            root,
            workspace,
            PurePosixPath(path),
            create,
        )
        self.found: Located | None = None

    def __enter__(self) -> Located:
        shown = self.workspace / self.rel
        try:
            if self.create:
                self._make_dirs()
            self.found = resolve_beneath(self.root, self.rel.parts, shown=shown)
        except NotADirectoryError as exc:
            raise ConfigRefused(
                f"{self.rel}: {exc.filename or 'a folder on the way'} is a file, not a folder; "
                "nothing was written for it"
            ) from exc
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise StorageError("open", shown, exc) from exc
        return self.found

    def __exit__(self, *_: object) -> None:
        if self.found is not None:
            self.found.directory.close()

    def _make_dirs(self) -> None:
        parts = self.rel.parent.parts
        for depth in range(1, len(parts) + 1):
            prefix = PurePosixPath(*parts[:depth])
            found = resolve_beneath(self.root, prefix.parts, shown=self.workspace / prefix)
            with found.directory:
                if found.st is None:
                    with contextlib.suppress(FileExistsError):  # made by someone else meanwhile
                        found.directory.mkdir(found.name, 0o777)  # the umask decides
                elif not stat.S_ISDIR(found.st.st_mode):
                    raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(prefix))


def _read_located(found: Located, shown: Path) -> str | None:
    if found.st is None:
        return None
    if not stat.S_ISREG(found.st.st_mode):
        raise ConfigRefused(f"{shown} is not a regular file; nothing was written")
    if found.st.st_size > MAX_CONFIG_BYTES:
        raise ConfigRefused(
            f"{shown} is {found.st.st_size:,} bytes, more than a host's configuration file "
            f"should be ({MAX_CONFIG_BYTES:,}); nothing was written"
        )
    try:
        fd = found.directory.open(found.name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise StorageError("read", shown, exc) from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigRefused(
            f"{shown} is not UTF-8 (first bad byte at offset {exc.start:,}); nothing was written"
        ) from exc
