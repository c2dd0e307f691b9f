"""The import contracts in pyproject.toml (`make lint` runs `lint-imports`) hold for the
tree, and break when a layer imports one above it: shown on a copy of the package."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(package_parent: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_tree_keeps_every_contract(tmp_path: Path) -> None:
    result = lint_imports(ROOT / "server", tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def copy_of_package(tmp_path: Path) -> Path:
    shutil.copytree(
        ROOT / "server" / "metis_memory",
        tmp_path / "metis_memory",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return tmp_path / "metis_memory"


def test_a_store_module_importing_the_language_server_breaks_the_layers(
    tmp_path: Path,
) -> None:
    package = copy_of_package(tmp_path)
    files = package / "store" / "files.py"
    files.write_text(files.read_text() + "\nfrom ..lsp import protocol as _protocol\n")
    result = lint_imports(tmp_path, tmp_path)
    assert result.returncode == 1
    assert "Layers: each imports only those below it BROKEN" in result.stdout
    assert "metis_memory.store is not allowed to import metis_memory.lsp" in result.stdout


def test_a_feature_importing_the_server_or_the_store_internals_is_refused(
    tmp_path: Path,
) -> None:
    package = copy_of_package(tmp_path)
    hover = package / "lsp" / "features" / "hover_lens.py"
    hover.write_text(
        hover.read_text() + "\nfrom ..server import MetisLanguageServer as _Server\n"
        "from ...store.atomic import atomic_write as _write\n"
    )
    result = lint_imports(tmp_path, tmp_path)
    assert result.returncode == 1
    assert "see the server only as lsp.context.ServerContext BROKEN" in result.stdout
    assert "No import cycle" in result.stdout and "BROKEN" in result.stdout
    assert "Store internals are private" in result.stdout
    assert "metis_memory.lsp.features.hover_lens -> metis_memory.store.atomic" in result.stdout
