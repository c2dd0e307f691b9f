"""The merge driver on a large memory file, run the way git runs it.

Git starts `merge.metis-memory.driver` as a process with three temporary files (the
ancestor, ours, theirs) and waits for it, so a slow merge stalls every `git pull`. The
case is a hard ordinary one: blank-line-separated entries, two in three changed by one
side or the other, so each side's change sits next to one of the other's (the old
difflib merge took 80 s here, and put theirs' addition first).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

COMMAND = [sys.executable, "-m", "metis_memory", "merge-driver"]
"""The driver as `tests/git` registers it (`init --command "<python> -m metis_memory"`)."""


def merge_case(entries: int) -> tuple[str, str, str, str]:
    """Base, ours, theirs and the expected merge of `entries` entries per side: ours
    edits every entry i with i % 3 == 0 and adds one at the end; theirs removes every
    i % 3 == 1 and adds another at the end. The last entry stays, so that both additions
    are at the same place (kept ours first)."""
    last = entries - 1
    base = [f"- Fact {i}: the build of module {i} runs under make." for i in range(entries)]
    ours = [f"{e} (ours)" if i % 3 == 0 and i < last else e for i, e in enumerate(base)]
    theirs = [e for i, e in enumerate(base) if i % 3 != 1 or i == last]
    merged = [e for i, e in enumerate(ours) if i % 3 != 1 or i == last]
    ours.append("- Added by ours.")
    theirs.append("- Added by theirs.")
    merged += ["- Added by ours.", "- Added by theirs."]

    def text(items: list[str]) -> str:
        return "# Memory\n\n" + "\n\n".join(items) + "\n"

    return text(base), text(ours), text(theirs), text(merged)


def merge_driver_seconds(tmp: Path, entries: int = 1500) -> float:
    """Seconds for one run of the driver process on `merge_case(entries)` in `tmp`,
    Python's start included (git pays it too). Raises if the merge is not the expected
    clean one: a fast wrong answer is no result."""
    base, ours, theirs, expected = merge_case(entries)
    files = [tmp / "merge-base.md", tmp / "merge-ours.md", tmp / "merge-theirs.md"]
    for file, text in zip(files, (base, ours, theirs), strict=True):
        file.write_text(text, encoding="utf-8")
    argv = [*COMMAND, *map(str, files), "--marker-size", "7", "--path", ".metis/MEMORY.md"]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    seconds = time.perf_counter() - started
    result = files[1].read_text(encoding="utf-8")
    if done.returncode != 0 or result != expected:
        raise RuntimeError(
            f"merge driver on {entries} entries per side: exit {done.returncode}, "
            f"{result.count('<<<<<<<')} conflict(s), result {'==' if result == expected else '!='}"
            f" expected; stderr: {done.stderr.strip()[:500]}. Run tests/git/test_merge_driver.py "
            "to find the fault before timing it."
        )
    return seconds


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as where:
        print(f"merge driver, 1,500 entries per side: {merge_driver_seconds(Path(where)):.3f} s")
