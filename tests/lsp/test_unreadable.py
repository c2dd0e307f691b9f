"""A memory file that cannot be read shows as unreadable, with the reason, in the usage the
server pushes and answers, and in `metis.read`: never as "0 B, within caps". Repairing it
brings the real numbers back without a restart."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from support.lsp_session import MetisClient
from support.memory_files import write_memory


def directory(path: Path) -> str:
    path.mkdir()
    return "it is a directory, not a regular file"


def fifo(path: Path) -> str:
    os.mkfifo(path)
    return "it is a FIFO, not a regular file"


def symlink_out(path: Path) -> str:
    outside = path.parents[2] / "outside.md"
    outside.write_text("- not ours\n", encoding="utf-8")
    path.symlink_to(outside)
    return "outside the workspace"


@pytest.mark.parametrize("breakage", [directory, fifo, symlink_out], ids=lambda f: f.__name__)
async def test_an_unreadable_file_is_reported_with_its_reason(
    client: MetisClient, tmp_path: Path, breakage: object
) -> None:
    ws = tmp_path / "ws"
    write_memory(ws, "MEMORY.md", "- a fact\n")
    user = ws / ".metis" / "USER.md"
    reason = breakage(user)  # type: ignore[operator]
    await client.start_session([ws])

    pushed = await client.wait_for_note(
        "metis/usageChanged", lambda p: "error" in p["usage"]["USER.md"]
    )
    assert reason in pushed["usage"]["USER.md"]["error"]
    assert "error" not in pushed["usage"]["MEMORY.md"]
    asked = await client.command("metis.usage", {})
    assert reason in asked["USER.md"]["error"]
    assert asked["MEMORY.md"]["size_bytes"] == 9
    read = await client.command("metis.read", {})
    assert reason in read["USER.md"]["error"] and read["USER.md"]["content"] == ""
    assert read["MEMORY.md"]["content"] == "- a fact\n"

    # Repaired: the real usage comes back on its own.
    if user.is_dir() and not user.is_symlink():
        shutil.rmtree(user)
    else:
        user.unlink()
    user.write_text("- likes tea\n", encoding="utf-8")
    repaired = await client.wait_for_note(
        "metis/usageChanged", lambda p: p["usage"]["USER.md"]["size_bytes"] == 12
    )
    assert "error" not in repaired["usage"]["USER.md"]
