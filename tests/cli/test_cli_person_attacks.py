"""`metis-memory`'s texts for people attacked: a memory file already over its hard cap
(written by hand, or by an older version), where a replace that shrinks it cannot be made
to fit by shortening its new text."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.cli import Runner
from support.memory_files import write_memory

OVER = "# Mem\n\n" + "".join(f"- entry {i:04d} {'x' * 80}\n" for i in range(55))
"""5,177 B: past the 4,096 B hard cap."""


def test_a_replace_in_a_file_already_over_the_hard_cap_asks_for_room_not_shorter_text(
    cli: Runner, workspace: Path
) -> None:
    path = write_memory(workspace, "MEMORY.md", OVER)
    assert len(OVER.encode()) == 5177
    result = cli("replace", "MEMORY.md", "- entry 0001", "- new")
    assert result.returncode == 1
    assert result.stderr == (
        "metis-memory: Not replaced: MEMORY.md is 5,177 B already, 1,081 B over its 4,096 B "
        "hard cap, and would still be 5,170 B after this replace. Nothing was written. Make "
        "room first: bring .metis/MEMORY.md to at most 4,096 B (under the 2,048 B soft cap is "
        "better): edit it, or write a shorter version with `metis-memory consolidate MEMORY.md "
        "--from FILE`, then run the replace again.\n"
    )
    assert path.read_text() == OVER
    # One that grows it: the room is what it grows by, below the hard cap.
    grows = cli("replace", "MEMORY.md", "- entry 0001", "- entry 0001 and ten more")
    assert grows.returncode == 1
    assert "would still be 5,190 B after this replace" in grows.stderr
    assert "bring .metis/MEMORY.md to at most 4,083 B" in grows.stderr
    assert "new text at least" not in grows.stderr


def test_a_replace_that_alone_crosses_the_hard_cap_asks_for_shorter_text(
    cli: Runner, workspace: Path
) -> None:
    """The file fits now: the new text is what pushes it over, by less than its length."""
    text = "# Mem\n\n- a short one\n" + "m" * 4050 + "\n"
    write_memory(workspace, "MEMORY.md", text)
    result = cli("replace", "MEMORY.md", "- a short one", "- a short one, " + "y" * 60)
    assert result.returncode == 1
    over = len(text.encode()) + 62 - 4096
    assert f"Make the new text at least {over} B shorter, or make room first" in result.stderr


def test_a_from_file_that_is_not_utf8_or_missing_is_said_in_words(
    cli: Runner, workspace: Path
) -> None:
    write_memory(workspace, "MEMORY.md", "# Mem\n- a\n")
    (workspace / "bad.txt").write_bytes(b"- \xff\xfe bad\n")
    result = cli("consolidate", "MEMORY.md", "--from", "bad.txt")
    assert (result.returncode, result.stderr) == (
        2,
        "metis-memory: cannot read --from 'bad.txt': it is not UTF-8 (its first bad byte is at "
        "offset 2). Nothing was written: save it as UTF-8 and run consolidate again.\n",
    )
    missing = cli("consolidate", "MEMORY.md", "--from", "nowhere.txt")
    assert (missing.returncode, missing.stderr) == (
        2,
        "metis-memory: cannot read --from 'nowhere.txt': No such file or directory. Nothing was "
        "written.\n",
    )


def test_an_argument_holding_bytes_that_are_not_utf8_is_said_in_words(
    workspace: Path, home: Path
) -> None:
    """A shell passes bytes: ones that are not UTF-8 reach Python as lone surrogates, which
    the tools' schema refused in its own words ("unable to parse raw data")."""
    write_memory(workspace, "MEMORY.md", "# Mem\n- a\n")
    for args in (
        [b"add", b"MEMORY.md", b"- caf\xe9 au lait"],
        [b"replace", b"MEMORY.md", b"- a", b"- caf\xe9"],
    ):
        result = subprocess.run(
            [os.fsencode(Path(sys.executable).parent / "metis-memory"), *args],
            cwd=workspace,
            env={**os.environ, "HOME": str(home), "LC_ALL": "C.UTF-8"},
            capture_output=True,
            timeout=60,
            check=False,
        )
        what = "entry" if args[0] == b"add" else "new text"
        assert (result.returncode, result.stderr.decode()) == (
            2,
            f"metis-memory: the {what} is not UTF-8 text (its byte 0xe9, at character "
            "6): nothing was written. Give it in UTF-8 (check the "
            "encoding of your terminal or script).\n",
        )
    piped = subprocess.run(
        [
            os.fsencode(Path(sys.executable).parent / "metis-memory"),
            b"consolidate",
            b"MEMORY.md",
            b"-",
        ],
        cwd=workspace,
        env={**os.environ, "HOME": str(home), "LC_ALL": "C.UTF-8"},
        input=b"- na\xefve\n",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert (piped.returncode, piped.stderr.decode()) == (
        2,
        "metis-memory: the content is not UTF-8 text (its byte 0xef, at character 5): nothing "
        "was written. Give it in UTF-8 (check the encoding of your terminal or script).\n",
    )
    assert (workspace / ".metis" / "MEMORY.md").read_text() == "# Mem\n- a\n"
