"""`metis-memory consolidate` with the file's own content: it says nothing changed and, over
the soft cap, that the shortening is still to do, not "Consolidated X: N B → N B"."""

from __future__ import annotations

from pathlib import Path

from support.cli import Runner
from support.memory_files import memory_path, write_memory


def test_the_same_content_over_the_soft_cap_says_what_is_left_to_do(
    cli: Runner, workspace: Path
) -> None:
    content = b"".join(b"- fact %d: " % i + b"y" * 90 + b"\n" for i in range(25))
    write_memory(workspace, "MEMORY.md", content)
    result = cli("consolidate", "MEMORY.md", "--content", content.decode())
    assert result.returncode == 0, result.stderr
    size, over = f"{len(content):,} B", f"{len(content) - 2048:,} B"
    assert result.stdout.strip() == (
        f"MEMORY.md is unchanged: the new content is the same as the file ({size}; soft cap "
        f"2,048 B, hard cap 4,096 B), {over} over the soft cap: merge, shorten or drop entries "
        "in the new content, then run consolidate again."
    )
    assert memory_path(workspace, "MEMORY.md").read_bytes() == content


def test_empty_content_for_a_missing_file_is_not_called_unchanged(
    cli: Runner, workspace: Path
) -> None:
    # The write creates USER.md: "unchanged" would be wrong, whatever the two hashes say.
    result = cli("consolidate", "USER.md", "--content", "")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "Consolidated USER.md: 0 B → 0 B (soft cap 1,536 B, hard cap 3,072 B)."
    )
    assert memory_path(workspace, "USER.md").read_bytes() == b""
