"""The CLI run by an account with no home folder (HOME unset and no passwd entry: a bare uid
in a container): the workspace's memory and its check work, and the user memory is missing,
not a crash. (In process, with the account database made to have no entry: a subprocess as a
bare uid cannot run this venv's interpreter, which lives in root's home.)"""

from __future__ import annotations

import pwd
from pathlib import Path

import pytest

from metis_memory.cli import main


@pytest.fixture
def no_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)

    def no_entry(uid: int) -> pwd.struct_passwd:
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    monkeypatch.setattr(pwd, "getpwuid", no_entry)


@pytest.mark.usefixtures("no_home")
def test_check_and_add_work_with_no_home(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["add", "--workspace", str(workspace), "MEMORY.md", "Build with make."]) == 0
    capsys.readouterr()
    assert main(["check", str(workspace)]) == 0
    out = capsys.readouterr().out
    assert "MEMORY.md" in out
    assert "user memory" not in out
    assert main(["add", "--workspace", str(workspace), "--user", "British English."]) != 0
    err = capsys.readouterr().err
    assert "no home folder" in err
    assert "Set XDG_CONFIG_HOME or HOME" in err
