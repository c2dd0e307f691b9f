"""Types the agent-host tests share."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

Hook = Callable[..., subprocess.CompletedProcess[str]]
"""`hook(*args, payload=..., env=..., cwd=...)`: the real `metis-memory hook`, finished."""
