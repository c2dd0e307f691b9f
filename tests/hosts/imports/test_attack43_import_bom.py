"""Attack on `metis-memory import` (issue 43): a memory file saved with a byte-order mark (as
Windows' Notepad saves UTF-8) and CRLF line endings. Its first entry, behind the mark, was not
seen as already there, so the host's copy of it was proposed and written a second time."""

from __future__ import annotations

from metis_memory import MemoryStore
from support.host_memory import Machine


def test_the_first_entry_behind_a_byte_order_mark_is_a_duplicate(machine: Machine) -> None:
    folder = machine.user_memory.parent
    folder.mkdir(mode=0o700)
    machine.user_memory.write_bytes(
        b"\xef\xbb\xbf- Answer in British English\r\n- I review diffs in unified form\r\n"
    )
    machine.user_memory.chmod(0o600)
    metis = machine.workspace / ".metis"
    metis.mkdir()
    (metis / "MEMORY.md").write_bytes(b"\xef\xbb\xbf- The build uses make\n")
    claude = machine.home / ".claude"
    claude.mkdir()
    (claude / "CLAUDE.md").write_text(
        "- Answer in British English\n- I review diffs in unified form\n- The build uses make\n"
        "- Prefer ripgrep over grep\n"
    )

    run = machine.run("import", "--from", "claude", "--yes")

    assert run.returncode == 0, run.stderr
    assert "Left out, already in your user memory: - Answer in British English" in run.stdout
    assert "Left out, already in MEMORY.md: - The build uses make" in run.stdout
    assert machine.user_memory.read_bytes() == (
        b"\xef\xbb\xbf- Answer in British English\r\n- I review diffs in unified form\r\n"
        b"- Prefer ripgrep over grep\r\n"
    )
    assert (metis / "MEMORY.md").read_bytes() == b"\xef\xbb\xbf- The build uses make\n"
    assert MemoryStore(machine.workspace).history("MEMORY.md") == []
