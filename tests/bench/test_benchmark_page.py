"""`make bench` writes docs/benchmark.md's table (bench/page.py) from a full run that met
every target; a run that missed one, or a --quick one, leaves the page as it was, so a MISSED
row is in the run's output and never on the page. Tested on fixtures: the bench itself needs
a quiet machine."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load_page() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_page", ROOT / "bench" / "page.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


page = load_page()


def results(*, ok: bool | None = True, quick: bool = False) -> dict[str, Any]:
    return {
        "date": "2026-11-27",
        "machine": {"cpus": 2, "python": "3.11.7", "platform": "Linux"},
        "quick": quick,
        "rows": [
            {
                "name": "start: spawn -> initialize result",
                "unit": "ms",
                "ours": 409.456,
                "floor": 372.0,
                "ratio": 1.1007,
                "target": "<= 1.3x",
                "ok": ok,
                "note": "",
            },
            {
                "name": "hook --host claude: session start (p50)",
                "unit": "ms",
                "ours": 61.632,
                "floor": 11.606,
                "ratio": 5.31,
                "target": "<= 6x",
                "ok": True,
                "note": "floor = python -c pass",
            },
            {
                "name": "keystroke p50, 1 MiB MEMORY.md (100)",
                "unit": "ms",
                "ours": 18.43,
                "floor": None,
                "ratio": None,
                "target": "",
                "ok": None,
                "note": "no target",
            },
        ],
    }


def fixture_page(tmp_path: Path) -> Path:
    path = tmp_path / "benchmark.md"
    text = f"# Benchmark\n\nHow it measures.\n\n{page.BEGIN}\nold table\n{page.END}\n\nRows.\n"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_run_that_met_every_target_rewrites_only_the_table(tmp_path: Path) -> None:
    path = fixture_page(tmp_path)
    said = page.write(results(), path)
    text = path.read_text(encoding="utf-8")
    assert said == "wrote the table of benchmark.md"
    assert text.startswith(f"# Benchmark\n\nHow it measures.\n\n{page.BEGIN}\n")
    assert text.endswith(f"{page.END}\n\nRows.\n")
    assert "old table" not in text
    assert "Latest run (2026-11-27, 2 CPUs, Python 3.11.7):" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows == [
        "| figure | ours | floor | ratio | target | |",
        "| start: spawn -> initialize result (ms) | 409.46 | 372.00 | 1.10× | <= 1.3x | ok |",
        "| hook --host claude: session start (p50) (ms) | 61.63 | 11.61 | 5.31× | <= 6x "
        "| ok — floor = python -c pass |",
        "| keystroke p50, 1 MiB MEMORY.md (100) (ms) | 18.43 |  |  |  | no target |",
    ]
    assert page.write(results(), path) == said  # a second run of the same figures
    assert path.read_text(encoding="utf-8") == text


def test_a_run_that_missed_a_target_leaves_the_page_and_says_so(tmp_path: Path) -> None:
    path = fixture_page(tmp_path)
    before = path.read_text(encoding="utf-8")
    said = page.write(results(ok=False), path)
    assert path.read_text(encoding="utf-8") == before
    assert "1 target(s) missed" in said and "left as it was" in said
    assert "MISSED" not in page.table(results())


def test_a_quick_run_leaves_the_page(tmp_path: Path) -> None:
    path = fixture_page(tmp_path)
    before = path.read_text(encoding="utf-8")
    assert "--quick" in page.write(results(quick=True), path)
    assert path.read_text(encoding="utf-8") == before


def test_a_page_without_the_markers_is_refused_with_their_text(tmp_path: Path) -> None:
    path = tmp_path / "benchmark.md"
    path.write_text("# Benchmark\n\nno markers\n", encoding="utf-8")
    with pytest.raises(ValueError, match="bench-table"):
        page.write(results(), path)
    assert path.read_text(encoding="utf-8") == "# Benchmark\n\nno markers\n"


def test_the_committed_page_has_the_markers_and_a_table_of_met_targets() -> None:
    text = (ROOT / "docs" / "benchmark.md").read_text(encoding="utf-8")
    start, end = text.index(page.BEGIN), text.index(page.END)
    table = text[start:end]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) > 10
    assert "MISSED" not in text
