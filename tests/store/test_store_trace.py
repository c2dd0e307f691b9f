"""The write log (`store/trace.py`) against a real filesystem, real SQLite and real git: where
it lives and who may read it, what a read leaves behind (nothing), its bounds, and what a
cloned repository's own log does (nothing: it is never read, and the next write sets it
aside and begins a fresh one)."""

from __future__ import annotations

import hashlib
import itertools
import os
import shutil
import sqlite3
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from metis_memory import MemoryStore
from metis_memory.store import trace
from metis_memory.store.errors import ReviewInboxFull, StorageError
from metis_memory.store.provenance import Provenance
from metis_memory.tools import history as tool_history

AGENT = Provenance("mcp", "claude-code 2.1.4", "s-1")
FORGED = "forged-actor"


def log_dir(ws: Path) -> Path:
    return ws / ".metis" / "history"


def db_path(ws: Path) -> Path:
    return log_dir(ws) / "trace.sqlite3"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def listing(folder: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every path under `folder` with its mode and (for files) its bytes."""
    if not folder.exists():
        return {}
    found: dict[str, tuple[int, bytes | None]] = {}
    for path in sorted(folder.rglob("*")):
        st = path.lstat()
        data = path.read_bytes() if stat.S_ISREG(st.st_mode) else None
        found[str(path.relative_to(folder))] = (st.st_mode, data)
    return found


def quiet_log(ws: Path) -> None:
    """Close this process's open connections to logs, as at exit: what is then on disk is
    all there is (the WAL checkpointed into the database, no -wal or -shm beside it)."""
    trace.close_all()


def forged_database(path: Path, actor: str = FORGED) -> None:
    """A database with the log's schema and a record by `actor`: what a repository would
    commit to forge who wrote its memory."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(trace._SCHEMA)
    conn.execute(f"PRAGMA user_version = {trace._SCHEMA_VERSION}")
    conn.execute(
        "INSERT INTO writes (time, file, operation, door, actor, agent, before_hash, "
        "after_hash, before_size, after_size, before_text, after_text) VALUES "
        "('2020-01-01T00:00:00.000Z', 'MEMORY.md', 'add', 'cli', ?, 0, ?, ?, 0, 6, '', "
        "'- one\n')",
        (actor, sha(""), sha("- one\n")),
    )
    conn.execute("INSERT INTO settings (key, value) VALUES ('review', 'on')")
    conn.close()


def actors(store: MemoryStore) -> list[str]:
    return [r.actor for r in store.history(limit=None)]


# ---- where it lives, and who may read it -------------------------------------------------
def test_the_first_write_makes_an_owner_only_log_beside_the_memory(
    workspace: Path, store: MemoryStore
) -> None:
    result = store.add_entry("MEMORY.md", "- uses pnpm", by=AGENT)

    assert stat.S_IMODE(log_dir(workspace).stat().st_mode) == 0o700
    assert stat.S_IMODE(db_path(workspace).stat().st_mode) == 0o600
    # While a connection is open, SQLite's WAL and shared-memory files sit beside it:
    # they carry the database's own mode.
    conn = sqlite3.connect(db_path(workspace))
    try:
        conn.execute("SELECT count(*) FROM writes").fetchone()
        sidecars = [p for p in log_dir(workspace).iterdir() if p.name.startswith("trace.")]
        assert {p.name for p in sidecars} >= {"trace.sqlite3-wal", "trace.sqlite3-shm"}
        for path in sidecars:
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name
    finally:
        conn.close()
    (record,) = store.history()
    assert record.id == result.record_id
    assert (record.door, record.actor, record.session, record.agent) == (
        "mcp",
        "claude-code 2.1.4",
        "s-1",
        True,
    )
    assert record.after_hash == result.after_hash == sha("- uses pnpm\n")


def test_git_status_never_shows_the_log(workspace: Path, store: MemoryStore) -> None:
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")

    def run(*args: str) -> str:
        return subprocess.run(
            [git, *args], cwd=workspace, capture_output=True, text=True, check=True
        ).stdout

    run("init", "-q")
    store.add_entry("MEMORY.md", "- uses pnpm", by=AGENT)
    store.set_review(True)
    store.add_entry("MEMORY.md", "- uses ruff", by=AGENT, stage=True)
    # With the connection open (as in a running server) and after it is closed (as at exit).
    for phase in ("open", "closed"):
        if phase == "closed":
            quiet_log(workspace)
        shown = run("status", "--porcelain", "--untracked-files=all").splitlines()
        assert any(line.endswith(".metis/MEMORY.md") for line in shown), shown
        assert not [line for line in shown if "history" in line], (phase, shown)
        run("add", "-A")
        staged = run("diff", "--cached", "--name-only").splitlines()
        assert not [name for name in staged if "history" in name], (phase, staged)


def test_a_read_never_makes_a_folder_or_a_log(workspace: Path, store: MemoryStore) -> None:
    def read_everything() -> None:
        assert store.history() == []
        assert store.history("MEMORY.md", limit=None) == []
        assert store.record(1) is None
        assert store.review_enabled() is False
        assert store.staged() == []
        assert store.notice_outside("MEMORY.md") is None
        assert tool_history.archived(store) == []
        tool_history.blame(store, "MEMORY.md")

    read_everything()
    assert list(workspace.iterdir()) == []  # no `.metis/`
    (workspace / ".metis").mkdir()
    (workspace / ".metis" / "MEMORY.md").write_text("- edited by hand\n")
    read_everything()
    assert sorted(p.name for p in (workspace / ".metis").iterdir()) == ["MEMORY.md"]


def test_a_read_of_a_log_changes_nothing_on_disk(workspace: Path, store: MemoryStore) -> None:
    store.add_entry("MEMORY.md", "- one", by=AGENT)
    store.set_review(True)
    store.add_entry("MEMORY.md", "- two", by=AGENT, stage=True)
    (workspace / ".metis" / "MEMORY.md").write_text("- one\n- edited by hand\n")
    quiet_log(workspace)
    before = listing(workspace)
    mtime = db_path(workspace).stat().st_mtime_ns

    for _ in range(3):
        assert [r.operation for r in store.history()] == ["add"]
        assert store.review_enabled() is True
        assert len(store.staged()) == 1
        assert [b.origin for b in tool_history.blame(store, "MEMORY.md")] == ["log", "outside"]
        assert tool_history.archived(store) == []
    quiet_log(workspace)

    assert listing(workspace) == before
    assert db_path(workspace).stat().st_mtime_ns == mtime


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_a_log_others_may_read_is_never_read_and_is_set_aside(
    workspace: Path, store: MemoryStore, mode: int
) -> None:
    """What `git clone` makes of a committed log: 0644 with the usual umask."""
    (workspace / ".metis").mkdir()
    log_dir(workspace).mkdir(mode=0o700)
    forged_database(db_path(workspace))
    os.chmod(db_path(workspace), mode)

    assert store.history() == []
    assert store.review_enabled() is False  # the forged setting is not believed either
    store.add_entry("MEMORY.md", "- one", by=AGENT)

    assert actors(store) == ["claude-code 2.1.4"]
    aside = log_dir(workspace) / "trace.sqlite3.untrusted"
    assert aside.exists()  # kept, not deleted: the user may want to see what it was
    assert stat.S_IMODE(db_path(workspace).stat().st_mode) == 0o600


def test_a_log_folder_others_may_enter_is_never_read_and_is_set_aside(
    workspace: Path, store: MemoryStore
) -> None:
    """The folder as `git clone` makes it (0755), with a database that looks like ours and a
    `.gitignore` that would let the user's own log be committed."""
    (workspace / ".metis").mkdir()
    log_dir(workspace).mkdir(mode=0o755)
    os.chmod(log_dir(workspace), 0o755)
    forged_database(db_path(workspace))
    os.chmod(db_path(workspace), 0o600)
    (log_dir(workspace) / ".gitignore").write_text("!*\n")

    assert store.history() == []
    assert store.review_enabled() is False
    store.add_entry("MEMORY.md", "- one", by=AGENT)

    assert actors(store) == ["claude-code 2.1.4"]
    assert stat.S_IMODE(log_dir(workspace).stat().st_mode) == 0o700
    assert (log_dir(workspace) / ".gitignore").read_text().splitlines()[-1] == "*"
    aside = workspace / ".metis" / "history.untrusted"
    assert (aside / ".gitignore").read_text() == "!*\n"
    assert sqlite3.connect(aside / "trace.sqlite3").execute(
        "SELECT actor FROM writes"
    ).fetchall() == [(FORGED,)]


def test_an_owner_only_folder_with_another_gitignore_gets_ours(
    workspace: Path, store: MemoryStore
) -> None:
    """A clone made with umask 077 gives the repository's folder our own modes: its
    `.gitignore` is still never the one that decides whether the log is committed."""
    (workspace / ".metis").mkdir()
    log_dir(workspace).mkdir(mode=0o700)
    (log_dir(workspace) / ".gitignore").write_text("!trace.sqlite3\n")
    store.add_entry("MEMORY.md", "- one", by=AGENT)
    assert (log_dir(workspace) / ".gitignore").read_text() == trace._IGNORE_ALL


def test_another_users_log_is_never_read_and_is_set_aside(
    workspace: Path, store: MemoryStore
) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root: to give a file to another user")
    store.add_entry("MEMORY.md", "- one", by=AGENT)
    quiet_log(workspace)
    forged = workspace / "forged.sqlite3"
    forged_database(forged)
    shutil.move(forged, db_path(workspace))
    os.chmod(db_path(workspace), 0o600)
    os.chown(db_path(workspace), 65534, 65534)

    assert store.history() == []
    store.add_entry("MEMORY.md", "- two", by=AGENT)
    assert actors(store) == ["claude-code 2.1.4"]
    assert (log_dir(workspace) / "trace.sqlite3.untrusted").stat().st_uid == 65534


def test_a_hard_linked_log_is_never_read(workspace: Path, store: MemoryStore) -> None:
    (workspace / ".metis").mkdir()
    log_dir(workspace).mkdir(mode=0o700)
    forged = workspace / "elsewhere.sqlite3"
    forged_database(forged)
    os.chmod(forged, 0o600)
    os.link(forged, db_path(workspace))

    assert store.history() == []
    store.add_entry("MEMORY.md", "- one", by=AGENT)
    assert actors(store) == ["claude-code 2.1.4"]
    assert sqlite3.connect(forged).execute("SELECT actor FROM writes").fetchall() == [(FORGED,)]


def test_a_symlinked_log_is_never_read_nor_written_through(
    workspace: Path, store: MemoryStore, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.sqlite3"
    forged_database(outside)
    os.chmod(outside, 0o600)
    before = outside.read_bytes()
    (workspace / ".metis").mkdir()
    log_dir(workspace).mkdir(mode=0o700)
    db_path(workspace).symlink_to(outside)

    assert store.history() == []
    store.add_entry("MEMORY.md", "- one", by=AGENT)

    assert actors(store) == ["claude-code 2.1.4"]
    assert not db_path(workspace).is_symlink()
    assert outside.read_bytes() == before


@pytest.mark.parametrize("where", ["outside the workspace", "inside the workspace"])
def test_a_log_folder_that_is_a_symlink_is_never_read_and_is_set_aside(
    workspace: Path, store: MemoryStore, tmp_path: Path, where: str
) -> None:
    """A repository can commit `.metis/history` as a link: to a log it made elsewhere, or
    to one of its own folders (where a `.gitignore` of `*` would hide the user's files)."""
    target = tmp_path / "elsewhere" if where.startswith("outside") else workspace / "docs"
    target.mkdir(mode=0o700)
    forged_database(target / "trace.sqlite3")
    os.chmod(target / "trace.sqlite3", 0o600)
    before = listing(target)
    (workspace / ".metis").mkdir()
    log_dir(workspace).symlink_to(target)

    assert store.history() == []
    assert store.review_enabled() is False
    assert tool_history.blame(store, "MEMORY.md") == []
    store.add_entry("MEMORY.md", "- one", by=AGENT)

    assert actors(store) == ["claude-code 2.1.4"]
    assert not log_dir(workspace).is_symlink()
    assert (workspace / ".metis" / "history.untrusted").is_symlink()
    quiet_log(workspace)
    assert listing(target) == before  # nothing written there, no `.gitignore` either


def test_a_log_folder_that_is_a_file_is_set_aside(workspace: Path, store: MemoryStore) -> None:
    (workspace / ".metis").mkdir()
    log_dir(workspace).write_text("not a folder")

    assert store.history() == []
    store.add_entry("MEMORY.md", "- one", by=AGENT)
    assert actors(store) == ["claude-code 2.1.4"]
    assert (workspace / ".metis" / "history.untrusted").read_text() == "not a folder"


def test_a_second_foreign_log_folder_is_set_aside_beside_the_first(
    workspace: Path, store: MemoryStore, tmp_path: Path
) -> None:
    (workspace / ".metis").mkdir()
    for n in range(2):
        target = tmp_path / f"elsewhere-{n}"
        target.mkdir()
        if log_dir(workspace).is_dir() and not log_dir(workspace).is_symlink():
            shutil.rmtree(log_dir(workspace))
        log_dir(workspace).symlink_to(target)
        store.add_entry("MEMORY.md", f"- entry {n}", by=AGENT)
        assert not log_dir(workspace).is_symlink()
    names = sorted(p.name for p in (workspace / ".metis").iterdir() if "untrusted" in p.name)
    assert len(names) == 2, names


@pytest.mark.parametrize("mode", [0o600, 0o644])
def test_a_planted_journal_without_a_database_is_never_replayed(
    workspace: Path, store: MemoryStore, tmp_path: Path, mode: int
) -> None:
    wal = forged_wal(tmp_path)
    (workspace / ".metis").mkdir()
    log_dir(workspace).mkdir(mode=0o700)
    shutil.copy(wal, log_dir(workspace) / "trace.sqlite3-wal")
    os.chmod(log_dir(workspace) / "trace.sqlite3-wal", mode)

    assert store.history() == []
    store.add_entry("MEMORY.md", "- one", by=AGENT)
    assert actors(store) == ["claude-code 2.1.4"]


def test_a_journal_planted_beside_our_log_is_never_replayed(
    workspace: Path, store: MemoryStore, tmp_path: Path
) -> None:
    """`git pull` can bring a `trace.sqlite3-wal` beside the user's own log: replayed, it
    would replace the whole log with the repository's."""
    store.add_entry("MEMORY.md", "- one", by=AGENT)
    store.add_entry("MEMORY.md", "- two", by=AGENT)
    quiet_log(workspace)
    planted = log_dir(workspace) / "trace.sqlite3-wal"
    shutil.copy(forged_wal(tmp_path), planted)
    os.chmod(planted, 0o644)

    assert store.history() == []  # not read at all while it is there
    assert store.review_enabled() is False
    store.add_entry("MEMORY.md", "- three", by=AGENT)
    assert actors(store) == ["claude-code 2.1.4"] * 3
    assert FORGED not in actors(store)


def test_a_symlinked_journal_is_never_written_through(
    workspace: Path, store: MemoryStore, tmp_path: Path
) -> None:
    store.add_entry("MEMORY.md", "- one", by=AGENT)
    quiet_log(workspace)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (log_dir(workspace) / "trace.sqlite3-wal").symlink_to(victim)

    store.add_entry("MEMORY.md", "- two", by=AGENT)
    quiet_log(workspace)
    assert victim.read_text() == "precious\n"
    assert len(store.history()) == 2


def forged_wal(tmp_path: Path) -> Path:
    """A WAL holding a whole forged log (every page of it): replayed beside any database,
    it would become that database."""
    made = tmp_path / "forge" / "x.sqlite3"
    made.parent.mkdir(exist_ok=True)
    conn = sqlite3.connect(made, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.close()
    conn = sqlite3.connect(made, isolation_level=None)
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.executescript(trace._SCHEMA)
    conn.execute(f"PRAGMA user_version = {trace._SCHEMA_VERSION}")
    conn.execute(
        "INSERT INTO writes (time, file, operation, door, actor, agent, before_hash, "
        "after_hash, before_size, after_size) VALUES ('t', 'MEMORY.md', 'add', 'cli', ?, 0, "
        "'', '', 0, 0)",
        (FORGED,),
    )
    conn.execute("INSERT INTO settings (key, value) VALUES ('review', 'on')")
    copy = tmp_path / "forge" / "planted-wal"
    shutil.copy(str(made) + "-wal", copy)  # while open: the frames are all still in it
    conn.close()
    return copy


def test_a_database_sqlite_cannot_read_is_set_aside_by_the_next_write(
    workspace: Path, store: MemoryStore
) -> None:
    (workspace / ".metis").mkdir()
    log_dir(workspace).mkdir(mode=0o700)
    db_path(workspace).write_bytes(b"not a database at all" * 100)
    os.chmod(db_path(workspace), 0o600)

    with pytest.raises(StorageError, match="write log"):
        store.history()
    result = store.add_entry("MEMORY.md", "- one", by=AGENT)

    assert result.record_id is not None
    assert actors(store) == ["claude-code 2.1.4"]
    assert (log_dir(workspace) / "trace.sqlite3.untrusted").read_bytes().startswith(b"not a")


def test_another_programs_database_is_set_aside_by_the_next_write(
    workspace: Path, store: MemoryStore
) -> None:
    (workspace / ".metis").mkdir()
    log_dir(workspace).mkdir(mode=0o700)
    conn = sqlite3.connect(db_path(workspace))
    conn.execute("CREATE TABLE writes (something TEXT)")
    conn.commit()
    conn.close()
    os.chmod(db_path(workspace), 0o600)

    assert store.history() == []
    result = store.add_entry("MEMORY.md", "- one", by=AGENT)
    assert result.record_id is not None
    assert actors(store) == ["claude-code 2.1.4"]


# ---- bounds ------------------------------------------------------------------------------
def test_past_max_records_the_oldest_go(workspace: Path, store: MemoryStore) -> None:
    extra = 7
    for i in range(trace.MAX_RECORDS + extra):
        store.consolidate("MEMORY.md", f"- version {i}\n", by=AGENT)

    kept = store.history(limit=None)
    assert len(kept) == trace.MAX_RECORDS
    assert kept[0].after_text == f"- version {trace.MAX_RECORDS + extra - 1}\n"
    assert kept[-1].after_text == f"- version {extra}\n"
    assert store.record(extra) is None and store.record(extra + 1) is not None
    # What remains still chains, and a further write still records.
    oldest_first = list(reversed(kept))
    assert all(b.before_hash == a.after_hash for a, b in itertools.pairwise(oldest_first))
    assert store.add_entry("MEMORY.md", "- after", by=AGENT).record_id is not None
    assert len(store.history(limit=None)) == trace.MAX_RECORDS


def test_the_inbox_holds_max_staged_and_refuses_the_next_with_its_count(
    workspace: Path, store: MemoryStore
) -> None:
    store.set_review(True)
    for i in range(trace.MAX_STAGED):
        assert store.add_entry("MEMORY.md", f"- staged {i}", by=AGENT, stage=True).staged
    before = listing(workspace / ".metis")

    with pytest.raises(ReviewInboxFull) as refused:
        store.add_entry("MEMORY.md", "- one too many", by=AGENT, stage=True)
    assert str(refused.value) == (
        f"{trace.MAX_STAGED} changes already wait for the user's review, the most the inbox "
        "holds: this change to MEMORY.md was not staged and nothing was written. Ask the user "
        "to review the waiting changes (accept or reject them), then retry."
    )
    assert len(store.staged()) == trace.MAX_STAGED
    assert not (workspace / ".metis" / "MEMORY.md").exists()
    quiet_log(workspace)
    assert listing(workspace / ".metis") == before or _same_but_sidecars(
        listing(workspace / ".metis"), before
    )
    # Rejecting one makes room for one.
    assert store.drop_staged(store.staged()[0].id)
    assert store.add_entry("MEMORY.md", "- now it fits", by=AGENT, stage=True).staged


def _same_but_sidecars(
    a: dict[str, tuple[int, bytes | None]], b: dict[str, tuple[int, bytes | None]]
) -> bool:
    def plain(d: dict[str, tuple[int, bytes | None]]) -> set[str]:
        return {k for k in d if not k.endswith(("-wal", "-shm"))}

    return plain(a) == plain(b)


def test_a_side_over_max_kept_text_keeps_its_hash_and_size_only(
    workspace: Path, store: MemoryStore
) -> None:
    store.add_entry("MEMORY.md", "- one", by=AGENT)
    big = "- " + "x" * (trace.MAX_KEPT_TEXT + 10) + "\n"
    (workspace / ".metis" / "MEMORY.md").write_text(big)
    written = store.consolidate("MEMORY.md", "- small again\n", by=AGENT)

    outside, shrink, first = store.history()[::-1][1], store.history()[0], store.history()[-1]
    assert first.after_text == "- one\n"
    assert outside.operation == "outside" and shrink.id == written.record_id
    assert outside.after_text is None and outside.after_size_bytes == len(big)
    assert outside.after_hash == sha(big) == shrink.before_hash
    assert shrink.before_text is None and shrink.before_size_bytes == len(big)
    assert shrink.after_text == "- small again\n"
    # Shown with its sizes, never its text.
    shown = tool_history.record_json(shrink)
    assert "too large to keep" in str(shown["summary"])


# ---- a process that keeps its connection open (the language server) ----------------------
def test_a_journal_swapped_in_under_a_live_connection_is_never_read(
    workspace: Path, store: MemoryStore, tmp_path: Path
) -> None:
    """`git pull` replacing the live `-wal` with a repository's (a new file at that name) while
    this process holds the log open: not read, and the records this process had written are
    kept (its own WAL is checkpointed before a fresh one begins)."""
    store.add_entry("MEMORY.md", "- one", by=AGENT)
    store.add_entry("MEMORY.md", "- two", by=AGENT)
    live = log_dir(workspace) / "trace.sqlite3-wal"
    assert live.exists()  # this process's connection is open
    planted = tmp_path / "planted"
    shutil.copy(forged_wal(tmp_path), planted)
    os.chmod(planted, 0o644)
    os.replace(planted, live)

    assert store.history() == []
    assert store.review_enabled() is False
    store.add_entry("MEMORY.md", "- three", by=AGENT)
    assert actors(store) == ["claude-code 2.1.4"] * 3
    quiet_log(workspace)
    assert actors(store) == ["claude-code 2.1.4"] * 3


@pytest.mark.parametrize("change", ["0644", "symlinked folder", "another database"])
def test_a_log_changed_under_a_live_connection_is_judged_again(
    workspace: Path, store: MemoryStore, tmp_path: Path, change: str
) -> None:
    store.add_entry("MEMORY.md", "- one", by=AGENT)
    assert store.history()  # found ours, and remembered so
    if change == "0644":
        os.chmod(db_path(workspace), 0o644)
    elif change == "symlinked folder":
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir(mode=0o700)
        forged_database(elsewhere / "trace.sqlite3")
        os.chmod(elsewhere / "trace.sqlite3", 0o600)
        os.rename(log_dir(workspace), workspace / ".metis" / "moved")
        log_dir(workspace).symlink_to(elsewhere)
    else:
        forged = tmp_path / "forged.sqlite3"
        forged_database(forged)
        os.chmod(forged, 0o600)
        os.replace(forged, db_path(workspace))

    # Not read: for "another database", one of ours in every way a file can show (a backup
    # put back, say), because the journals of the one before are still beside it, and
    # SQLite would replay them into it.
    assert store.history() == []
    store.add_entry("MEMORY.md", "- two", by=AGENT)
    assert actors(store)[0] == "claude-code 2.1.4"
    assert not log_dir(workspace).is_symlink()
    if change == "another database":
        assert actors(store) == ["claude-code 2.1.4", FORGED]  # its own records, unmixed


def test_a_log_damaged_under_a_live_connection_is_set_aside_by_the_next_write(
    workspace: Path, store: MemoryStore
) -> None:
    for i in range(40):
        store.consolidate("MEMORY.md", f"- version {i}\n" + "x" * 3000 + "\n", by=AGENT)
    quiet_log(workspace)
    size = db_path(workspace).stat().st_size
    with open(db_path(workspace), "r+b") as fh:  # every page but the first: garbage
        fh.seek(4096)
        fh.write(b"\xa5" * (size - 4096))

    damaged = store.add_entry("MEMORY.md", "- after the damage", by=AGENT)
    assert damaged.record_id is None  # the write landed; its record could not be kept
    assert (workspace / ".metis" / "MEMORY.md").read_text().endswith("- after the damage\n")
    fresh = store.add_entry("MEMORY.md", "- and again", by=AGENT)
    assert fresh.record_id is not None
    assert [r.operation for r in store.history()] == ["add"]
    assert (log_dir(workspace) / "trace.sqlite3.untrusted").exists()


def test_a_process_lets_go_of_the_log_once_it_is_idle(workspace: Path, store: MemoryStore) -> None:
    """The connection a process keeps for the next write is closed a moment after its last
    use: then no file of the workspace is held open for writing (a filesystem can be
    remounted read-only or unmounted under an editor left open), and the WAL is folded into
    the database. The next use opens it again."""
    store.add_entry("MEMORY.md", "- one", by=AGENT)
    assert (log_dir(workspace) / "trace.sqlite3-wal").exists()  # held open, for now

    def held() -> list[str]:
        targets = []
        for fd in list(Path("/proc/self/fd").iterdir()):
            try:
                targets.append(os.readlink(fd))
            except FileNotFoundError:
                continue  # the listing's own descriptor, closed since
        return [t for t in targets if t.startswith(str(log_dir(workspace).resolve()))]

    if not Path("/proc/self/fd").is_dir():
        pytest.skip("no /proc/self/fd to see what this process holds open")
    waited = wait_until(lambda: not held(), 10 * trace._IDLE_S)
    assert waited, f"still held open after {10 * trace._IDLE_S:g} s: {held()}"
    assert sorted(p.name for p in log_dir(workspace).iterdir()) == [".gitignore", "trace.sqlite3"]
    assert [r.actor for r in store.history()] == ["claude-code 2.1.4"]
    store.add_entry("MEMORY.md", "- two", by=AGENT)
    assert len(store.history()) == 2


def wait_until(done: Callable[[], bool], limit_s: float) -> bool:
    deadline = time.monotonic() + limit_s
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_a_workspace_link_pointed_elsewhere_reads_the_log_found_there(tmp_path: Path) -> None:
    """A store named by a link: the log it found its own a moment ago is found again through
    the link as given, unresolved; once the link leads to another workspace, that one's log
    is read, never the first's."""
    first, second = tmp_path / "first", tmp_path / "second"
    for ws in (first, second):
        ws.mkdir()
    MemoryStore(second).add_entry("MEMORY.md", "- in the second", by=Provenance("cli", "user"))
    link = tmp_path / "link"
    link.symlink_to(first)
    store = MemoryStore(link)
    store.set_review(True)
    store.add_entry("MEMORY.md", "- in the first", by=AGENT)
    assert store.review_enabled() is True
    assert [r.actor for r in store.history()] == ["claude-code 2.1.4"]

    link.unlink()
    link.symlink_to(second)
    assert store.review_enabled() is False
    assert [r.actor for r in store.history()] == ["user"]


def test_a_child_forked_while_the_log_is_open_inherits_no_connection_and_keeps_its_records(
    workspace: Path, store: MemoryStore
) -> None:
    """SQLite forbids carrying a connection into a forked child (its per-process record of
    the locks it holds on each file goes with it): the log's connections are closed before
    `os.fork`, so the child opens its own, and every record of both lands. (Within the
    process race below, children forked while their parent held the log open once failed
    with "disk I/O error" and lost a record.)"""
    store.add_entry("MEMORY.md", "- by the parent", by=AGENT)  # the parent holds it open
    to_child_r, to_child_w = os.pipe()
    to_parent_r, to_parent_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            inherited = len(trace._inherited) + len(trace._open)
            child = MemoryStore(workspace)
            first = child.add_entry("MEMORY.md", "- by the child, first", by=AGENT)
            os.write(to_parent_w, b"1")
            assert os.read(to_child_r, 1) == b"2"  # the parent has let go of the log
            second = child.add_entry("MEMORY.md", "- by the child, second", by=AGENT)
            code = 3 if inherited else 0 if first.record_id and second.record_id else 2
        finally:
            os._exit(code)
    try:
        assert os.read(to_parent_r, 1) == b"1"
        assert store.history()  # the parent reads the log too, and then lets go of it
        trace.close_all()
        os.write(to_child_w, b"2")
    finally:
        _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status), status
    assert os.WEXITSTATUS(status) != 3, "the child inherited its parent's open connection"
    assert os.WEXITSTATUS(status) == 0, "a record of the child's was lost"
    added = [history_added(r) for r in store.history_oldest_first("MEMORY.md")]
    assert added == ["- by the parent", "- by the child, first", "- by the child, second"]


def history_added(record: trace.TraceRecord) -> str:
    added = tool_history.record_changes(record)[0]
    assert len(added) == 1, added
    return added[0]
