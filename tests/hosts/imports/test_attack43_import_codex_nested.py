"""Attack on `metis-memory import --from codex` (issue 43) run from a folder that holds other
projects: the home folder (a terminal's first folder), or a checkout with another repository
vendored in it. Codex's handbook blocks were taken when their `cwd` was the workspace "or a
folder in it", so from the home folder every project's block under it landed in
~/.metis/MEMORY.md — the very thing the reader exists to prevent (openai/codex#23658: a rule
learned in one project applied in another). A folder inside the workspace that is a repository
of its own is that repository's project; a plain folder in it (a monorepo's service) is still
the workspace's."""

from __future__ import annotations

from pathlib import Path

from support.host_memory import Machine

BLOCK = """# Task Group: {cwd}
scope: {what}
applies_to: cwd={cwd}; reuse_rule=checkout-specific

## Task 1: {what}
### keywords
- {what}

## Reusable knowledge
- {fact} [Task 1]

"""


def handbook(machine: Machine, *blocks: tuple[Path | str, str]) -> None:
    memories = machine.home / ".codex" / "memories"
    memories.mkdir(parents=True)
    text = "".join(
        BLOCK.format(cwd=cwd, what=f"work in {Path(cwd).name}", fact=fact) for cwd, fact in blocks
    )
    (memories / "MEMORY.md").write_text(text)


def test_from_the_home_folder_another_repositorys_block_is_not_taken(machine: Machine) -> None:
    other = machine.home / "src" / "billing"
    (other / ".git").mkdir(parents=True)
    notes = machine.home / "notes"
    notes.mkdir()
    handbook(
        machine,
        (other, "Billing exports must use ISO dates."),
        (notes, "Notes are kept as one file a day."),
        ("~/src/billing", "Billing's CI runs on Fridays."),
    )

    run = machine.run("import", "--from", "codex", "--dry-run", "--workspace", str(machine.home))

    assert run.returncode == 0, run.stderr
    assert "ISO dates" not in run.stdout
    assert "Fridays" not in run.stdout
    assert "+- Notes are kept as one file a day." in run.stdout


def test_a_repository_vendored_in_the_workspace_is_its_own_project(machine: Machine) -> None:
    (machine.workspace / ".git").mkdir()
    vendored = machine.workspace / "third_party" / "libfoo"
    vendored.mkdir(parents=True)
    (vendored / ".git").write_text("gitdir: ../../.git/modules/libfoo\n")  # a submodule
    service = machine.workspace / "services" / "api"
    service.mkdir(parents=True)
    handbook(
        machine,
        (vendored / "src", "libfoo's tests need cmake 3.28."),
        (service, "The API service listens on port 8081."),
        (machine.workspace, "The shop deploys with make release."),
    )

    run = machine.run("import", "--from", "codex", "--dry-run")

    assert run.returncode == 0, run.stderr
    assert "cmake" not in run.stdout
    assert "+- The API service listens on port 8081." in run.stdout
    assert "+- The shop deploys with make release." in run.stdout
