"""docs/benchmark.md's table, written from a run's results by `make bench`.

The committed page shows a full run that met every target: a run that missed one (a busy
machine, or a real slowdown) prints MISSED rows in its own output and leaves the page as it
was, so what a reader sees is never a failed run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

PAGE = Path(__file__).resolve().parent.parent / "docs" / "benchmark.md"
BEGIN = "<!-- bench-table: written by make bench (bench/page.py); edits here are replaced -->"
END = "<!-- /bench-table -->"


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def _verdict(row: dict[str, Any]) -> str:
    note = str(row.get("note") or "")
    if row.get("ok") is True:
        return f"ok — {note}" if note else "ok"
    return note


def table(results: dict[str, Any]) -> str:
    """The table as Markdown, headed by the machine it ran on."""
    machine = results.get("machine", {})
    when = f"{results['date']}, " if results.get("date") else ""
    lines = [
        f"Latest run ({when}{machine.get('cpus')} CPUs, Python {machine.get('python')}):",
        "",
        "| figure | ours | floor | ratio | target | |",
        "|---|---:|---:|---:|---|---|",
    ]
    for row in results["rows"]:
        ratio = row.get("ratio")
        cells = [
            f"{row['name']} ({row['unit']})",
            _number(row["ours"]),
            _number(row.get("floor")),
            "" if ratio is None else f"{ratio:.2f}×",
            str(row.get("target") or ""),
            _verdict(row),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def missed(results: dict[str, Any]) -> list[str]:
    return [str(row["name"]) for row in results["rows"] if row.get("ok") is False]


def updated(page: str, results: dict[str, Any]) -> str:
    """`page` with the text between its markers replaced by this run's table."""
    start, end = page.find(BEGIN), page.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the page has no {BEGIN!r} ... {END!r} markers to write between")
    return page[: start + len(BEGIN)] + "\n" + table(results) + page[end:]


def write(results: dict[str, Any], page: Path = PAGE) -> str:
    """Write this run's table into `page` when the run may stand for the project; say what
    was done either way (one line for the run's output)."""
    name = page.name
    if results.get("quick"):
        return f"{name} left as it was: a --quick run has too few samples to publish"
    if missed(results):
        return (
            f"{name} left as it was: {len(missed(results))} target(s) missed; "
            "the page shows a run that met every target"
        )
    page.write_text(updated(page.read_text(encoding="utf-8"), results), encoding="utf-8")
    return f"wrote the table of {name}"
