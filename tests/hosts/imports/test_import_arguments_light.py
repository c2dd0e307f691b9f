"""The CLI's parser (built by every run: `metis-memory lsp`, `mcp`) loads none of the import's
readers: they cost the language server 10 MiB it never used (bench: RSS after the keystroke
run went from 52.9 to 62.6 MiB)."""

from __future__ import annotations

import subprocess
import sys

from metis_memory.hosts.import_arguments import ALL_HOSTS, HOST_NAMES
from metis_memory.hosts.imports.registry import ALL, NAMES


def test_the_arguments_name_the_registrys_hosts() -> None:
    assert HOST_NAMES == NAMES
    assert ALL_HOSTS == ALL


def test_building_the_parser_loads_no_reader() -> None:
    code = (
        "import sys; from metis_memory.cli import build_parser; build_parser(); "
        "print(sorted(m for m in sys.modules if m.startswith('metis_memory.hosts.import')))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert run.stdout.strip() == "['metis_memory.hosts.import_arguments']"
