"""Finding an entry's references to its workspace (analysis/references.py) and checking them
(analysis/stale.py, workspace_facts.py) on real files."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from metis_memory.analysis.entries import parse
from metis_memory.analysis.references import find_references
from metis_memory.analysis.stale import stale_findings
from metis_memory.workspace.facts import WorkspaceFacts


def refs(text: str) -> list[tuple[str, str, str]]:
    """(kind, target, the text it spans) of each reference."""
    return [(r.kind, r.target, text[r.start : r.end]) for r in find_references(parse(text))]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("- Rate limiting lives in `ratelimit/bucket.go`.", [("path", "ratelimit/bucket.go")]),
        ("- Migrations live in `db/migrations/`.", [("path", "db/migrations/")]),
        ("- See `./scripts/run.sh` first", [("path", "scripts/run.sh")]),
        ("- Up one: `../shared/notes.md`", [("path", "../shared/notes.md")]),
        ("- Windows: `src\\app\\main.go`", [("path", "src/app/main.go")]),
        ("- The bug is at `api/server.go:120`.", [("path", "api/server.go")]),
        ("- Ends a sentence `docs/setup.md`.", [("path", "docs/setup.md")]),
        ("- Trailing punctuation inside: `docs/setup.md,`", [("path", "docs/setup.md")]),
        ("- Notes: [decisions](notes/decisions.md#why).", [("path", "notes/decisions.md")]),
        ("- `make itest` needs a local Postgres", [("make", "itest")]),
        ("- Run `npm run lint:fix` before pushing", [("npm", "lint:fix")]),
        (
            "- `just deploy`, `task build`, `tox -e py311-lint`",
            [("just", "deploy"), ("task", "build"), ("tox", "py311-lint")],
        ),
    ],
)
def test_each_syntax_is_found(line: str, expected: list[tuple[str, str]]) -> None:
    assert [(k, t) for k, t, _ in refs(line + "\n")] == expected


@pytest.mark.parametrize(
    "line",
    [
        "- Prose mentions src/x.go without code spans",  # prose is never guessed at
        "- Go's `log/slog`, a MIME type `application/json`, a binary `out/tallyd`",
        "- A port and path `:9090/metrics`, a URL path `/v2/`",
        "- A bare name `main.go` could be anywhere",
        "- A URL `https://example.com/a/b` and [a link](https://example.com/x)",
        "- Absolute `/etc/hosts`, home `~/.config/x`, drive `C:\\tmp\\x`",
        "- A glob `src/**/*.go`, a variable `$HOME/bin`, an option `--out/dir`",
        "- A sentence in code `see the src/ folder`",
        "- `make -C sub itest` and `make itest && make lint` are not one target",
        "- An anchor [top](#top) and an image ![x](img/x.png)",
        "- Mail [me](mailto:a@b.c)",
    ],
)
def test_what_is_not_a_reference(line: str) -> None:
    assert refs(line + "\n") == []


def test_fenced_code_is_an_example_not_a_claim() -> None:
    text = "- Layout:\n\n  ```\n  `gone/file.go`\n  ```\n- Real: `here/file.go`\n"
    assert [t for _, t, _ in refs(text)] == ["here/file.go"]


def test_the_range_is_the_reference_itself() -> None:
    text = "- Entry point `cmd/tallyd/main.go`, see `make run`.\n"
    assert [span for _, _, span in refs(text)] == ["cmd/tallyd/main.go", "run"]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.go").write_text("package main\n")
    (tmp_path / ".metis").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / ".metis" / "local.md").write_text("x\n")
    return tmp_path


def stale(workspace: Path, text: str) -> list[str]:
    facts = WorkspaceFacts(workspace)
    outline = parse(text)
    return [text[f.start : f.end] for f in stale_findings(outline, facts.exists, facts.declared)]


def test_paths_the_root_gitignore_ignores_are_build_outputs_not_stale(workspace: Path) -> None:
    (workspace / ".gitignore").write_text("# outputs\n/out/\n*.log\nnode_modules\n!keep.log\n")
    text = "- `out/` `out/bin/app.exe` `logs/run.log` `web/node_modules/` `dist/app.js`\n"
    assert stale(workspace, text) == ["dist/app.js"]


def test_missing_paths_are_stale_and_existing_ones_are_not(workspace: Path) -> None:
    text = (
        "- `src/app.go` exists; `src/gone.go` does not.\n"
        "- `src/` is a folder; `src/app.go/` is not one.\n"
        "- [local](local.md) is beside MEMORY.md; [gone](gone.md) is not.\n"
        "- `../outside/x.md` leaves the workspace: not checked.\n"
    )
    assert stale(workspace, text) == ["src/gone.go", "src/app.go/", "gone.md"]


def test_a_symlink_leaving_the_workspace_is_not_followed_for_a_read(
    workspace: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (workspace / "linked").symlink_to(outside)
    (workspace / "dangling").symlink_to(outside / "nothing")
    # Through a link out of the workspace nothing is claimed, either way.
    assert stale(workspace, "- `linked/x.go` and `dangling` and `dangling/`\n") == []


MAKEFILE = """\
include mk/extra.mk
-include mk/optional.mk
.PHONY: test lint
VAR := value
build: deps
\t$(CC) -o app
%.o: %.c
\tcc -c $<
define RECIPE
fake: target
endef
"""


def test_make_targets_with_pattern_rules_and_includes(workspace: Path) -> None:
    (workspace / "Makefile").write_text(MAKEFILE)
    (workspace / "mk").mkdir()
    (workspace / "mk" / "extra.mk").write_text("release:\n\techo\n")
    text = "- `make build` `make test` `make release` `make main.o` `make itest` `make fake`\n"
    assert stale(workspace, text) == ["itest", "fake"]


def test_a_makefile_that_cannot_be_read_to_the_end_claims_nothing(workspace: Path) -> None:
    (workspace / "Makefile").write_text("include $(ROOT)/rules.mk\nbuild:\n")
    assert stale(workspace, "- `make itest`\n") == []
    (workspace / "Makefile").write_text("include missing.mk\nbuild:\n")
    assert stale(workspace, "- `make itest`\n") == []
    (workspace / "Makefile").unlink()
    assert stale(workspace, "- `make itest`\n") == []  # no Makefile: nothing to check against


def test_npm_just_task_and_tox_targets(workspace: Path) -> None:
    (workspace / "package.json").write_text('{"scripts": {"lint": "eslint .", "test": "x"}}')
    (workspace / "justfile").write_text("alias d := deploy\ndeploy target='prod':\n  echo\n")
    (workspace / "Taskfile.yml").write_text(
        "version: '3'\ntasks:\n  build:\n    cmds: [go build]\n"
    )
    (workspace / "tox.ini").write_text("[tox]\nenvlist = py{311,312}, lint\n[testenv:docs]\n")
    text = (
        "- `npm run lint` `npm run gone` `just deploy` `just d` `just gone` `task build` "
        "`task gone` `tox -e lint` `tox -e docs` `tox -e py313` `tox -e gone`\n"
    )
    assert stale(workspace, text) == ["gone", "gone", "gone", "gone"]


def test_hostile_content_neither_hangs_nor_crashes(workspace: Path) -> None:
    """A cloned repository controls these files: bounded time, and an unreadable declaration
    declares nothing (never a traceback in memory_read or the hook)."""
    long_link = "- ](x) " + "[" * 20_000 + "\n"
    assert refs(long_link) == []
    (workspace / "Makefile").write_text("a" + " " * 20_000 + "b\nbuild:\n")
    (workspace / "package.json").write_text("[" * 1_001)
    (workspace / "tox.ini").write_text("[tox]\nenvlist = " + "{}" * 1_200 + "\n")
    text = "- `make build` `npm run x` `tox -e y` and a NUL `src/a\x00b.go`\n"
    # The Makefile and package.json cannot be read to the end: they claim nothing. The tox.ini's
    # 1,200 empty groups are no environment at all, so `y` is not declared.
    assert stale(workspace, text) == ["y"]


def test_make_targets_made_at_run_time_claim_nothing(workspace: Path) -> None:
    (workspace / "Makefile").write_text("T := a b\n$(foreach t,$(T),$(eval $(call tpl,$t)))\n")
    assert stale(workspace, "- `make a`\n") == []


def test_an_included_makefile_that_changes_is_read_again(workspace: Path) -> None:
    (workspace / "Makefile").write_text("include mk/build.mk\n")
    (workspace / "mk").mkdir()
    (workspace / "mk" / "build.mk").write_text("build:\n")
    facts = WorkspaceFacts(workspace)
    outline = parse("- `make release`\n")
    assert len(stale_findings(outline, facts.exists, facts.declared)) == 1
    (workspace / "mk" / "build.mk").write_text("build:\nrelease:\n")
    assert stale_findings(outline, facts.exists, facts.declared) == []


def test_tox_brace_lists_and_sections(workspace: Path) -> None:
    (workspace / "tox.ini").write_text("[tox]\nenvlist = {lint,type}\n[testenv:{docs,spell}]\n")
    text = "- `tox -e lint` `tox -e type` `tox -e docs` `tox -e spell` `tox -e gone`\n"
    assert stale(workspace, text) == ["gone"]


def test_a_symlink_out_of_the_workspace_is_not_probed(
    workspace: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("etc")
    (outside / "passwd").write_text("x\n")
    (workspace / "link").symlink_to(outside)
    # Neither answer says anything about the place outside.
    assert stale(workspace, "- `link/passwd` and `link/nope.conf` and `link/sub/`\n") == []


def test_percent_encoded_link_targets_are_decoded(workspace: Path) -> None:
    (workspace / ".metis" / "Design Notes.md").write_text("x\n")
    assert stale(workspace, "- [design](Design%20Notes.md), [gone](Gone%20Notes.md)\n") == [
        "Gone%20Notes.md"
    ]


def test_tox_reads_factors_as_tox_does_and_any_ini_syntax(workspace: Path) -> None:
    """Spaces inside braces are dropped and a one-factor `{lint}` is `lint`; a `key: value`
    line in another tool's section does not switch the check off."""
    (workspace / "tox.ini").write_text(
        "[tox]\nenv_list = py{311, 312}-{lint}, docs\n\n[flake8]\nmax-line-length: 100\n"
    )
    text = "- `tox -e py312-lint` `tox -e docs` `tox -e gone`\n"
    assert stale(workspace, text) == ["gone"]


def test_a_tox_ini_of_long_space_runs_is_read_in_linear_time(workspace: Path) -> None:
    """configparser's option pattern is quadratic in a run of spaces: 40,000-space lines
    took 9 s per read (and held the GIL past the hook's deadline). A line that is no option
    makes the file unreadable: it declares nothing."""
    (workspace / "tox.ini").write_text(
        "[tox]\nenv_list = lint\n" + ("a" + " " * 40_000 + "b\n") * 20
    )
    assert stale(workspace, "- `tox -e gone`\n") == []
    (workspace / "tox.ini").write_text(
        "[tox]\nenv_list = lint\n" + ("k =" + " " * 40_000 + "v\n") * 20
    )
    assert stale(workspace, "- `tox -e lint` `tox -e gone`\n") == ["gone"]


def test_with_a_defer_the_main_thread_never_reads_a_declaring_file_or_gitignore(
    workspace: Path,
) -> None:
    """The language server passes `defer`: a Makefile or .gitignore not read since it
    changed is read by the worker it is handed to, and meanwhile nothing is claimed (and
    no "cannot tell" is remembered as an answer)."""
    (workspace / "Makefile").write_text("build:\n")
    (workspace / ".gitignore").write_text("out/\n")
    jobs: list[Callable[[], object]] = []
    facts = WorkspaceFacts(workspace, defer=jobs.append)
    facts.remember()
    outline = parse("- `make itest` and `src/gone.go` and `out/app.js`\n")

    def claims() -> list[str]:
        return [
            f.message.split("`")[1] for f in stale_findings(outline, facts.exists, facts.declared)
        ]

    assert claims() == []  # on the main thread, cold: handed over, nothing claimed
    assert len(jobs) == 3  # the Makefile, and the .gitignore for each missing path
    reader = threading.Thread(target=lambda: [job() for job in jobs])
    reader.start()
    reader.join()
    assert claims() == ["itest", "src/gone.go"]  # warm now: read on no thread but the worker's


@pytest.mark.timeout(30)  # a hang guard with 100x margin, not a speed target (make bench)
def test_a_makefile_of_space_runs_is_read_in_linear_time(workspace: Path) -> None:
    """The rule pattern was quadratic in a run of spaces: a 1 MiB Makefile of such lines
    took 9.6 s a read, so these five reads ran past the guard; now they take milliseconds."""
    line = "x" + " " * 3_990 + "y\n"
    (workspace / "Makefile").write_text("build:\n" + line * (2**20 // len(line) - 1))
    for _ in range(5):
        make = WorkspaceFacts(workspace).declared("make")
        assert make is not None and make.names == frozenset({"build"})
