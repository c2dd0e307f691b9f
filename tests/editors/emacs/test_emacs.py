"""A real Emacs (headless, eglot and flymake) with the configuration docs/editors.md gives, on a
project with no version control: eglot makes `.metis/` itself the project root, and the
over-cap MEMORY.md still gets its diagnostics, only actions Emacs can run, a plain-text
hover (eglot without markdown-mode asks for one), and a Tidy that works end to end."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
CONFIG = ROOT / "examples" / "emacs" / "metis-memory.el"
PROBE = Path(__file__).resolve().parent / "probe.el"
EMACS = shutil.which("emacs")
"""Debian's emacs-nox with elpa-eglot (`make test` installs both)."""

MEMORY = (
    "# Workspace memory\n\n\n\n"
    "- build: make test runs ruff, mypy and pytest   \n"
    "- BUILD: make test runs ruff, mypy and pytest\n"
    + "".join(f"- fact {i}: the café uses ünïcode ✓\n" for i in range(60))
)


def test_the_editors_page_shows_the_tested_configuration() -> None:
    readme = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    assert f"```elisp\n{CONFIG.read_text(encoding='utf-8')}```" in readme


def run_emacs(tmp_path: Path, memory: Path) -> dict[str, Any]:
    assert EMACS is not None, "emacs is not installed: `make test` installs emacs-nox"
    out = tmp_path / "probe.json"
    env = {
        **os.environ,
        "HOME": str(tmp_path / "home"),  # no user init, no ~/.emacs.d state
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "METIS_EMACS_FILE": str(memory),
        "METIS_EMACS_OUT": str(out),
        "METIS_MEMORY_CACHE_DIR": str(tmp_path / "cache"),
    }
    (tmp_path / "home").mkdir()
    # --batch reads no init file; the site start-up (which puts Debian's elpa-eglot on the
    # load path) runs as in a user's Emacs.
    command = [EMACS, "--batch", "-l", str(CONFIG), "-l", str(PROBE)]
    done = subprocess.run(
        command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert out.exists(), f"the probe wrote nothing:\n{done.stderr[-3000:]}"
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert "error" not in result, f"{result}\n{done.stderr[-3000:]}"
    return result


def test_emacs_eglot_on_a_project_without_version_control(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".metis").mkdir(parents=True)
    memory = project / ".metis" / "MEMORY.md"
    memory.write_text(MEMORY, encoding="utf-8")

    seen = run_emacs(tmp_path, memory)

    assert seen["major-mode"] == "metis-memory-mode"
    assert Path(seen["project-root"]) == project / ".metis"  # eglot's root, not ours
    lines = {(line, kind) for line, kind, _text in seen["diagnostics"]}
    assert (5, "eglot-warning") in lines, seen["diagnostics"]  # the duplicate
    assert any("soft cap" in text for _line, _kind, text in seen["diagnostics"])
    assert seen["hover-kind"] == "plaintext"
    assert seen["hover-value"].startswith("MEMORY.md — over soft cap")
    assert "|" not in seen["hover-value"]  # no Markdown table syntax
    # Only what Emacs can run: edits and the server's own commands.
    assert "Tidy MEMORY.md" in seen["actions"]
    assert not [t for t in seen["actions"] if t.startswith(("Consolidate", "Replace entry"))]
    assert set(seen["action-commands"]) <= {"metis.applyEdit", "metis.showConsolidationProposal"}
    # Tidy ran through eglot's menu, the buffer was saved, the server saw the result.
    tidied = "# Workspace memory\n\n- build: make test runs ruff, mypy and pytest\n" + "".join(
        f"- fact {i}: the café uses ünïcode ✓\n" for i in range(60)
    )
    assert memory.read_text(encoding="utf-8") == tidied
    assert seen["text-after"] == tidied
    assert not [d for d in seen["diagnostics-after"] if "uplicate" in d[2]]


@pytest.mark.parametrize("name", ["USER.md"])
def test_the_mode_is_for_memory_files_only(tmp_path: Path, name: str) -> None:
    """A sanity check of the configuration's pattern, with Emacs's own matcher."""
    assert EMACS is not None, "emacs is not installed: `make test` installs emacs-nox"
    forms = (
        f'(progn (load "{CONFIG}")'
        " (princ (mapconcat (lambda (f) (if (assoc-default f auto-mode-alist"
        ' #\'string-match) "y" "n")) command-line-args-left "")))'
    )
    paths = [f"/p/.metis/{name}", "/p/.metis/MEMORY.md", "/p/MEMORY.md", "/p/.metis/notes.md"]
    done = subprocess.run(
        [EMACS, "--batch", "--eval", forms, *paths],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "HOME": str(tmp_path)},
    )  # fmt: skip
    assert done.stdout.strip().endswith("yynn"), done.stderr
