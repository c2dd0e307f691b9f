"""`metis-memory merge-driver %O %A %B`: git's merge driver for the memory files.

Git runs it for the paths `.gitattributes` gives `merge=metis-memory` (written by
`metis-memory init`, with the repository's `merge.metis-memory.driver`), passing three
temporary files: the common ancestor, ours (where the result goes) and theirs. It merges
them entry by entry (`analysis.merge`), writes the result over ours and exits 0, or 1 with
git's conflict markers where both sides changed the same entries differently. Git itself
then writes the worktree file. A result over the hard cap is written anyway: refusing would
lose someone's entries; the editor's diagnostics and `metis-memory check` then flag it.

https://git-scm.com/docs/gitattributes#_defining_a_custom_merge_driver
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path, PurePosixPath
from typing import TextIO

from ..analysis.merge import merge
from ..store.errors import fmt_bytes
from ..store.files import CAPS, MemoryFile
from .config_edits import Edit

DRIVER = "metis-memory"
"""The name in `.gitattributes` (`merge=metis-memory`) and in `merge.<name>.driver`."""
MAX_MERGE_BYTES = 16 * 2**20
"""Memory files are kilobytes; past this the driver leaves the merge to the user."""
ATTRIBUTE_LINES = (
    "# Metis memory: merge entry by entry (metis-memory merge-driver, set up by metis-memory init)",
    f".metis/MEMORY.md merge={DRIVER}",
    f".metis/USER.md merge={DRIVER}",
)
EXIT_MERGED, EXIT_CONFLICT = 0, 1


def driver_command(command: str) -> str:
    """The `merge.metis-memory.driver` value: git expands %O %A %B %L %P."""
    return f"{command} merge-driver %O %A %B --marker-size %L --path %P"


def run(
    base: Path, ours: Path, theirs: Path, marker_size: int, path: str | None, err: TextIO
) -> int:
    shown = path or ours.name
    texts: list[str] = []
    for label, file in (("the common ancestor", base), ("ours", ours), ("theirs", theirs)):
        try:
            with open(file, "rb") as handle:
                data = handle.read(MAX_MERGE_BYTES + 1)
        except OSError as exc:
            err.write(
                f"metis-memory merge-driver: cannot read {label} of {shown} ({file}): "
                f"{exc.strerror}. Ours is left as it was; merge it by hand.\n"
            )
            return EXIT_CONFLICT
        if len(data) > MAX_MERGE_BYTES:
            err.write(
                f"metis-memory merge-driver: {label} of {shown} is over "
                f"{fmt_bytes(MAX_MERGE_BYTES)}, too large to merge entry by entry. Ours is "
                "left as it was; merge it by hand.\n"
            )
            return EXIT_CONFLICT
        try:
            texts.append(data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            err.write(
                f"metis-memory merge-driver: {label} of {shown} is not UTF-8 (byte "
                f"{exc.start}). Ours is left as it was; merge it by hand.\n"
            )
            return EXIT_CONFLICT
    result = merge(texts[0], texts[1], texts[2], marker_size)
    _replace(ours, result.text.encode("utf-8"))
    if result.conflicts:
        err.write(
            f"metis-memory merge-driver: {shown}: {result.conflicts} place(s) where both "
            "sides changed the same entries differently, marked with <<<<<<< ours / "
            ">>>>>>> theirs; keep what is true, then `git add` it.\n"
        )
        return EXIT_CONFLICT
    _report_cap(shown, len(result.text.encode("utf-8")), err)
    return EXIT_MERGED


def _report_cap(shown: str, size: int, err: TextIO) -> None:
    name = PurePosixPath(shown.replace("\\", "/")).name
    file = next((f for f in MemoryFile if f.value == name), None)
    if file is None or size <= CAPS[file].hard:
        return
    err.write(
        f"metis-memory merge-driver: the merged {shown} is {fmt_bytes(size)}, over its "
        f"{fmt_bytes(CAPS[file].hard)} hard cap. It is written anyway so that no one's "
        "entries are lost; consolidate it (the editor and `metis-memory check` flag it).\n"
    )


def _replace(target: Path, data: bytes) -> None:
    """Write `target` (git's temporary file for ours) whole or not at all."""
    fd, tmp = tempfile.mkstemp(prefix=".metis-merge-", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ---- set-up (`metis-memory init`) ---------------------------------------------------------
def attributes_edit() -> Edit:
    """`.gitattributes` gains the two memory files' `merge=metis-memory` lines (whatever is
    there is kept; later lines win in git, so ours are appended)."""

    def apply(current: str | None) -> str:
        text = current or ""
        present = {line.strip() for line in text.splitlines()}
        missing = [line for line in ATTRIBUTE_LINES[1:] if line not in present]
        if not missing:
            return text
        if ATTRIBUTE_LINES[0] not in present:
            missing.insert(0, ATTRIBUTE_LINES[0])
        separator = "" if not text or text.endswith("\n") else "\n"
        return text + separator + "\n".join(missing) + "\n"

    return Edit("git", ".gitattributes", "merge the memory files entry by entry", apply, json=False)


def git_settings(command: str) -> tuple[tuple[str, str], ...]:
    """What `init` sets in the repository's own git config (not cloned: each clone runs init)."""
    return (
        (f"merge.{DRIVER}.name", "Metis memory: merge entry by entry"),
        (f"merge.{DRIVER}.driver", driver_command(command)),
    )


def apply_git_settings(workspace: Path, settings: tuple[tuple[str, str], ...]) -> str | None:
    """Set `settings` with `git config --local`; None when done, else why not (not a
    repository, no git), for the caller to report."""
    import shutil
    import subprocess

    git = shutil.which("git")
    if git is None:
        return "git is not on PATH, so the merge driver was not registered"
    inside = subprocess.run(
        [git, "-C", str(workspace), "rev-parse", "--git-dir"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if inside.returncode != 0:
        return f"{workspace} is not in a git repository, so the merge driver was not registered"
    for key, value in settings:
        done = subprocess.run(
            [git, "-C", str(workspace), "config", "--local", key, value],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if done.returncode != 0:
            return f"`git config {key}` failed: {done.stderr.strip()}"
    return None
