"""Load: 16 writer processes x 200 operations (add, replace, consolidate) against one
workspace, through the Python API and the real CLI at once, while the language server
runs on the same workspace with MEMORY.md open in a client that also writes.

Afterwards the logs are replayed. The `memory.updated` hashes must form one chain, from
the file's first hash to its last, with no gap (a write based on a state nobody
produced) and no fork (two writes based on the same state: one update lost). Replaying
the acknowledged operations in chain order must reproduce every intermediate hash and
the final bytes exactly; each acknowledged add must be in the file exactly once unless
a later acknowledged replace or consolidate removed it; nothing rejected may be there;
no state may be over the hard cap.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from metis_memory import MemoryStore
from metis_memory.store.files import CAPS, MemoryFile
from support.memory_files import temp_files
from support.reliability import report, scaled, server_tracebacks
from support.rpc_client import LspServer, RpcError

WORKERS = scaled(16, 2)
OPERATIONS = scaled(200, 10)
CLI_EVERY = 20
"""Every 20th operation of each worker runs the real CLI (a new interpreter each time)."""
HARD = CAPS[MemoryFile.MEMORY].hard
WORKER = Path(__file__).with_name("load_worker.py")

ALLOWED_REJECTIONS = {
    "add": {"hard_cap_exceeded"},
    "replace": {"not_found", "hard_cap_exceeded"},
    "consolidate": set(),
}
LSP_REJECTIONS = {"unsaved_changes", "hard_cap_exceeded"}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Editor:
    """The client: keeps MEMORY.md open, reloads it when the disk changes (as an editor
    does for an unmodified file), asks for usage and hover, and adds entries itself."""

    server: LspServer
    memory: Path
    uri: str
    records: list[dict[str, Any]] = field(default_factory=list)
    answers: list[float] = field(default_factory=list)
    version: int = 1
    error: BaseException | None = None
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        try:
            n = 0
            while not self.stop.is_set():
                n += 1
                self.version += 1
                self.server.change_all(self.uri, self.memory.read_text("utf-8"), self.version)
                self.timed(lambda: self.server.command("metis.usage", {}))
                self.timed(lambda: self.server.hover(self.uri, 0, 0))
                if n % 2 == 0:
                    self.add(n)
        except BaseException as exc:  # surfaced by the test
            self.error = exc

    def timed(self, call: Any) -> Any:
        started = time.monotonic()
        result = call()
        self.answers.append(time.monotonic() - started)
        return result

    def add(self, n: int) -> None:
        token = f"lsp{n:05d}"
        line = f"- {token} written through the language server"
        tool_input = {"file": "MEMORY.md", "entry": line}
        try:
            result = self.timed(lambda: self.server.command("metis.memoryAdd", tool_input))
        except RpcError as exc:
            outcome, event = str(exc.tool_code), None
        else:
            outcome = "ack"
            event = {k: result[k] for k in ("before_hash", "after_hash", "after_size_bytes")}
        self.records.append(
            {
                "worker": "lsp",
                "i": n,
                "token": token,
                "via": "lsp",
                "op": "add",
                "input": tool_input,
                "outcome": outcome,
                "event": event,
            }
        )


def apply(text: str, record: dict[str, Any]) -> str:
    """One acknowledged operation, by the store's rules, on the file's text."""
    given = record["input"]
    if record["op"] == "add":
        joined = text if not text or text.endswith("\n") else text + "\n"
        return joined + str(given["entry"]) + "\n"
    if record["op"] == "replace":
        assert text.count(given["old"]) == 1, f"{record['token']}: target not unique on replay"
        return text.replace(str(given["old"]), str(given["new"]), 1)
    return str(given["content"])


def chain(initial: str, writes: list[dict[str, Any]], final: str) -> list[dict[str, Any]]:
    """The acknowledged writes in the order they happened, proved by their hashes."""
    befores = Counter(w["event"]["before_hash"] for w in writes)
    forks = {h: n for h, n in befores.items() if n > 1}
    assert not forks, f"fork: {len(forks)} states were the base of more than one write"
    afters = {w["event"]["after_hash"] for w in writes}
    assert len(afters) == len(writes), "two writes produced the same state"
    gaps = [w["token"] for w in writes if w["event"]["before_hash"] not in afters | {initial}]
    assert not gaps, f"gap: {len(gaps)} writes were based on a state no write produced: {gaps}"
    by_before = {w["event"]["before_hash"]: w for w in writes}
    order: list[dict[str, Any]] = []
    current = initial
    while current in by_before:
        order.append(by_before[current])
        current = order[-1]["event"]["after_hash"]
    assert len(order) == len(writes), (
        f"the chain from the first hash covers {len(order)} of {len(writes)} writes"
    )
    assert current == final, "the chain does not end at the file's final hash"
    return order


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_sixteen_writers_and_the_server_lose_nothing(
    workspace: Path, start_server: Any, tmp_path: Path
) -> None:
    memory = workspace / ".metis" / "MEMORY.md"
    MemoryStore(workspace).consolidate(MemoryFile.MEMORY, "# Load test\n")
    initial = memory.read_bytes()
    server = start_server(workspace)
    editor = Editor(server, memory, server.open(memory, initial.decode()))
    server.wait_for_note("metis/usageChanged", lambda p: True, "the first usage report")

    logs = [tmp_path / f"worker-{w:02d}.jsonl" for w in range(WORKERS)]
    workers = [
        subprocess.Popen(
            [
                *(sys.executable, str(WORKER), str(workspace), str(w), str(OPERATIONS)),
                *(str(CLI_EVERY), str(20260600 + w), str(logs[w])),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(WORKERS)
    ]
    thread = threading.Thread(target=editor.run, name="editor")
    started = time.monotonic()
    try:
        for proc in workers:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready", proc.stderr
        thread.start()
        for proc in workers:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in workers:
            _, err = proc.communicate(timeout=400)
            assert proc.returncode == 0, f"worker failed:\n{err}"
    finally:
        editor.stop.set()
        if thread.is_alive():
            thread.join(60)
        for proc in workers:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    elapsed = time.monotonic() - started
    assert editor.error is None, f"the editor client failed: {editor.error!r}"

    records = [json.loads(line) for log in logs for line in log.read_text().splitlines()]
    records += editor.records
    assert len(records) == WORKERS * OPERATIONS + len(editor.records)
    for r in records:
        if r["outcome"] != "ack":
            allowed = LSP_REJECTIONS if r["via"] == "lsp" else ALLOWED_REJECTIONS[r["op"]]
            assert r["outcome"] in allowed, f"unexpected {r['outcome']} for {r}"
    writes = [r for r in records if r["outcome"] == "ack"]
    final = memory.read_bytes()

    # One chain, replayed: every intermediate state and the final bytes are reproduced.
    order = chain(sha(initial), writes, sha(final))
    text = initial.decode()
    largest = len(initial)
    for w in order:
        text = apply(text, w)
        data = text.encode()
        assert sha(data) == w["event"]["after_hash"], f"replay diverged at {w['token']}"
        assert w["event"]["after_size_bytes"] == len(data) <= HARD
        largest = max(largest, len(data))
    assert text.encode() == final

    # The statement, entry by entry: the last acknowledged write touching an
    # added line decides whether it is there, and then it is there exactly once.
    added: set[str] = set()
    present: set[str] = set()
    for w in order:
        given = w["input"]
        if w["op"] == "add":
            added.add(given["entry"])
            present.add(given["entry"])
        elif w["op"] == "replace":
            present.discard(given["old"])
            added.add(given["new"])
            present.add(given["new"])
        else:
            present = added & set(given["content"].splitlines())
    lines = final.decode().splitlines()
    for line in added:
        assert lines.count(line) == (1 if line in present else 0), f"wrong count of {line!r}"
    final_text = final.decode()
    for r in records:
        if r["outcome"] != "ack":
            assert r["token"] + " " not in final_text, f"rejected {r['token']} is in the file"
    assert temp_files(workspace / ".metis") == []

    # The server kept serving, saw the final state, and logged no fault.
    assert server.alive()
    lsp_writes = [r for r in editor.records if r["outcome"] == "ack"]
    updated = server.notes("metis/memoryUpdated")
    assert sorted(n["after_hash"] for n in updated) == sorted(
        r["event"]["after_hash"] for r in lsp_writes
    ), "the server's memory.updated notifications differ from its acknowledged writes"
    editor.version += 1
    server.change_all(editor.uri, final_text, editor.version)
    usage = server.command("metis.usage", {})
    assert usage["MEMORY.md"]["size_bytes"] == len(final)
    assert server_tracebacks(server) == []

    counts = Counter((r["via"], r["outcome"]) for r in records)
    report(
        "load",
        workers=WORKERS,
        operations_each=OPERATIONS,
        attempted=len(records),
        acknowledged=len(writes),
        by_via={f"{v}:{o}": n for (v, o), n in sorted(counts.items())},
        ops={op: sum(1 for w in writes if w["op"] == op) for op in ALLOWED_REJECTIONS},
        largest_state_bytes=largest,
        lost=0,
        torn=0,
        server_answers=len(editor.answers),
        slowest_answer_s=round(max(editor.answers), 2),
        seconds=round(elapsed, 1),
    )
