"""Helpers shared by the reliability tests (imported by name; fixtures live in conftest.py).

`METIS_RELIABILITY_SCALE` (default 1) multiplies the load figures: the defaults are the
issue's (16 writers x 200 operations, 500 kills; the 10,000 didChange of the flood are never
scaled); `make test` runs 0.25, `make test-reliability` 1. Each test prints the figures it
ran with and what it measured (`pytest -s tests/reliability`).
"""

from __future__ import annotations

import json
import os

from support.rpc_client import LspServer

SCALE = float(os.environ.get("METIS_RELIABILITY_SCALE", "1"))


def scaled(n: int, minimum: int = 1) -> int:
    """`n` times the scale, never below `minimum`."""
    return max(minimum, round(n * SCALE))


def report(name: str, **figures: object) -> None:
    """Print one test's figures on a line of their own (shown with `pytest -s`), and
    append them as JSON to `$METIS_RELIABILITY_FIGURES` when that is set."""
    shown = ", ".join(f"{k}={v}" for k, v in figures.items())
    print(f"\n[reliability] {name}: {shown}")
    out = os.environ.get("METIS_RELIABILITY_FIGURES")
    if out:
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"test": name, **figures}, default=str) + "\n")


def server_tracebacks(server: LspServer) -> list[str]:
    """Tracebacks the server logged: each is a fault the test did not ask for."""
    text = server.stderr_text()
    return [chunk[:2000] for chunk in text.split("Traceback (most recent call last)")[1:]]
