"""What a user gets from `pipx install metis-agent-memory`: the wheel and sdist built with
`python -m build`, installed with pipx into a fresh virtual environment of its own, and each
entry point run from there (not from this checkout): `--version`, `check`, `lsp` (initialize
and shutdown with a real client) and `mcp` (list tools with the SDK's client), from the
default install: no extra is needed for the MCP server `init` wires."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import mcp
import pytest
from lsprotocol import types
from mcp import StdioServerParameters
from pygls.lsp.client import LanguageClient

from metis_memory._version import __version__

ROOT = Path(__file__).resolve().parents[2]
INSTALL_TIMEOUT_S = 600
pytestmark = pytest.mark.timeout(INSTALL_TIMEOUT_S)


def run(*cmd: str | Path, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [str(c) for c in cmd],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=INSTALL_TIMEOUT_S,
    )
    assert done.returncode == 0, f"{cmd} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(wheel, sdist), built from a copy of the sources so the checkout gets no build/."""
    out = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "build", "--outdir", out, ROOT, cwd=out)
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return wheel, sdist


@pytest.fixture(scope="module")
def installed(built: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The `metis-memory` executable pipx installed from the wheel, in its own venv."""
    home = tmp_path_factory.mktemp("pipx")
    env = {
        **os.environ,
        "PIPX_HOME": str(home / "home"),
        "PIPX_BIN_DIR": str(home / "bin"),
        "PIPX_MAN_DIR": str(home / "man"),
    }
    run(sys.executable, "-m", "pipx", "install", built[0], env=env)
    exe = home / "bin" / "metis-memory"
    assert exe.is_file(), f"pipx installed no {exe}"
    yield exe


def test_the_wheel_and_sdist_carry_the_package_data(built: tuple[Path, Path]) -> None:
    wheel, sdist = built
    assert wheel.name == f"metis_agent_memory-{__version__}-py3-none-any.whl"
    data = {
        "metis_memory/py.typed",
        "metis_memory/budgets/builtin.json",
        "metis_memory/analysis/secret_rules.json",
        "metis_memory/analysis/secret_rules.LICENSE",
    }
    assert data <= set(zipfile.ZipFile(wheel).namelist())
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"LICENSE", "README.md", "pyproject.toml"} <= names
    assert {f"server/{d}" for d in data} <= names


def test_the_installed_command_reports_its_version_and_checks(
    installed: Path, tmp_path: Path
) -> None:
    assert run(installed, "--version").strip() == f"metis-memory {__version__}"
    (tmp_path / "CLAUDE.md").write_text("# Rules\n" + "- rule ✓\n" * 250, encoding="utf-8")
    done = subprocess.run(
        [installed, "check", tmp_path], capture_output=True, text=True, timeout=60
    )
    # 251 lines: over Claude Code's 200-line guidance, a warning (exit 0); the budgets come
    # from builtin.json, so this fails if the wheel lacks it.
    assert done.returncode == 0, done.stderr
    assert "CLAUDE.md" in done.stdout and "200 lines" in done.stdout, done.stdout


async def test_the_installed_language_server_initializes_and_shuts_down(
    installed: Path, tmp_path: Path
) -> None:
    client = LanguageClient("wheel-test", "1")
    await client.start_io(str(installed), "lsp")
    try:
        result = await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                workspace_folders=[types.WorkspaceFolder(tmp_path.as_uri(), "w")],
            )
        )
        assert result.server_info is not None
        assert result.server_info.name == "metis-memory"
        assert result.server_info.version == __version__
        client.initialized(types.InitializedParams())
        await client.shutdown_async(None)
        client.exit(None)
    finally:
        await client.stop()  # type: ignore[no-untyped-call]  # pygls leaves it untyped


async def test_the_installed_mcp_server_lists_its_tools(installed: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(command=str(installed), args=["mcp", str(tmp_path)])
    async with mcp.Client(params) as session:
        names = {t.name for t in (await session.list_tools()).tools}
    assert names == {
        "memory_add",
        "memory_replace",
        "memory_consolidate",
        "memory_read",
        "memory_assemble_prompt",
        "user_memory_add",
        "user_memory_replace",
        "user_memory_consolidate",
    }
