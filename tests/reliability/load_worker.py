"""One writer of the load test: a process doing a seeded mix of add, replace and
consolidate against one workspace, through the Python API (the tool dispatcher, with
an EventSink) and, for every CLI_EVERY-th operation, through the real CLI
(`python -m metis_memory ... --json`).

Every attempt is logged as one JSON line: what was asked, whether it was
acknowledged, and for an acknowledged write its `memory.updated` payload (from the
sink for the API, from `--json` for the CLI). The test replays the logs.

Entries are lines `- <token> <padding>` whose token (`w07o123`) is unique to the
operation that wrote it, so every outcome is checkable: a replace swaps one of this
worker's lines for a new one, a consolidate keeps a known set (a header naming the
operation, then this worker's last few lines).

Usage: load_worker.py WORKSPACE WORKER OPERATIONS CLI_EVERY SEED LOG
It prints "ready" and waits for a line on stdin so all workers start together.
"""

from __future__ import annotations

import json
import random
import string
import subprocess
import sys
import time
from typing import Any

from metis_memory import EventSink, MemoryStore, MemoryUpdated
from metis_memory.store.events import MemoryEvent
from metis_memory.store.files import CAPS, MemoryFile
from metis_memory.tools import ToolExecutionError, memory_dispatcher

FILE = "MEMORY.md"
SOFT = CAPS[MemoryFile.MEMORY].soft
KEEP = 3


def line_for(token: str, rng: random.Random) -> str:
    pad = "".join(rng.choices(string.ascii_lowercase, k=rng.randint(20, 200)))
    return f"- {token} {pad}"


def main() -> None:
    workspace, worker, operations, cli_every, seed, log_path = sys.argv[1:7]
    w, n, every = int(worker), int(operations), int(cli_every)
    rng = random.Random(int(seed))
    store = MemoryStore(workspace)
    sink = EventSink()
    events: list[MemoryEvent] = []
    sink.subscribe(events.append)
    dispatcher = memory_dispatcher(store, sink)
    live: list[str] = []  # this worker's lines it believes are in the file
    last_size = 0
    refused_at_cap = False

    print("ready", flush=True)
    sys.stdin.readline()
    with open(log_path, "w", encoding="utf-8") as log:
        for i in range(n):
            token = f"w{w:02d}o{i:03d}"
            # Like a lazy agent: consolidate now and then, more often over the soft cap,
            # nearly always right after the hard cap refused a write, so the file keeps
            # running into the hard cap while several writers race for the last bytes.
            roll = rng.random()
            if (refused_at_cap and roll < 0.8) or (last_size > SOFT and roll < 0.1):
                op = "consolidate"
            elif not live or roll < 0.72:
                op = "add"
            elif roll < 0.96:
                op = "replace"
            else:
                op = "consolidate"
            target: str | None = None
            keep: list[str] = []
            if op == "add":
                tool, line = "memory_add", line_for(token, rng)
                tool_input: dict[str, str] = {"file": FILE, "entry": line}
            elif op == "replace":
                target = rng.choice(live)
                tool, line = "memory_replace", line_for(token, rng)
                tool_input = {"file": FILE, "old": target, "new": line}
            else:
                keep = live[-KEEP:]
                line = f"# consolidated by {token}"
                content = "".join(f"{x}\n" for x in [line, *keep])
                tool, tool_input = "memory_consolidate", {"file": FILE, "content": content}

            via = "cli" if every and i % every == every - 1 else "api"
            started = time.monotonic()
            if via == "api":
                outcome, event = run_api(dispatcher, events, tool, tool_input)
            else:
                outcome, event = run_cli(workspace, tool, tool_input)
            record: dict[str, Any] = {
                "worker": w,
                "i": i,
                "token": token,
                "via": via,
                "op": op,
                "input": tool_input,
                "outcome": outcome,
                "event": event,
                "seconds": round(time.monotonic() - started, 4),
            }
            log.write(json.dumps(record) + "\n")
            log.flush()

            refused_at_cap = outcome == "hard_cap_exceeded"
            if outcome == "ack":
                assert event is not None
                last_size = int(event["after_size_bytes"])
                if op == "add":
                    live.append(line)
                elif op == "replace":
                    assert target is not None
                    live.remove(target)
                    live.append(line)
                else:
                    live = list(keep)
            elif op == "replace" and outcome == "not_found":
                assert target is not None
                live.remove(target)  # another worker's consolidate dropped it


def run_api(
    dispatcher: Any, events: list[MemoryEvent], tool: str, tool_input: dict[str, str]
) -> tuple[str, dict[str, Any] | None]:
    events.clear()
    try:
        result = dispatcher.dispatch(tool, tool_input)
    except ToolExecutionError as exc:
        assert not events, "a failed write emitted an event"
        return exc.code, None
    updated = [e for e in events if isinstance(e, MemoryUpdated)]
    assert len(updated) == 1, f"expected one memory.updated, got {events}"
    payload = updated[0].payload()
    assert payload["after_hash"] == result.write.after_hash
    return "ack", payload


def run_cli(workspace: str, tool: str, tool_input: dict[str, str]) -> tuple[str, Any]:
    command = tool.removeprefix("memory_")
    if command == "add":
        args = [tool_input["entry"]]
    elif command == "replace":
        args = [tool_input["old"], tool_input["new"]]
    else:
        args = ["--content", tool_input["content"]]
    proc = subprocess.run(
        [sys.executable, "-m", "metis_memory", command, "-w", workspace, "--json", FILE, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode in (0, 1), f"CLI exited {proc.returncode}: {proc.stderr}"
    reply = json.loads(proc.stdout)
    if proc.returncode == 1:
        return str(reply["error"]["code"]), None
    # (The spec's fields: `scope` is said only of the user memory's writes, store/events.py.)
    event = {k: reply[k] for k in MemoryUpdated.model_fields if k not in ("event_type", "scope")}
    return "ack", event


if __name__ == "__main__":
    main()
