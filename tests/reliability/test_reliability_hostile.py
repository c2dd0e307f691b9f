"""Hostile workspaces, through the language server and the CLI.

A `.metis/` or memory file that is a symlink to outside the workspace is never read or
written: every command gets `unsafe_path` and nothing outside changes. A memory file that
is not UTF-8, starts with a byte-order mark, has CRLF line ends, or is 50 MB gets correct,
bounded diagnostics, and no write destroys a byte it did not mean to change.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from metis_memory.store.fingerprint import READ_LIMIT_BYTES
from support.lsp_values import file_uri, span
from support.reliability import report, server_tracebacks
from support.rpc_client import LspServer
from support.trees import tree

WRITES: list[tuple[str, dict[str, str]]] = [
    ("metis.memoryAdd", {"entry": "- leaked?"}),
    ("metis.memoryReplace", {"old": "outside", "new": "pwned"}),
    ("metis.memoryConsolidate", {"content": "- pwned\n"}),
]


def diagnostic(server: LspServer, path: Path, code: str) -> dict[str, Any]:
    found = [d for d in server.recorded.diagnostics[file_uri(path)] if d["code"] == code]
    assert len(found) == 1, found
    return found[0]


# ---- symlinks out of the workspace ------------------------------------------------------------


@pytest.mark.parametrize("link", [".metis", "MEMORY.md"])
def test_symlinks_out_of_the_workspace_are_never_followed(
    tmp_path: Path, workspace: Path, start_server: Any, link: str
) -> None:
    outside = tmp_path / "outside"
    (outside / "metis").mkdir(parents=True)
    (outside / "metis" / "MEMORY.md").write_text("- outside secret\n- outside secret\n")
    (outside / "MEMORY.md").write_text("- outside secret\n- outside secret\n")
    if link == ".metis":
        (workspace / ".metis").symlink_to(outside / "metis", target_is_directory=True)
    else:
        (workspace / ".metis").mkdir()
        (workspace / ".metis" / "MEMORY.md").symlink_to(outside / "MEMORY.md")
    before_outside, before_ws = tree(outside), tree(workspace)

    server: LspServer = start_server(workspace)
    server.wait_for_note(
        "window/logMessage",
        lambda p: "outside the workspace" in p["message"] and "MEMORY.md" in p["message"],
        "the server's report that it will not read MEMORY.md",
    )
    memory = workspace / ".metis" / "MEMORY.md"
    assert server.codes_of(file_uri(memory)) == [], "diagnostics of a file it must not read"
    for command, args in WRITES:
        error = server.command_error(command, {"file": "MEMORY.md", **args})
        assert error.tool_code == "unsafe_path", (command, error.message)
        assert "outside the workspace" in error.message
    assert server.command_error("metis.tidy", {"file": "MEMORY.md"}).tool_code == "unsafe_path"
    # Usage and read report it as unreadable, with the reason, and read none of it.
    for command in ("metis.usage", "metis.read"):
        entry = server.command(command, {})["MEMORY.md"]
        assert "outside the workspace" in entry["error"], (command, entry)
        assert entry.get("content", "") == "" and entry["size_bytes"] == 0
    # Opened in the editor, it still cannot be written through the server.
    server.open(memory, "- outside secret\n- outside secret\n")
    error = server.command_error("metis.memoryAdd", {"file": "MEMORY.md", "entry": "- leak"})
    assert error.tool_code == "unsafe_path"
    cli = subprocess.run(
        [sys.executable, "-m", "metis_memory", "add", "-w", str(workspace), "MEMORY.md", "- leak"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert cli.returncode == 1 and "outside the workspace" in cli.stderr
    assert tree(outside) == before_outside, "something outside the workspace changed"
    assert tree(workspace) == before_ws
    assert server.alive() and server_tracebacks(server) == []


# ---- bytes the editor does not show -------------------------------------------------------------


def test_a_file_that_is_not_utf8_is_reported_and_never_half_edited(
    workspace: Path, start_server: Any
) -> None:
    memory = workspace / ".metis" / "MEMORY.md"
    memory.parent.mkdir()
    original = b"# Memory\n- caf\xe9 au lait\n- builds with make\n"  # Latin-1
    memory.write_bytes(original)
    server: LspServer = start_server(workspace)
    server.wait_for_codes(memory, ["not-utf8"])
    assert span(diagnostic(server, memory, "not-utf8")["range"]) == ((1, 5), (1, 6))
    for command, args in (
        ("metis.memoryAdd", {"file": "MEMORY.md", "entry": "- x"}),
        ("metis.memoryReplace", {"file": "MEMORY.md", "old": "make", "new": "cmake"}),
        ("metis.tidy", {"file": "MEMORY.md"}),
    ):
        assert server.command_error(command, args).tool_code == "not_utf8", command
    # As the editor shows it (U+FFFD for the bad byte), with nothing unsaved.
    uri = server.open(memory, original.decode("utf-8", errors="replace"))
    error = server.command_error("metis.memoryAdd", {"file": "MEMORY.md", "entry": "- x"})
    assert error.tool_code == "not_utf8"
    assert memory.read_bytes() == original
    server.close(uri)
    # Consolidating replaces the whole file: the deliberate way out.
    server.command("metis.memoryConsolidate", {"file": "MEMORY.md", "content": "- café\n"})
    assert memory.read_bytes() == "- café\n".encode()
    server.wait_for_codes(memory, [])
    assert server_tracebacks(server) == []


def test_a_byte_order_mark_is_kept_and_not_taken_for_text(
    workspace: Path, start_server: Any
) -> None:
    memory = workspace / ".metis" / "MEMORY.md"
    memory.parent.mkdir()
    bom = b"\xef\xbb\xbf"
    original = bom + b"- builds with make\n- Builds with make\n- uses ruff\n"
    memory.write_bytes(original)
    server: LspServer = start_server(workspace)
    # The entry right after the mark is an entry, and positions are the editor's (no mark).
    server.wait_for_codes(memory, ["duplicate-entry"])
    duplicate = diagnostic(server, memory, "duplicate-entry")
    assert span(duplicate["range"]) == ((1, 0), (1, 18))
    first = duplicate["relatedInformation"][0]["location"]
    assert span(first["range"]) == ((0, 0), (0, 18))

    server.command("metis.memoryReplace", {"file": "MEMORY.md", "old": "ruff", "new": "ruff 0.6"})
    assert memory.read_bytes() == original.replace(b"ruff", b"ruff 0.6")
    # Open as an editor opens it: the mark is not in the buffer; that is not an edit.
    text = memory.read_bytes()[3:].decode()
    server.open(memory, text)
    server.command("metis.memoryAdd", {"file": "MEMORY.md", "entry": "- tabs"})
    assert memory.read_bytes() == original.replace(b"ruff", b"ruff 0.6") + b"- tabs\n"
    assert server_tracebacks(server) == []


def test_crlf_line_ends_are_kept_byte_for_byte(workspace: Path, start_server: Any) -> None:
    memory = workspace / ".metis" / "MEMORY.md"
    memory.parent.mkdir()
    original = b"# Memory\r\n- builds with make\r\n- Builds with make\r\n- uses ruff\r\n"
    memory.write_bytes(original)
    server: LspServer = start_server(workspace)
    server.wait_for_codes(memory, ["duplicate-entry"])
    assert span(diagnostic(server, memory, "duplicate-entry")["range"]) == ((2, 0), (2, 18))

    replaced = original.replace(b"uses ruff", b"uses ruff and mypy")
    server.command(
        "metis.memoryReplace",
        {"file": "MEMORY.md", "old": "uses ruff", "new": "uses ruff and mypy"},
    )
    assert memory.read_bytes() == replaced
    server.command("metis.memoryAdd", {"file": "MEMORY.md", "entry": "- one\n- two"})
    added = replaced + b"- one\r\n- two\r\n"
    assert memory.read_bytes() == added
    # Open in the editor (which keeps CRLF in the buffer): writes still go through.
    server.open(memory, added.decode())
    server.command("metis.memoryReplace", {"file": "MEMORY.md", "old": "- one", "new": "- 1"})
    assert memory.read_bytes() == added.replace(b"- one", b"- 1")
    assert server_tracebacks(server) == []


# ---- 50 MB ------------------------------------------------------------------------------------

BIG = 50 * 1024 * 1024
BIG_BOUND_S = 120.0
"""A bound for a loaded two-core machine; the point is that it ends."""
RSS_BOUND_KIB = 256 * 1024
"""The store refuses to read a file past READ_LIMIT_BYTES: the server never holds it (it held
~1 GB when it read and parsed all 50 MB)."""


def test_a_fifty_megabyte_file_gets_one_bounded_diagnostic_and_loses_nothing(
    workspace: Path, start_server: Any
) -> None:
    memory = workspace / ".metis" / "MEMORY.md"
    memory.parent.mkdir()
    token = "ghp_" + "a1B2c3D4" * 4 + "e5F6"
    line = "- entry {n:05d} builds with make, token " + token + "\n"
    with memory.open("w", encoding="utf-8") as out:
        written, n = 0, 0
        while written < BIG:  # 100,000 distinct entries, each repeated: duplicates galore
            chunk = line.format(n=n % 100_000)
            out.write(chunk)
            written += len(chunk)
            n += 1
    digest = hashlib.sha256(memory.read_bytes()).hexdigest()
    size = memory.stat().st_size

    server: LspServer = start_server(workspace)
    started = time.monotonic()
    server.wait_for_codes(memory, ["over-hard-cap"], timeout=BIG_BOUND_S)
    took = time.monotonic() - started
    over = diagnostic(server, memory, "over-hard-cap")
    assert f"MEMORY.md is {size:,} B" in over["message"]
    # Past the store's read limit nothing is read: the diagnostic sits at the file's start.
    assert size > READ_LIMIT_BYTES
    assert over["range"]["start"] == {"line": 0, "character": 0}
    assert server.command("metis.usage", {})["MEMORY.md"]["size_bytes"] == size
    error = server.command_error("metis.assemblePrompt", {"base": "b"})
    assert error.tool_code == "hard_cap_exceeded", error.message
    assert f"MEMORY.md is {size:,} B, far past its hard cap" in error.message
    read = server.command("metis.read", {})["MEMORY.md"]  # the size, and why no content
    assert read["size_bytes"] == size and read["content"] == ""
    assert f"MEMORY.md is {size:,} B, far past its hard cap" in read["error"]

    for command, args in (
        ("metis.memoryAdd", {"entry": "- one more"}),
        ("metis.memoryReplace", {"old": "entry 00000 builds", "new": "x"}),
    ):
        error = server.command_error(command, {"file": "MEMORY.md", **args}, timeout=120)
        assert error.tool_code in ("hard_cap_exceeded", "not_unique"), error.message
    assert hashlib.sha256(memory.read_bytes()).hexdigest() == digest
    rss = server.rss_kib()
    assert rss < RSS_BOUND_KIB, f"the server holds {rss:,} KiB for a {size:,} B file"
    server.command("metis.memoryConsolidate", {"file": "MEMORY.md", "content": "- small\n"})
    server.wait_for_codes(memory, [])
    assert memory.read_bytes() == b"- small\n"
    assert server.alive() and server_tracebacks(server) == []
    report(
        "50MB",
        size_bytes=size,
        diagnostics_published=1,
        first_diagnostics_s=round(took, 1),
        server_rss_mib=rss // 1024,
        bytes_changed_by_refused_writes=0,
    )
