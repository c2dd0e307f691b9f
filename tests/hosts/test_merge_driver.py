"""The merge driver under real `git merge` runs in temporary repositories, set up the way a
user does it (`metis-memory init`), with each side's edits made by the store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from metis_memory import MemoryFile, MemoryStore
from metis_memory.store.files import CAPS

COMMAND = f"{sys.executable} -m metis_memory"
BASE = "# Memory\n\n- The API is in `api/`.\n- Tests run with `make test`.\n"


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, timeout=60
    )
    if check:
        assert done.returncode == 0, f"git {' '.join(args)}: {done.stdout}{done.stderr}"
    return done


def metis(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "metis_memory", *args, str(repo)],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with MEMORY.md committed on main, the driver set up by init."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "test@example.com")
    git(root, "config", "user.name", "Test")
    (root / ".metis").mkdir()
    (root / ".metis" / "MEMORY.md").write_text(BASE, encoding="utf-8")
    done = metis(root, "init", "--host", "claude", "--command", COMMAND)
    assert done.returncode == 0, done.stderr
    assert "git config merge.metis-memory.driver: set" in done.stdout
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def branches(repo: Path, ours: str, theirs: str) -> subprocess.CompletedProcess[str]:
    """Commit `theirs` on a branch and `ours` on main, then merge the branch into main."""
    memory = repo / ".metis" / "MEMORY.md"
    git(repo, "checkout", "-q", "-b", "other")
    memory.write_text(theirs, encoding="utf-8")
    git(repo, "commit", "-q", "-am", "theirs")
    git(repo, "checkout", "-q", "main")
    memory.write_text(ours, encoding="utf-8")
    git(repo, "commit", "-q", "-am", "ours")
    return git(repo, "merge", "--no-edit", "other", check=False)


def test_init_registers_the_driver_and_keeps_existing_attributes(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q")
    (root / ".gitattributes").write_text("*.png binary", encoding="utf-8")  # no final newline
    assert metis(root, "init", "--host", "claude", "--dry-run").returncode == 0
    assert (root / ".gitattributes").read_text() == "*.png binary"  # a dry run writes nothing
    assert git(root, "config", "--get", "merge.metis-memory.driver", check=False).returncode == 1
    assert metis(root, "init", "--host", "claude").returncode == 0
    assert (root / ".gitattributes").read_text().splitlines() == [
        "*.png binary",
        "# Metis memory: merge entry by entry "
        "(metis-memory merge-driver, set up by metis-memory init)",
        ".metis/MEMORY.md merge=metis-memory",
        ".metis/USER.md merge=metis-memory",
    ]
    driver = git(root, "config", "--get", "merge.metis-memory.driver").stdout.strip()
    assert driver == "metis-memory merge-driver %O %A %B --marker-size %L --path %P"
    before = (root / ".gitattributes").read_bytes()
    assert metis(root, "init", "--host", "claude").returncode == 0
    assert (root / ".gitattributes").read_bytes() == before  # idempotent
    attrs = git(root, "check-attr", "merge", ".metis/MEMORY.md").stdout
    assert attrs.strip() == ".metis/MEMORY.md: merge: metis-memory"


def test_both_sides_adding_entries_at_the_end_merge_cleanly(repo: Path) -> None:
    """Every such pull conflicts with git's own line merge; here both entries are kept."""
    ours = BASE + "- Deploys go through `make release`.\n"
    theirs = BASE + "- The user prefers short answers.\n"
    merged = branches(repo, ours, theirs)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert (repo / ".metis" / "MEMORY.md").read_text() == (
        BASE + "- Deploys go through `make release`.\n- The user prefers short answers.\n"
    )
    assert git(repo, "status", "--porcelain").stdout == ""


def test_without_the_driver_the_same_pull_conflicts(repo: Path) -> None:
    (repo / ".gitattributes").unlink()
    git(repo, "commit", "-q", "-am", "no driver")
    merged = branches(repo, BASE + "- ours\n", BASE + "- theirs\n")
    assert merged.returncode != 0 and "CONFLICT" in merged.stdout


def test_the_same_entry_added_on_both_sides_is_kept_once(repo: Path) -> None:
    ours = BASE + "- Uses uv.\n- Ours only.\n"
    theirs = BASE + "- uses  UV.\n"  # the same entry by the store's definition
    assert branches(repo, ours, theirs).returncode == 0
    assert (repo / ".metis" / "MEMORY.md").read_text() == BASE + "- Uses uv.\n- Ours only.\n"


def test_one_sided_edits_and_removals_are_taken(repo: Path) -> None:
    ours = BASE.replace("`api/`", "`server/api/`")  # ours edits the first entry
    theirs = BASE.replace("- Tests run with `make test`.\n", "")  # theirs removes the second
    assert branches(repo, ours, theirs).returncode == 0
    assert (repo / ".metis" / "MEMORY.md").read_text() == (
        "# Memory\n\n- The API is in `server/api/`.\n"
    )


def test_each_side_removing_a_neighbouring_entry_merges_cleanly(repo: Path) -> None:
    """Issue 24: with blank lines between entries, ours removing the first and theirs the
    second was reported as a conflict."""
    base = "- a\n\n- b\n\n- c\n\n- d\n"
    (repo / ".metis" / "MEMORY.md").write_text(base, encoding="utf-8")
    git(repo, "commit", "-q", "-am", "entries separated by blank lines")
    merged = branches(repo, ours="- b\n\n- c\n\n- d\n", theirs="- a\n\n- c\n\n- d\n")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert (repo / ".metis" / "MEMORY.md").read_text() == "- c\n\n- d\n"
    assert git(repo, "status", "--porcelain").stdout == ""


def test_the_same_entry_changed_differently_is_a_conflict_on_that_entry_only(repo: Path) -> None:
    ours = BASE.replace("`api/`", "`server/api/`") + "- Ours added this.\n"
    theirs = BASE.replace("`api/`", "`svc/api/`")
    merged = branches(repo, ours, theirs)
    assert merged.returncode != 0
    assert "1 place(s) where both sides changed the same entries differently" in (
        merged.stdout + merged.stderr
    )
    assert (repo / ".metis" / "MEMORY.md").read_text() == (
        "# Memory\n\n"
        "<<<<<<< ours\n- The API is in `server/api/`.\n=======\n- The API is in `svc/api/`.\n"
        ">>>>>>> theirs\n"
        "- Tests run with `make test`.\n- Ours added this.\n"
    )
    assert "UU .metis/MEMORY.md" in git(repo, "status", "--porcelain").stdout


def test_a_merge_over_the_hard_cap_is_written_and_reported(repo: Path) -> None:
    """Each side stays under the hard cap through the store; together they pass it."""
    store = MemoryStore(repo)
    hard = CAPS[MemoryFile.MEMORY].hard
    half = (hard - len(BASE.encode())) // 2 + 100
    git(repo, "checkout", "-q", "-b", "other")
    store.add_entry(MemoryFile.MEMORY, "- theirs " + "t" * (half - 10))
    git(repo, "commit", "-q", "-am", "theirs")
    git(repo, "checkout", "-q", "main")
    store.add_entry(MemoryFile.MEMORY, "- ours " + "o" * (half - 8))
    git(repo, "commit", "-q", "-am", "ours")
    merged = git(repo, "merge", "--no-edit", "other", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    text = (repo / ".metis" / "MEMORY.md").read_text()
    size = len(text.encode())
    assert size > hard and "- ours " in text and "- theirs " in text
    assert f"is {size:,} B, over its {hard:,} B hard cap. It is written anyway" in merged.stderr
    check = metis(repo, "check")
    assert check.returncode == 1 and "MEMORY.md" in check.stdout


def test_unreadable_input_leaves_ours_alone(tmp_path: Path) -> None:
    base, ours, theirs = (tmp_path / n for n in ("o", "a", "b"))
    base.write_text(BASE)
    ours.write_text(BASE + "- ours\n")
    theirs.write_bytes(b"- \xff not utf-8\n")
    done = subprocess.run(
        [sys.executable, "-m", "metis_memory", "merge-driver", str(base), str(ours), str(theirs)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "theirs of a is not UTF-8 (byte 2). Ours is left as it was" in done.stderr
    assert ours.read_text() == BASE + "- ours\n"
