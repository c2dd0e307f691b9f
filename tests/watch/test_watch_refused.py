"""A watch the OS refuses (issue 39, item 10): the inotify limits are lowered for one child
process only, in a user namespace of its own (`unshare --user`: `/proc/sys/user/max_inotify_*`
there are that namespace's, so the machine's limits and every other process's watches are
untouched), and the real watchers run in it on a real filesystem. The refusal is logged once,
the memory files are polled meanwhile so outside writes are still seen, and the watch is
retried until the OS takes it.

The child is this file run as a script; it prints one JSON object: what it saw, or the step
it waited for in vain."""

from __future__ import annotations

import json
import logging
import os
import queue
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

WAIT_S = 10
"""Each step's bounded wait in the child."""
RECOVERY_WAIT_S = 40
"""The wait for a retried watch to be taken once the limit is raised: the retries back off to
one every 30 s."""
CANNOT_LOWER = 77
"""The child's exit status when it cannot have a user namespace of its own."""


def _run_child(*args: str) -> dict[str, Any]:
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("needs unshare(1) to lower the inotify limits for one process only")
    command = [unshare, "--user", "--map-root-user", sys.executable, __file__, *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode == CANNOT_LOWER or "unshare failed" in done.stderr:
        pytest.skip(f"no user namespace for the limits here: {done.stderr.strip()[-300:]}")
    assert done.stdout.strip(), f"the child said nothing (exit {done.returncode}): {done.stderr}"
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert "timeout" not in out, (
        f"timed out after {out.get('waited')} s waiting for {out['timeout']}; "
        f"seen: {out['steps']}; log: {out['log']}"
    )
    assert done.returncode == 0, done.stderr
    return out


def _warnings(out: dict[str, Any]) -> list[str]:
    return [message for level, message in out["log"] if level == "WARNING"]


def test_one_watch_short_memory_writes_are_polled_logged_once_and_retried(
    tmp_path: Path,
) -> None:
    """Room for one watch fewer than the `.metis/` watcher needs (the folder and `.metis/`):
    every outside write is still seen, one warning says why and what to do, and once the limit
    is raised the retried watch takes over."""
    (tmp_path / ".metis").mkdir()
    out = _run_child("memory", str(tmp_path), "watches=1")
    assert out["steps"] == MEMORY_STEPS
    (warning,) = _warnings(out)
    assert "limit" in warning and "max_user_watches" in warning, warning
    assert "polling MEMORY.md and USER.md" in warning, warning
    assert out["polling_after_recovery"] is False


def test_no_inotify_instance_at_all_memory_writes_are_still_seen(tmp_path: Path) -> None:
    """A different refusal: not one inotify instance left (`max_user_instances` 0), so the
    watcher cannot even start."""
    (tmp_path / ".metis").mkdir()
    out = _run_child("memory", str(tmp_path), "instances=0")
    assert out["steps"] == MEMORY_STEPS
    (warning,) = _warnings(out)
    assert "max_user_instances" in warning, warning
    assert out["polling_after_recovery"] is False


def test_referenced_paths_are_polled_while_their_watch_is_refused(tmp_path: Path) -> None:
    """The server's own watch on referenced paths (for editors that cannot watch): `src/x.go`
    needs `src/` and the folder watched; with room for one, its deletion is still seen."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "x.go").write_text("package x\n")
    out = _run_child("references", str(tmp_path), "watches=1")
    assert out["steps"] == ["first report", "src/x.go deleted", "src/x.go made again"]
    (warning,) = _warnings(out)
    assert "max_user_watches" in warning, warning


MEMORY_STEPS = [
    "first report",
    "MEMORY.md written",
    "USER.md written",
    ".metis/ removed",
    ".metis/ made again with MEMORY.md",
    "watching again",
    "MEMORY.md written through the watch",
]


# The child: run in its own user namespace by `_run_child`.


class _Child(logging.Handler):
    """The child's record: the steps seen, and the watch log's lines (INFO and up)."""

    def __init__(self, folder: Path) -> None:
        super().__init__(logging.INFO)
        self.folder = folder
        self.steps: list[str] = []
        self.log: list[tuple[str, str]] = []
        self.logged = threading.Condition()
        watch_log = logging.getLogger("metis_memory.watch")
        watch_log.addHandler(self)
        watch_log.setLevel(logging.INFO)

    def emit(self, record: logging.LogRecord) -> None:
        with self.logged:
            self.log.append((record.levelname, record.getMessage()))
            self.logged.notify_all()

    def fail(self, what: str, waited: float) -> None:
        report = {"timeout": what, "waited": waited, "steps": self.steps, "log": self.log}
        print(json.dumps(report), flush=True)
        os._exit(1)

    def expect(self, reports: queue.Queue[object], what: str) -> None:
        try:
            reports.get(timeout=WAIT_S)
        except queue.Empty:
            self.fail(what, WAIT_S)
        self.steps.append(what)

    def expect_log(self, text: str, what: str) -> None:
        with self.logged:
            if not self.logged.wait_for(
                lambda: any(text in m for _, m in self.log), timeout=RECOVERY_WAIT_S
            ):
                self.fail(what, RECOVERY_WAIT_S)
        self.steps.append(what)


def _drain(reports: queue.Queue[object]) -> None:
    while not reports.empty():
        reports.get_nowait()


def _write_at_once(path: Path, text: str) -> None:
    staged = path.with_name(f".{path.name}.staged")
    staged.write_text(text)
    staged.replace(path)


def _set_limits(limits: dict[str, int]) -> None:
    for name, value in limits.items():
        try:
            Path(f"/proc/sys/user/max_inotify_{name}").write_text(f"{value}\n")
        except OSError as exc:
            print(f"cannot set max_inotify_{name}: {exc}", file=sys.stderr)
            sys.exit(CANNOT_LOWER)


def _memory_child(folder: Path, limits: dict[str, int]) -> dict[str, Any]:
    from metis_memory.watch.memory_watcher import MemoryWatcher

    child = _Child(folder)
    reports: queue.Queue[object] = queue.Queue()
    _set_limits(limits)
    watcher = MemoryWatcher(reports.put)
    metis = folder / ".metis"
    try:
        watcher.set_folders([folder])
        child.expect(reports, "first report")
        for name in ("MEMORY.md", "USER.md"):
            _drain(reports)
            _write_at_once(metis / name, f"- written outside into {name}\n")
            child.expect(reports, f"{name} written")
        _drain(reports)
        shutil.rmtree(metis)
        child.expect(reports, ".metis/ removed")
        _drain(reports)
        metis.mkdir()
        _write_at_once(metis / "MEMORY.md", "- back\n")
        child.expect(reports, ".metis/ made again with MEMORY.md")
        _set_limits({name: 1024 for name in limits})
        child.expect_log("watching again", "watching again")
        polling = watcher.polling
        _drain(reports)
        _write_at_once(metis / "MEMORY.md", "- seen by the watch\n")
        child.expect(reports, "MEMORY.md written through the watch")
    finally:
        watcher.stop()
    return {"steps": child.steps, "log": child.log, "polling_after_recovery": polling}


def _references_child(folder: Path, limits: dict[str, int]) -> dict[str, Any]:
    from metis_memory.watch.reference_watcher import ReferenceWatcher

    child = _Child(folder)
    reports: queue.Queue[object] = queue.Queue()
    _set_limits(limits)
    watcher = ReferenceWatcher(lambda: reports.put(True))
    target = folder / "src" / "x.go"
    try:
        watcher.set_paths([(folder, target)])
        child.expect(reports, "first report")
        _drain(reports)
        target.unlink()
        child.expect(reports, "src/x.go deleted")
        _drain(reports)
        target.write_text("package x\n")
        child.expect(reports, "src/x.go made again")
    finally:
        watcher.stop()
    return {"steps": child.steps, "log": child.log}


def _child_main(mode: str, folder: str, limits_arg: str) -> None:
    limits = {k: int(v) for k, v in (item.split("=") for item in limits_arg.split(","))}
    run = _memory_child if mode == "memory" else _references_child
    print(json.dumps(run(Path(folder), limits)), flush=True)


if __name__ == "__main__":
    _child_main(*sys.argv[1:4])
