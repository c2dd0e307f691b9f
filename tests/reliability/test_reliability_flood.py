"""A client typing 10,000 characters into MEMORY.md as fast as it can send them: the
server answers the hovers and `metis.usage` requests mixed into the stream, each with
the buffer as it was at that point of the stream, and its memory stays flat."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from metis_memory.store.files import CAPS, MemoryFile
from support.reliability import report, server_tracebacks

CHANGES = 10_000
"""Not scaled by METIS_RELIABILITY_SCALE: what is checked is that requests are answered while
the flood goes on, and a shorter flood ends before the backlog of queued changes (seconds at
full load) has drained, however well the server keeps up (at 2,500 a request sent 78% in was
answered 12 ms after the last change was sent)."""
PROBE_EVERY = 100
SERVED_DURING = 0.8
"""Every request sent in the first 80% of the flood is answered before the flood ends."""
RSS_GROWTH_BOUND_KIB = 8 * 1024
"""A leak of one small object per notification (pygls kept a ~2.3 KiB Future for
each) grows the server by over 20 MiB across the flood; typing 10 KB grows it by far
less than this bound."""
SIZE_ROW = re.compile(r"\| size \| ([\d,]+) \|")


def typed_text(n: int) -> str:
    """What the client types: short entries, one character per change."""
    return "".join(f"- note {i:05d} typed\n" for i in range(n // 19 + 1))[:n]


def hover_size(hover: Any) -> int:
    match = SIZE_ROW.search(hover["contents"]["value"])
    assert match, f"no size in hover {hover}"
    return int(match.group(1).replace(",", ""))


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_ten_thousand_changes_leave_the_server_answering_and_flat(
    workspace: Path, start_server: Any
) -> None:
    base = "# Memory\n" + "".join(f"- fact {i} about the build\n" for i in range(30))
    memory = workspace / ".metis" / "MEMORY.md"
    memory.parent.mkdir()
    memory.write_text(base, encoding="utf-8")
    server = start_server(workspace)
    uri = server.open(memory, base)
    server.wait_for_note(
        "metis/usageChanged",
        lambda p: p["usage"]["MEMORY.md"]["source"] == "buffer",
        "usage of the open buffer",
    )

    text = typed_text(CHANGES)
    line, column = base.count("\n"), 0
    probes: list[tuple[int, str, int]] = []  # (version, kind, request id)
    warmup = CHANGES // 10
    rss_after_warmup = 0
    started = time.monotonic()
    for index, char in enumerate(text):
        version = index + 2
        at = {"line": line, "character": column}
        server.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": at, "end": at}, "text": char}],
            },
        )
        line, column = (line + 1, 0) if char == "\n" else (line, column + 1)
        if version % PROBE_EVERY == 0:
            hover = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}
            probes.append((version, "hover", server.request_nowait("textDocument/hover", hover)))
        elif version % PROBE_EVERY == PROBE_EVERY // 2:
            usage = {"command": "metis.usage", "arguments": [{}]}
            rid = server.request_nowait("workspace/executeCommand", usage)
            probes.append((version, "usage", rid))
        if index + 1 == warmup:
            server.command("metis.usage", {}, timeout=60)  # everything so far is handled
            rss_after_warmup = server.rss_kib()
    flood_ended = time.monotonic()
    sent = flood_ended - started

    base_size = len(base.encode())
    final_size = base_size + len(text.encode())
    latencies = []
    for version, kind, rid in probes:
        response = server.response(rid, timeout=120)
        assert response.message is not None and "result" in response.message, response.message
        assert response.received_at is not None
        latencies.append(response.received_at - response.sent_at)
        if version <= SERVED_DURING * CHANGES:
            assert response.received_at < flood_ended, f"v{version} answered after the flood"
        size_then = base_size + version - 1  # one ASCII character per change
        if kind == "hover":
            assert hover_size(response.message["result"]) == size_then, f"hover at v{version}"
        else:
            size = response.message["result"]["MEMORY.md"]["size_bytes"]
            assert size_then <= size <= final_size, f"usage at v{version}: {size}"
    elapsed = time.monotonic() - started

    assert hover_size(server.hover(uri, 0, 0)) == final_size
    final_version = len(text) + 1
    server.wait_until(
        lambda: server.recorded.diagnostic_versions.get(uri) == final_version,
        "diagnostics for the last version",
        timeout=60,
    )
    caps = CAPS[MemoryFile.MEMORY]
    over = "over-hard-cap" if final_size > caps.hard else "over-soft-cap"
    assert server.codes_of(uri) == ([over] if final_size > caps.soft else [])
    rss_end = server.rss_kib()
    growth = rss_end - rss_after_warmup
    assert growth < RSS_GROWTH_BOUND_KIB, (
        f"the server grew by {growth:,} KiB over {CHANGES - warmup:,} changes"
    )
    assert server_tracebacks(server) == []
    assert server.shutdown() == 0

    report(
        "flood",
        changes=CHANGES,
        probes=len(probes),
        sent_s=round(sent, 1),
        handled_s=round(elapsed, 1),
        changes_per_s=round(CHANGES / elapsed),
        slowest_answer_s=round(max(latencies), 2),
        median_answer_s=round(sorted(latencies)[len(latencies) // 2], 2),
        rss_after_warmup_kib=rss_after_warmup,
        rss_end_kib=rss_end,
        rss_growth_kib=growth,
    )
