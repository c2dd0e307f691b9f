"""The type of the `cli` fixtures: run `metis-memory ARGS...` and get the finished process."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

Runner = Callable[..., subprocess.CompletedProcess[str]]
