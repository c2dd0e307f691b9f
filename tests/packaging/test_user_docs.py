"""The pages for users read as pages for users: the README starts with what Metis is and how
to try it (`make run`, then `make test`), stays short, and names only make targets `make help`
lists; no user page names an issue number, a missed benchmark target, a release token, or a
spec outside the repository."""

from __future__ import annotations

import re
import shutil
import subprocess

from support.project_docs import ROOT, user_pages

README = ROOT / "README.md"
README_MAX_LINES = 150
MAKE_TARGET = re.compile(r"(?:^|`)make ([a-z][a-z0-9-]*)\b", re.MULTILINE)
FORBIDDEN = {
    "an issue number": re.compile(r"\bissues? #?\d+|(?<![\w&/])#\d+\b", re.IGNORECASE),
    "a missed target": re.compile(r"\bMISSED\b"),
    "the spec's folder outside the repository": re.compile(r"shared/seeds"),
}
CONTRIBUTOR_ONLY = ("PYPI_API_TOKEN", "VSCE_PAT", "OVSX_PAT", "actionlint")


def test_no_user_page_names_an_issue_a_missed_target_or_a_folder_we_do_not_ship() -> None:
    problems = []
    for page in user_pages():
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for what, pattern in FORBIDDEN.items():
                if m := pattern.search(line):
                    problems.append(f"{page.relative_to(ROOT)}:{n}: {what}: {m.group(0)!r}")
    assert problems == [], "\n".join(problems)


def test_the_readme_is_short_and_leaves_contributor_matters_to_contributing() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    named = [word for word in CONTRIBUTOR_ONLY if word in text]
    assert named == [], f"README.md names {named}: that belongs in CONTRIBUTING.md"


def test_make_run_and_make_test_are_the_readmes_first_two_commands() -> None:
    targets = MAKE_TARGET.findall(README.read_text(encoding="utf-8"))
    assert targets[:2] == ["run", "test"], targets[:5]


def test_make_help_lists_every_target_the_readme_names() -> None:
    make = shutil.which("make")
    assert make is not None, "make is not installed"
    done = subprocess.run(
        [make, "--no-print-directory", "help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    listed = set(re.findall(r"^make ([a-z][a-z0-9-]*)", done.stdout, re.MULTILINE))
    named = set(MAKE_TARGET.findall(README.read_text(encoding="utf-8")))
    assert named - listed == set(), f"make help does not list {sorted(named - listed)}"
    assert "RUN_PORT" in done.stdout  # how to change make run's port
