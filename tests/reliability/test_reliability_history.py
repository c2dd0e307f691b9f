"""The write log under kill -9 and under racing writers (issue 41).

Kills: a writer is killed at each step of a write (told apart by the store's
`metis_memory.write` audit events), at each step of the log's own transaction (an SQLite
trace callback in the child), at every write, sync and unlink SQLite makes while it records
(strace's syscall fault injection on the real CLI, where strace may trace), and at random
instants. After every kill: the memory file is whole (the old content or the new), the log
never claims a write that did not land, its database passes SQLite's integrity check, and
a write that landed without its record is found by the next write (or by `notice_outside`,
as the watcher calls it) and recorded as `outside`, after which the log chains again.

Races: undo, restore, put-back and review accepts race writers in threads and in processes.
Every write the log records chains to the one before it (each record's before is the last
one's after, with no `outside` between: nothing was overwritten unseen), the file is what
the last record says, and every entry a writer added is in the file or was removed by a
recorded write.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from metis_memory import MemoryStore
from metis_memory.store import trace
from metis_memory.store.atomic import AUDIT_EVENT
from metis_memory.store.errors import MemoryConflict, MemoryStoreError
from metis_memory.store.provenance import USER, Provenance
from metis_memory.tools import history, memory_dispatcher, review
from metis_memory.tools.errors import ToolExecutionError
from support.reliability import report, scaled

AGENT = Provenance("mcp", "claude-code 2.1.4", "kill-test")
YOU = Provenance("cli", USER)
CHILD_LIMIT_S = 60
STEPS = ("lock", "sweep", "temp", "synced", "rename", "renamed", "unlock")
"""The store's audit steps of one write, in order (see `store/atomic.py`)."""
LANDED_AFTER = frozenset({"renamed", "unlock"})
"""Steps at which the memory file already holds the new content."""
LOG_STEPS = ("BEGIN", "SELECT after_hash", "INSERT", "DELETE FROM writes", "COMMIT")
"""Statements of the log's transaction, killed as each starts (the record is written
only once COMMIT has run)."""


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def version(n: int) -> bytes:
    """Content number `n`: it names itself and its length varies, so a torn or mixed file
    cannot pass for a whole one."""
    body = (f"{n:x}." * 400)[: 200 + (n * 7919) % 3000]
    return f"- version {n}\n- {body}\n".encode()


def parse_version(data: bytes) -> int | None:
    head = data.partition(b"\n")[0]
    try:
        n = int(head.split()[2])
    except (IndexError, ValueError):
        return None
    return n if version(n) == data else None


def memory(ws: Path) -> Path:
    return ws / ".metis" / "MEMORY.md"


def db(ws: Path) -> Path:
    return ws / ".metis" / "history" / "trace.sqlite3"


# ---- killing a writer ----------------------------------------------------------------------
def run_child(body: Callable[[], None]) -> int:
    """Fork a child that runs `body`, and wait for it; its wait status."""
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        try:
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.alarm(CHILD_LIMIT_S)  # a child nothing killed ends, and is reported
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            body()
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return status


def kill_at_step(step: str, metis: str) -> None:
    """In the child: SIGKILL itself when the store reaches `step` in `metis`."""

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == AUDIT_EVENT and args[0] == step and str(args[1]).startswith(metis + os.sep):
            os.kill(os.getpid(), signal.SIGKILL)

    sys.addaudithook(hook)


def kill_at_statement(prefix: str) -> None:
    """In the child: SIGKILL itself when the log's connection starts a statement that
    begins with `prefix` (SQLite calls the trace callback as each statement starts)."""
    real = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn: sqlite3.Connection = real(*args, **kwargs)

        def traced(sql: str) -> None:
            if sql.startswith(prefix):
                os.kill(os.getpid(), signal.SIGKILL)

        conn.set_trace_callback(traced)
        return conn

    sqlite3.connect = connect  # type: ignore[assignment]  # the child's own: it dies with it


def log_state(ws: Path) -> tuple[list[trace.TraceRecord], str]:
    """The log's records of MEMORY.md (oldest first) and `PRAGMA integrity_check`, read by a
    connection of this test's own (closed again, so nothing of it stays behind)."""
    conn = sqlite3.connect(db(ws))
    try:
        (check,) = conn.execute("PRAGMA integrity_check").fetchone()
    finally:
        conn.close()
    return MemoryStore(ws).history_oldest_first("MEMORY.md"), str(check)


def judge_kill(ws: Path, old: bytes, new: bytes, where: str) -> str:
    """After a writer writing `new` over `old` was killed: the file is whole, the log claims
    nothing that did not land, the database is sound. Returns "old", "new, recorded" or
    "new, unrecorded"."""
    data = memory(ws).read_bytes()
    assert data in (old, new), f"{where}: torn or foreign content, {len(data)} B"
    records, check = log_state(ws)
    assert check == "ok", f"{where}: integrity_check says {check}"
    last = records[-1]
    if data == old:
        assert last.after_hash == sha(old), f"{where}: the log claims a write that did not land"
        return "old"
    if last.after_hash == sha(new):
        assert last.after_text == new.decode(), where
        return "new, recorded"
    assert last.after_hash == sha(old), f"{where}: the log ends at neither version"
    return "new, unrecorded"


def judge_recovery(ws: Path, outcome: str, new: bytes, n: int, *, notice: bool) -> None:
    """The next write (or `notice_outside`) records an unrecorded landed write as `outside`,
    and the log chains again."""
    store = MemoryStore(ws)
    before = len(store.history_oldest_first("MEMORY.md"))
    if notice:
        noticed = store.notice_outside("MEMORY.md")
        assert (noticed is not None) == (outcome == "new, unrecorded"), outcome
    store.consolidate("MEMORY.md", version(n).decode(), by=YOU)
    records, check = log_state(ws)
    assert check == "ok"
    added = records[before:]
    expected = ["consolidate"] if outcome != "new, unrecorded" else ["outside", "consolidate"]
    assert [r.operation for r in added] == expected, outcome
    if outcome == "new, unrecorded":
        assert added[0].after_hash == sha(new) and added[0].door == "outside"
    assert_chains(records, memory(ws).read_bytes())


def assert_chains(records: list[trace.TraceRecord], final: bytes) -> None:
    for a, b in itertools.pairwise(records):
        assert b.before_hash == a.after_hash, f"#{b.id} does not chain to #{a.id}"
    assert records[-1].after_hash == sha(final), "the file is not what the log's last says"


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_writer_killed_at_every_step_never_leaves_the_log_claiming_what_did_not_land(
    workspace: Path,
) -> None:
    metis = str(workspace.resolve() / ".metis")
    MemoryStore(workspace).consolidate("MEMORY.md", version(0).decode(), by=YOU)
    rounds = scaled(6, 2)
    outcomes: Counter[str] = Counter()
    n = 0
    points = [("step", s) for s in STEPS] + [("statement", s) for s in LOG_STEPS]
    for r in range(rounds):
        for kind, point in points:
            n += 1
            old, new = memory(workspace).read_bytes(), version(n)

            def write(kind: str = kind, point: str = point, new: bytes = new) -> None:
                if kind == "step":
                    kill_at_step(point, metis)
                else:
                    kill_at_statement(point)
                MemoryStore(workspace).consolidate("MEMORY.md", new.decode(), by=AGENT)

            status = run_child(write)
            where = f"round {r}, killed at {kind} {point}"
            assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, where
            outcome = judge_kill(workspace, old, new, where)
            if kind == "step":
                landed = point in LANDED_AFTER
                assert (outcome != "old") == landed, (where, outcome)
                if point == "unlock":
                    assert outcome == "new, recorded", where
            else:  # the file landed; the record only once COMMIT ran, and it never did
                assert outcome == "new, unrecorded", (where, outcome)
            outcomes[f"{kind} {point}: {outcome}"] += 1
            n += 1
            judge_recovery(workspace, outcome, new, n, notice=r % 2 == 1)
    report("history kill at every step", rounds=rounds, outcomes=dict(sorted(outcomes.items())))


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_writer_killed_at_random_instants_never_leaves_the_log_claiming_what_did_not_land(
    workspace: Path,
) -> None:
    MemoryStore(workspace).consolidate("MEMORY.md", version(0).decode(), by=YOU)
    rng = random.Random(20261127)
    kills = scaled(120, 24)
    outcomes: Counter[str] = Counter()
    for k in range(kills):
        first = (k + 1) * 1_000_000
        old = memory(workspace).read_bytes()
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(read_fd)
                signal.alarm(CHILD_LIMIT_S)
                os.write(write_fd, b"r")
                store = MemoryStore(workspace)
                i = first
                while True:  # until killed
                    i += 1
                    store.consolidate("MEMORY.md", version(i).decode(), by=AGENT)
            finally:
                os._exit(0)
        os.close(write_fd)
        assert os.read(read_fd, 1) == b"r"
        os.close(read_fd)
        time.sleep(rng.uniform(0, 0.03))  # the instant of the kill is what is random
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)

        data = memory(workspace).read_bytes()
        m = parse_version(data)
        assert data == old or (m is not None and first < m < first + 1_000_000), f"kill {k}"
        records, check = log_state(workspace)
        assert check == "ok", f"kill {k}: {check}"
        # Whatever the log's last record says the file became, it did become (it may be
        # one write behind: that write landed without its record).
        last = records[-1]
        assert last.after_text is not None
        claimed = parse_version(last.after_text.encode())
        assert last.after_hash in (sha(data),) or (
            claimed is not None and m is not None and claimed < m
        ), f"kill {k}: the log claims version {claimed}, the file holds {m}"
        ahead = last.after_hash != sha(data)
        outcomes["file ahead of its log" if ahead else "log and file agree"] += 1
        MemoryStore(workspace).consolidate("MEMORY.md", version(first).decode(), by=YOU)
        records, _ = log_state(workspace)
        assert_chains(records, memory(workspace).read_bytes())
    report("history random kills", kills=kills, outcomes=dict(outcomes))


# ---- kill -9 at the system calls SQLite makes while it records -------------------------------
def strace_usable() -> str | None:
    found = shutil.which("strace")
    if found is None:
        return None
    probe = subprocess.run([found, "-qq", "-o", os.devnull, "true"], capture_output=True)
    return found if probe.returncode == 0 else None


def cli_consolidate(ws: Path, n: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "metis_memory",
        "consolidate",
        "-w",
        str(ws),
        "MEMORY.md",
        "--content",
        version(n).decode(),
    ]


def syscall_counts(strace: str, ws: Path, n: int, calls: tuple[str, ...]) -> Counter[str]:
    """How often a whole CLI write calls each of `calls`, and the file name of each."""
    out = ws.parent / "strace.out"
    traced = [strace, "-f", "-qq", "-o", str(out), "-e", f"trace={','.join(calls)}"]
    done = subprocess.run(
        [*traced, *cli_consolidate(ws, n)],
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    counted: Counter[str] = Counter()
    for line in out.read_text().splitlines():
        for call in calls:
            if f" {call}(" in line or line.startswith(f"{call}("):
                counted[call] += 1
    return counted


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_cli_writer_killed_at_every_system_call_of_its_record_never_corrupts_the_log(
    workspace: Path,
) -> None:
    """`strace -e inject=<call>:signal=KILL:when=N` kills the real `metis-memory` as it
    makes the N-th such call: every WAL frame SQLite writes while it commits the record,
    every fsync of the WAL and of the checkpoint at exit, the unlinks of `-wal` and `-shm`."""
    strace = strace_usable()
    if strace is None:
        pytest.skip("strace is missing, or may not trace here (ptrace refused)")
    MemoryStore(workspace).consolidate("MEMORY.md", version(0).decode(), by=YOU)
    trace.close_all()
    calls = ("pwrite64", "fdatasync", "fsync", "unlink")
    counts = syscall_counts(strace, workspace, 1, calls)
    assert counts["pwrite64"] >= 3, counts  # the WAL's frames: this write's record
    outcomes: Counter[str] = Counter()
    n = 1
    for call in calls:
        for when in range(1, counts[call] + 1):
            n += 1
            old, new = memory(workspace).read_bytes(), version(n)
            inject = ["-e", f"trace={call}", "-e", f"inject={call}:signal=KILL:when={when}"]
            done = subprocess.run(
                [strace, "-f", "-qq", "-o", os.devnull, *inject, *cli_consolidate(workspace, n)],
                capture_output=True,
                check=False,
                timeout=60,
            )
            where = f"killed at {call} #{when}"
            assert done.returncode in (-signal.SIGKILL, 128 + signal.SIGKILL, 137), (
                where,
                done.returncode,
                done.stderr[-500:],
            )
            outcome = judge_kill(workspace, old, new, where)
            outcomes[f"{call} #{when}: {outcome}"] += 1
            n += 1
            judge_recovery(workspace, outcome, new, n, notice=when % 2 == 0)
            trace.close_all()
    assert any("unrecorded" in o for o in outcomes), outcomes  # some kills hit the commit
    assert any(o.endswith(": new, recorded") for o in outcomes), outcomes
    report("history kills at SQLite's system calls", counts=dict(counts), outcomes=dict(outcomes))


# ---- an accept killed after its write landed -----------------------------------------------
@pytest.mark.parametrize("operation", ["add", "replace"])
def test_an_accept_killed_after_its_write_landed_is_not_applied_twice(
    workspace: Path, operation: str
) -> None:
    """The staged change is resolved in the record's transaction: a kill between the rename
    and that commit leaves the change applied and still waiting. Accepting it again must
    not apply it a second time (an add would append the entry twice)."""
    store = MemoryStore(workspace)
    store.add_entry("MEMORY.md", "- Use pnpm", by=YOU)
    store.set_review(True)
    dispatcher = memory_dispatcher(store)
    if operation == "add":
        staged = dispatcher.dispatch(
            "memory_add", {"file": "MEMORY.md", "entry": "- Run make test"}, by=AGENT
        )
    else:
        staged = dispatcher.dispatch(
            "memory_replace",
            {"file": "MEMORY.md", "old": "Use pnpm", "new": "Use npm"},
            by=AGENT,
        )
    assert staged.write is not None and staged.write.staged is not None
    staged_id = staged.write.staged.id
    metis = str(workspace.resolve() / ".metis")

    def accept() -> None:
        kill_at_statement("COMMIT")
        review.accept(MemoryStore(workspace), staged_id)

    status = run_child(accept)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    landed = memory(workspace).read_text()
    assert landed == ("- Use pnpm\n- Run make test\n" if operation == "add" else "- Use npm\n"), (
        landed
    )
    assert metis  # the kill was after the rename

    try:
        review.accept(store, staged_id)
    except ToolExecutionError as refused:
        assert refused.code in ("not_found", "conflict"), refused.message
    assert memory(workspace).read_text() == landed  # not applied a second time
    assert store.staged() == []
    records = store.history_oldest_first("MEMORY.md")
    assert_chains(records, memory(workspace).read_bytes())


# ---- racing writers ------------------------------------------------------------------------
def entries_added(records: list[trace.TraceRecord]) -> Counter[str]:
    added: Counter[str] = Counter()
    for record in records:
        for text in history.record_changes(record)[0]:
            added[text] += 1
    return added


def judge_race(ws: Path, written: list[str]) -> dict[str, int]:
    """The log chains with nothing unseen between its records, the file is its last, and
    each entry in `written` is in the file or was removed by a recorded write."""
    records, check = log_state(ws)
    assert check == "ok", check
    operations = Counter(r.operation for r in records)
    assert operations["outside"] == 0, "a write was overwritten unseen"
    assert_chains(records, memory(ws).read_bytes())
    final = {e.key for e in history.entries(memory(ws).read_text())}
    removed: set[str] = set()
    for record in records:
        removed.update(e.key for t in history.record_changes(record)[1] for e in history.entries(t))
    keys = {entry: history.entries(entry)[0].key for entry in written}
    lost = [e for e in written if keys[e] not in final and keys[e] not in removed]
    assert not lost, f"{len(lost)} entries gone without a record removing them: {lost[:3]}"
    return dict(operations)


def rewinder(store: MemoryStore, stop: threading.Event, seed: int) -> Iterator[str]:
    """Undo, restore and put back, over and over, each against the file as it then is
    (each refusal a race lost to a writer, or a change a later write blocks): what it did."""
    rng = random.Random(seed)
    while not stop.is_set():
        records = store.history("MEMORY.md", limit=20)
        if not records:
            continue
        pick = rng.choice(records)
        action = rng.choice(["undo", "restore", "put back"])
        try:
            if action == "undo":
                history.undo(store, pick.id, YOU)
            elif action == "restore":
                history.restore(store, pick.id, YOU)
            else:
                archived = history.archived(store, "MEMORY.md")
                if not archived:
                    continue
                history.put_back(store, rng.choice(archived).id, YOU)
            yield action
        except MemoryConflict:
            yield f"{action}: lost the race"
        except (history.Refused, MemoryStoreError, ToolExecutionError) as exc:
            yield f"{action}: refused ({type(exc).__name__})"


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_undo_restore_and_put_back_racing_writer_threads_drop_no_write(workspace: Path) -> None:
    store = MemoryStore(workspace)
    store.add_entry("MEMORY.md", "- the first entry", by=YOU)
    store.add_entry("MEMORY.md", "- the second entry", by=AGENT)  # something to undo
    writers, per_writer = 3, scaled(60, 15)
    written: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()
    did: Counter[str] = Counter()
    failures: list[BaseException] = []

    rewound = threading.Event()  # writers begin once a rewind went through: they race it

    def write(w: int) -> None:
        try:
            assert rewound.wait(60), "no undo, restore or put-back went through in 60 s"
            for i in range(per_writer):
                entry = f"- writer {w} entry {i}"
                try:
                    MemoryStore(workspace).add_entry("MEMORY.md", entry, by=AGENT)
                except MemoryStoreError:  # over the cap: make room, as an agent would
                    MemoryStore(workspace).consolidate("MEMORY.md", "", by=AGENT)
                    continue
                with lock:
                    written.append(entry)
        except BaseException as exc:  # reported below, not lost in the thread
            failures.append(exc)

    def rewind() -> None:
        try:
            for action in rewinder(MemoryStore(workspace), stop, 41):
                did[action] += 1
                if ":" not in action:
                    rewound.set()
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    rewinders = [threading.Thread(target=rewind) for _ in range(2)]
    for t in threads + rewinders:
        t.start()
    for t in threads:
        t.join(300)
    stop.set()
    for t in rewinders:
        t.join(300)
    assert not failures, failures
    assert not any(t.is_alive() for t in threads + rewinders), "a thread never ended"
    operations = judge_race(workspace, written)
    assert sum(v for k, v in did.items() if ":" not in k) > 0, did
    report("history race, threads", writes=len(written), rewinds=dict(did), log=operations)


def process_writer(ws: str, w: int, n: int, out: str, after: tuple[Path, ...] = ()) -> None:
    """A writer process: `n` adds to MEMORY.md (once each file of `after` exists: the
    processes it races have begun); the entries it wrote, one a line, to `out`."""
    wait_for(after)
    store = MemoryStore(ws)
    done = []
    for i in range(n):
        entry = f"- process {w} entry {i}"
        try:
            result = store.add_entry("MEMORY.md", entry, by=AGENT)
        except MemoryStoreError:
            store.consolidate("MEMORY.md", "", by=AGENT)
            continue
        assert result.record_id is not None
        done.append(entry)
    Path(out).write_text("\n".join(done) + "\n")


def wait_for(paths: tuple[Path, ...], limit_s: float = 60) -> None:
    deadline = time.monotonic() + limit_s
    while not all(p.exists() for p in paths):
        if time.monotonic() > deadline:
            raise TimeoutError(f"none of {paths} appeared in {limit_s:g} s")
        time.sleep(0.005)


def forked(body: Callable[[], None]) -> int:
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            signal.alarm(300)
            body()
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
        finally:
            os._exit(code)
    return pid


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_two_processes_writing_at_once_both_get_records_that_chain(
    workspace: Path, tmp_path: Path
) -> None:
    MemoryStore(workspace).add_entry("MEMORY.md", "- start", by=YOU)
    n = scaled(80, 20)
    outs = [tmp_path / f"written-{w}" for w in range(2)]
    pids = [
        forked(functools.partial(process_writer, str(workspace), w, n, str(outs[w])))
        for w in range(2)
    ]
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    written = [line for out in outs for line in out.read_text().splitlines() if line]
    records = MemoryStore(workspace).history_oldest_first("MEMORY.md")
    added = entries_added(records)
    for entry in written:
        assert added[entry] == 1, f"{entry!r} recorded {added[entry]} times"
    operations = judge_race(workspace, written)
    report("history, two writer processes", writes=len(written), log=operations)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_rewinds_and_accepts_racing_writer_processes_drop_no_write(
    workspace: Path, tmp_path: Path
) -> None:
    """Writer processes add; another process undoes, restores and puts back; another stages
    agents' changes with review on and accepts them (a consolidation staged before a write
    is refused, and waits): the log chains, nothing is lost, no change is applied twice."""
    store = MemoryStore(workspace)
    store.add_entry("MEMORY.md", "- the first entry", by=YOU)
    store.set_review(True)
    n = scaled(50, 12)
    outs = [tmp_path / f"written-{w}" for w in range(2)]
    stop_file = tmp_path / "stop"
    tally = tmp_path / "tally"
    ready = (tmp_path / "rewinding", tmp_path / "accepting")

    def rewind() -> None:
        stop = threading.Event()

        def watch() -> None:
            wait_for((stop_file,), 300)
            stop.set()

        threading.Thread(target=watch, daemon=True).start()
        did: Counter[str] = Counter()
        for action in rewinder(MemoryStore(workspace), stop, 7):
            did[action] += 1
            ready[0].touch()
        tally.write_text(repr(dict(did)))

    def stage_and_accept() -> None:
        agent_store = MemoryStore(workspace)
        dispatcher = memory_dispatcher(agent_store)
        results: Counter[str] = Counter()
        i = 0
        while not stop_file.exists():
            i += 1
            if i == 2:
                ready[1].touch()
            try:
                if i % 3:
                    args = {"file": "MEMORY.md", "entry": f"- staged entry {i}"}
                    staged = dispatcher.dispatch("memory_add", args, by=AGENT)
                else:
                    lines = agent_store.read("MEMORY.md").splitlines(keepends=True)
                    kept = "".join(lines[len(lines) // 2 :])  # the newer half, whole lines
                    staged = dispatcher.dispatch(
                        "memory_consolidate",
                        {"file": "MEMORY.md", "content": kept + f"- kept {i}\n"},
                        by=AGENT,
                    )
            except ToolExecutionError as exc:  # checked as a write is: the file was full
                results[f"not staged: {exc.code}"] += 1
                continue
            assert staged.write is not None and staged.write.staged is not None
            try:
                review.accept(agent_store, staged.write.staged.id)
                results["accepted"] += 1
            except ToolExecutionError as exc:
                results[exc.code] += 1
                review.reject(agent_store, staged.write.staged.id)
        (tmp_path / "accepts").write_text(repr(dict(results)))

    others = [forked(rewind), forked(stage_and_accept)]
    writers = [
        forked(functools.partial(process_writer, str(workspace), w, n, str(outs[w]), ready))
        for w in range(2)
    ]
    for pid in writers:
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    stop_file.write_text("stop")
    for pid in others:
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status

    written = [line for out in outs for line in out.read_text().splitlines() if line]
    operations = judge_race(workspace, written)
    records = MemoryStore(workspace).history_oldest_first("MEMORY.md")
    accepted = [r for r in records if (r.detail or "").startswith("accepted after review")]
    ids = [r.detail for r in accepted]
    assert len(ids) == len(set(ids)), "a staged change was applied twice"
    assert MemoryStore(workspace).staged() == []  # each accepted or rejected
    report(
        "history race, processes",
        writes=len(written),
        log=operations,
        accepts=(tmp_path / "accepts").read_text(),
        rewinds=tally.read_text(),
    )


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_processes_making_the_log_at_once_lose_no_record(tmp_path: Path) -> None:
    """On a workspace with no log yet, one process turns review on (which makes the log,
    outside the writes' lock) while others write (each making it under that lock): one
    log results, with every write's record, sound."""
    rounds = scaled(30, 8)
    lost = 0
    for r in range(rounds):
        ws = tmp_path / f"ws-{r}"
        ws.mkdir()
        go = tmp_path / f"go-{r}"

        def write(w: int, ws: Path = ws, go: Path = go) -> None:
            wait_for((go,))
            store = MemoryStore(ws)
            for i in range(3):
                assert store.add_entry("USER.md", f"- {w}.{i}", by=YOU).record_id is not None

        def review_on(ws: Path = ws, go: Path = go) -> None:
            wait_for((go,))
            MemoryStore(ws).set_review(True)

        (ws / ".metis").mkdir()
        pids = [forked(functools.partial(write, w)) for w in range(2)] + [forked(review_on)]
        go.touch()
        for pid in pids:
            _, status = os.waitpid(pid, 0)
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"round {r}: {status}"
        store = MemoryStore(ws)
        records = store.history("USER.md", limit=None)
        lost += 6 - len(records)
        assert store.review_enabled(), f"round {r}: review is off"
        conn = sqlite3.connect(db(ws))
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        finally:
            conn.close()
    assert lost == 0, f"{lost} records lost in {rounds} rounds"
    report("history, processes making the log", rounds=rounds)
