"""Entries of the user memory that belong to an open workspace
(analysis/workspace_specific.py), asked of real workspaces on disk through their facts
(workspace/facts.py `resolves` and `declared`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from metis_memory.analysis.entries import parse
from metis_memory.analysis.findings import Severity
from metis_memory.analysis.workspace_specific import (
    OpenWorkspace,
    move_title,
    workspace_specific_findings,
)
from metis_memory.workspace.facts import WorkspaceFacts


def open_workspace(root: Path, name: str | None = None) -> OpenWorkspace:
    facts = WorkspaceFacts(root)
    return OpenWorkspace(name or root.name, root.as_uri(), facts.resolves, facts.declared)


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('shop')\n")
    (root / "db" / "migrations").mkdir(parents=True)
    (root / "Makefile").write_text(".PHONY: itest\nitest:\n\tpytest\n")
    (root / "package.json").write_text('{"scripts": {"lint:fix": "eslint --fix ."}}')
    return root


def found(text: str, *workspaces: OpenWorkspace) -> list[tuple[str, str, str]]:
    """(the text each finding spans, its message, the workspaces it names) of `text`."""
    return [
        (
            text[f.start : f.end],
            f.message,
            ",".join(w["name"] for w in (f.data or {})["workspaces"]),
        )
        for f in workspace_specific_findings(parse(text), workspaces)
    ]


def test_a_file_of_the_workspace_is_named_with_where_it_belongs(shop: Path) -> None:
    text = "# User\n\n- Answer in British English\n- The entry point is `src/app.py`\n"
    findings = workspace_specific_findings(parse(text), [open_workspace(shop)])
    assert len(findings) == 1
    finding = findings[0]
    assert text[finding.start : finding.end] == "src/app.py"
    assert finding.code == "workspace-specific"
    assert finding.severity is Severity.INFORMATION
    assert finding.message == (
        "This entry names `src/app.py`, a file of the workspace shop: your user memory is read "
        "in every workspace. Move it to shop's MEMORY.md."
    )
    assert finding.entry is not None and finding.entry.text == "- The entry point is `src/app.py`"
    assert finding.data == {
        "reference": "path",
        "target": "src/app.py",
        "workspaces": [{"uri": shop.as_uri(), "name": "shop"}],
    }
    assert move_title("shop") == "Move to shop's MEMORY.md"


@pytest.mark.parametrize(
    ("entry", "spanned", "what"),
    [
        (
            "- Migrations are in `db/migrations/`",
            "db/migrations/",
            "a folder of the workspace shop",
        ),
        ("- Run `make itest` before pushing", "itest", "a target of shop's Makefile"),
        ("- `npm run lint:fix` fixes the style", "lint:fix", "a script of shop's package.json"),
        ("- Start at `./src/app.py:12`", "./src/app.py", "a file of the workspace shop"),
    ],
)
def test_each_kind_of_reference_that_resolves(
    shop: Path, entry: str, spanned: str, what: str
) -> None:
    ((span, message, names),) = found(entry + "\n", open_workspace(shop))
    assert span == spanned
    assert f", {what}: your user memory is read in every workspace." in message
    assert names == "shop"


@pytest.mark.parametrize(
    "entry",
    [
        "- I like `src/missing.py` as a name",  # a path the workspace does not have
        "- Run `make deploy` to ship",  # a target its Makefile does not declare
        "- Use `just build`",  # no justfile: nothing is claimed
        "- Tests go in `src/`",  # a lone top-level folder: a convention, not a place
        "- Up one: `../shop/src/app.py`",  # leaves the workspace
        "- See [my notes](src/app.py)",  # a link: relative to the user memory's folder
        "- Prefers `log/slog` over logrus",  # not certainly a path
        "```\n- `src/app.py` in an example\n```",  # inside a fence: an example
        "- Answer in British English",
    ],
)
def test_what_is_not_claimed(shop: Path, entry: str) -> None:
    assert found(entry + "\n", open_workspace(shop)) == []


def test_with_no_workspace_open_nothing_is_workspace_specific(shop: Path) -> None:
    assert found("- The entry point is `src/app.py`\n") == []


def test_one_finding_per_entry_naming_every_workspace_it_belongs_to(
    shop: Path, tmp_path: Path
) -> None:
    blog = tmp_path / "blog"
    (blog / "src").mkdir(parents=True)
    (blog / "src" / "app.py").write_text("")
    (blog / "Makefile").write_text("itest:\n\ttrue\n")
    docs = tmp_path / "docs"  # open too, and naming none of it
    docs.mkdir()
    text = "- `make itest` runs `src/app.py` and `db/migrations/`\n"
    ((span, message, names),) = found(
        text, open_workspace(shop), open_workspace(blog), open_workspace(docs)
    )
    # The first reference that resolves in the first workspace that has one.
    assert span == "itest" and "a target of shop's Makefile" in message
    assert names == "shop,blog"
    ((span, message, names),) = found(
        text, open_workspace(blog), open_workspace(shop), open_workspace(docs)
    )
    assert "blog's Makefile" in message and names == "blog,shop"


def test_what_every_open_workspace_has_is_not_workspace_specific(
    shop: Path, tmp_path: Path
) -> None:
    """`make test` declared in each open workspace is the user's habit, true in all of them:
    moved to one's MEMORY.md it would be lost to the others. What one alone has is its own."""
    blog = tmp_path / "blog"
    (blog / "src").mkdir(parents=True)
    (blog / "src" / "app.py").write_text("")
    (blog / "Makefile").write_text("itest:\n\ttrue\n")
    both = open_workspace(shop), open_workspace(blog)
    assert found("- Always run `make itest` before pushing\n", *both) == []
    assert found("- Start at `src/app.py`\n", *both) == []
    ((span, _, names),) = found("- After `make itest`, see `db/migrations/`\n", *both)
    assert span == "db/migrations/" and names == "shop"
    # With one workspace open, what it has is claimed (nothing else to tell it by).
    assert [n for _, _, n in found("- Always run `make itest`\n", both[1])] == ["blog"]


def test_what_the_stale_check_leaves_unclaimed_is_not_claimed_either(shop: Path) -> None:
    """Where the stale check's `exists` says True to claim nothing (a git-ignored build
    output that is not there, a name the OS refuses), `resolves` says False: an entry is
    claimed for a workspace only on what is certainly there."""
    (shop / ".gitignore").write_text("out/\n")
    facts = WorkspaceFacts(shop)
    for unknown in ("out/app.js", "bad\x00name.py"):
        assert facts.exists(unknown) is True
        assert facts.resolves(unknown) is False
    assert found("- Builds to `out/app.js`\n", open_workspace(shop)) == []


def test_resolves_tells_files_from_folders(shop: Path, tmp_path: Path) -> None:
    facts = WorkspaceFacts(shop)
    assert facts.resolves("src/app.py")
    assert facts.resolves("db/migrations/")
    assert not facts.resolves("src/app.py/")  # a file named as a folder
    assert not facts.resolves("nothing/here.py")
    (shop / "linked").symlink_to(shop / "db", target_is_directory=True)
    assert facts.resolves("linked/")
    (shop / "dangling.py").symlink_to(tmp_path / "gone.py")
    assert facts.resolves("dangling.py")  # the link itself is there, as `exists` says


def test_unicode_and_punctuation_in_names(tmp_path: Path) -> None:
    root = tmp_path / "d'Artagnan ✓"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "café.md").write_text("")
    ((span, message, names),) = found("- Notes in `docs/café.md`.\n", open_workspace(root))
    assert span == "docs/café.md"
    assert message.endswith("Move it to d'Artagnan ✓'s MEMORY.md.")
    assert names == "d'Artagnan ✓"


def test_a_hostile_line_is_not_scanned(shop: Path) -> None:
    """A line past the references' bound (2,000 characters) names nothing: the patterns'
    cost grows with the square of such a line."""
    line = "- " + "`src/app.py` " * 200 + "\n"
    assert found(line, open_workspace(shop)) == []


def test_resolves_is_remembered_while_watched_and_asked_again_when_told(shop: Path) -> None:
    """As `exists`: while the editor watches every path asked about, answers are kept (a
    keystroke costs no `lstat`), and a change it reports (`forget`) asks the disk again."""
    facts = WorkspaceFacts(shop)
    facts.remember()
    assert not facts.resolves("src/new.py")
    (shop / "src" / "new.py").write_text("")
    assert not facts.resolves("src/new.py"), "kept until the watcher says it changed"
    facts.forget()
    assert facts.resolves("src/new.py")
    facts.stop_remembering()
    (shop / "src" / "new.py").unlink()
    assert not facts.resolves("src/new.py")
