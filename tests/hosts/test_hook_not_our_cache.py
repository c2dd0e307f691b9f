"""Issue 39, item 7 again, through the hook: the cache lives in `metis-memory` inside the
folder `METIS_MEMORY_CACHE_DIR` names, and a folder of the user's that happens to have
that name (a clone of this project) was taken for it: after one hook it was 0700 with a
`sessions/` of Metis's inside, and nothing was said. Only a folder Metis made (it holds
CACHEDIR.TAG) or an earlier version's cache (nothing but the cache's own names) is used."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from metis_memory.store.cache import CACHE_ENV
from support.hooks import Hook
from support.host_inputs import CLAUDE_PROMPT, filled
from support.memory_files import write_memory

MEMORY = "- CI runs on Fridays only\n"


def _prompt(workspace: Path) -> dict[str, Any]:
    return filled(CLAUDE_PROMPT, cwd=str(workspace), session="s")


def _context(stdout: str) -> str:
    answer = json.loads(stdout) if stdout.strip() else {}
    text = (answer.get("hookSpecificOutput") or {}).get("additionalContext")
    return text if isinstance(text, str) else ""


def _tree(folder: Path) -> list[tuple[str, int]]:
    found = [(".", stat.S_IMODE(os.lstat(folder).st_mode))]
    for path in sorted(folder.rglob("*")):
        found.append((str(path.relative_to(folder)), stat.S_IMODE(os.lstat(path).st_mode)))
    return found


def test_a_users_folder_named_metis_memory_is_left_alone_and_the_memory_still_sent(
    hook: Hook, workspace: Path, tmp_path: Path
) -> None:
    """`/tmp/metis/attack/a13_cache.sh`'s last case: `$B/home/metis-memory/` is the user's
    (0755, README.md). Before: 0700 with `sessions/` in it after one hook, stderr empty."""
    write_memory(workspace, "MEMORY.md", MEMORY)
    home = tmp_path / "home"
    clone = home / "metis-memory"
    clone.mkdir(parents=True)
    (clone / "README.md").write_text("my notes\n")
    clone.chmod(0o755)
    before = _tree(clone)
    env = {CACHE_ENV: str(home)}
    for _ in range(2):  # nothing recorded, so each prompt gets the memory, and says why
        done = hook("--host", "claude", payload=_prompt(workspace), env=env)
        assert done.returncode == 0 and "Fridays" in _context(done.stdout)
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("metis-memory hook: ")
        assert f"{clone} is not Metis's cache" in done.stderr, done.stderr
        assert f"set {CACHE_ENV} to another folder" in done.stderr
        assert "will be sent again next prompt" in done.stderr
    assert _tree(clone) == before


def test_the_default_cache_of_an_earlier_version_is_kept_in_use(
    hook: Hook, workspace: Path, tmp_path: Path
) -> None:
    """No variable: `~/.cache/metis-memory`, made by an earlier version (untagged, 0775,
    holding `sessions/`), is Metis's: it is used, tagged and tightened, with nothing said."""
    write_memory(workspace, "MEMORY.md", MEMORY)
    xdg = tmp_path / "xdg"
    old = xdg / "metis-memory"
    (old / "sessions").mkdir(parents=True)
    for level in (old, old / "sessions"):
        level.chmod(0o775)
    env = {CACHE_ENV: "", "XDG_CACHE_HOME": str(xdg)}
    first = hook("--host", "claude", payload=_prompt(workspace), env=env)
    assert first.stderr == "" and "Fridays" in _context(first.stdout)
    again = hook("--host", "claude", payload=_prompt(workspace), env=env)
    assert again.stderr == "" and again.stdout == "", "recorded, so not sent twice"
    assert (
        (old / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    )
    assert stat.S_IMODE(old.stat().st_mode) == 0o700


@pytest.mark.parametrize(
    "planted", ["a FIFO CACHEDIR.TAG", "a folder CACHEDIR.TAG", "a file proposals"]
)
def test_a_cache_name_of_another_kind_is_not_ours_and_the_memory_still_sent(
    planted: str, hook: Hook, workspace: Path, tmp_path: Path
) -> None:
    """`/tmp/metis/attack2/b03_cachedir_fifo.py`, the user's own `metis-memory` (0755)
    holding one of the cache's names as something else. Before: a FIFO named CACHEDIR.TAG
    held the hook forever (opened for writing without O_NONBLOCK; here, killed at the
    fixture's 60 s); a folder CACHEDIR.TAG holding notes.txt, or a FILE `proposals`,
    made the folder the cache's: tagged, tightened to 0700, nothing said."""
    write_memory(workspace, "MEMORY.md", MEMORY)
    home = tmp_path / "home"
    folder = home / "metis-memory"
    folder.mkdir(parents=True)
    kind, name = planted.split(" ")[1:]
    if kind == "FIFO":
        os.mkfifo(folder / name, 0o600)
    elif kind == "folder":
        (folder / name).mkdir()
        (folder / name / "notes.txt").write_text("mine\n")
    else:
        (folder / name).write_text("my proposal for the grant\n")
    folder.chmod(0o755)
    before = _tree(folder)
    done = hook("--host", "claude", payload=_prompt(workspace), env={CACHE_ENV: str(home)})
    assert done.returncode == 0 and "Fridays" in _context(done.stdout)
    assert done.stderr.count("\n") == 1, done.stderr
    assert f"{folder} is not Metis's cache: it holds {name!r} (not a " in done.stderr
    assert _tree(folder) == before
