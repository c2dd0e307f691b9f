"""The `machine` fixture of the import tests (`host_machine.py`): a home, a workspace and a
config folder of the test's own, no host variable of the suite's environment in them."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.host_memory import AGENT_SHELL_VARIABLES, HOST_VARIABLES, Machine


@pytest.fixture
def machine(tmp_path: Path, user_config_home: Path, monkeypatch: pytest.MonkeyPatch) -> Machine:
    home = tmp_path / "home"
    home.mkdir()
    workspace = tmp_path / "shop"
    workspace.mkdir()
    for name in (*HOST_VARIABLES, *AGENT_SHELL_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    return Machine(home, workspace, user_config_home)
