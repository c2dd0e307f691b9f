"""When all a host keeps is a file that is not read (a symlink leading out of its folder), the
import does not say it found nothing and then name what it did not read: it says nothing could
be read, and the line below names what and why."""

from __future__ import annotations

from pathlib import Path

from support.host_memory import Machine


def test_only_an_unread_file_is_said_so(machine: Machine, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.md").write_text("- Answers in British English.\n")
    claude = machine.home / ".claude"
    claude.mkdir(parents=True, exist_ok=True)
    (claude / "CLAUDE.md").symlink_to(outside / "notes.md")

    run = machine.run("import", "--from", "claude", "--dry-run")

    assert run.returncode == 0, run.stderr
    said = run.stdout + run.stderr
    assert "No memory of claude found" not in said
    assert "No memory of claude could be read for" in said
    assert "what was there but not read follows" in said
    assert "Not read: ~/.claude/CLAUDE.md: it is reached through a symlink leading out of" in said
    assert "British English" not in said
