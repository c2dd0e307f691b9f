"""The FILE argument of `metis-memory add/replace/consolidate`: what a person types (or tab
completion gives) names the file; a name that is neither gets a sentence for a person, not the
tools' JSON schema. The agents' tools keep the spec's exact `"MEMORY.md" | "USER.md"`."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.cli import Runner


@pytest.mark.parametrize(
    ("given", "file"),
    [
        ("MEMORY.md", "MEMORY.md"),
        ("memory.md", "MEMORY.md"),
        (".metis/MEMORY.md", "MEMORY.md"),
        ("./.metis/memory.md", "MEMORY.md"),
        ("USER.md", "USER.md"),
        ("user.md", "USER.md"),
        (".metis/USER.md", "USER.md"),
    ],
)
def test_add_takes_the_names_a_person_types(
    cli: Runner, workspace: Path, given: str, file: str
) -> None:
    result = cli("add", given, "- uses make")
    assert result.returncode == 0, result.stderr
    assert (workspace / ".metis" / file).read_text() == "- uses make\n"
    assert sorted(p.name for p in (workspace / ".metis").glob("*.md")) == [file]


def test_replace_and_consolidate_take_them_too(cli: Runner, workspace: Path) -> None:
    assert cli("add", "user.md", "- likes Go").returncode == 0
    replaced = cli("replace", ".metis/USER.md", "Go", "Rust")
    assert replaced.returncode == 0, replaced.stderr
    done = cli("consolidate", "memory.md", "--content", "- uses uv\n")
    assert done.returncode == 0, done.stderr
    assert (workspace / ".metis" / "USER.md").read_text() == "- likes Rust\n"
    assert (workspace / ".metis" / "MEMORY.md").read_text() == "- uses uv\n"


def test_the_workspace_path_tab_completion_gives_from_outside(cli: Runner, workspace: Path) -> None:
    given = f"{workspace.name}/.metis/MEMORY.md"
    result = cli("add", "-w", workspace.name, given, "- uses make", cwd=workspace.parent)
    assert result.returncode == 0, result.stderr
    assert (workspace / ".metis" / "MEMORY.md").read_text() == "- uses make\n"


@pytest.mark.parametrize(
    "given",
    [
        "notes.md",
        "MEMORY",
        "docs/MEMORY.md",
        "../other/.metis/MEMORY.md",
        "MEMORY.md.bak",
        "",
        "mémoire.md",
        "MEMORY.md\n",
    ],
)
def test_any_other_name_is_told_for_a_person(cli: Runner, workspace: Path, given: str) -> None:
    result = cli("add", given, "- uses make")
    assert result.returncode == 2
    assert result.stdout == ""
    shown = given.replace("\n", "\\n")
    assert result.stderr == (
        f'metis-memory: no memory file "{shown}": '
        "use MEMORY.md (workspace facts) or USER.md (facts about you)\n"
    )
    assert "Expected" not in result.stderr
    assert not (workspace / ".metis").exists()


def test_a_wrong_name_with_json_is_the_same_message(cli: Runner, workspace: Path) -> None:
    result = cli("replace", "--json", "notes.md", "a", "b")
    assert result.returncode == 2
    assert result.stderr == (
        'metis-memory: no memory file "notes.md": '
        "use MEMORY.md (workspace facts) or USER.md (facts about you)\n"
    )
