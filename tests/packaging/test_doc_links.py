"""Every relative link of the README, CONTRIBUTING.md, docs/, the VSIX's README and the
integrations' READMEs leads to a file of the repository, and its `#anchor`, if any, to a
heading of that page: the README now sends readers to other pages for everything, so a
moved section must not leave a dead link behind."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

from support.project_docs import ROOT, Link, all_pages, anchors, base_of, is_relative, links


def problems(page: Path, link: Link) -> list[str]:
    where = f"{page.relative_to(ROOT)}:{link.line}: {link.target}"
    path, _, anchor = link.target.partition("#")
    target = (base_of(page) / unquote(path)).resolve() if path else page
    if not target.is_relative_to(ROOT):
        return [f"{where}: leads out of the repository"]
    if not target.exists():
        return [f"{where}: no such file ({target.relative_to(ROOT)})"]
    if anchor and target.suffix == ".md" and anchor not in anchors(target):
        return [f"{where}: {target.relative_to(ROOT)} has no heading with the anchor #{anchor}"]
    return []


def test_every_relative_link_leads_to_a_file_and_heading_that_exist() -> None:
    pages = all_pages()
    assert ROOT / "README.md" in pages and ROOT / "CONTRIBUTING.md" in pages
    found = [(page, link) for page in pages for link in links(page) if is_relative(link.target)]
    assert len(found) > 20, "the pages link to almost nothing: is the parser reading them?"
    bad = [p for page, link in found for p in problems(page, link)]
    assert bad == [], "\n".join(bad)


def test_anchors_are_read_as_github_writes_them(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text(
        "# The `metis-memory` command\n\n## What init writes, per host\n\n## Notes\n\n## Notes\n"
        "\n```md\n# not a heading\n```\n",
        encoding="utf-8",
    )
    assert anchors(page) == {
        "the-metis-memory-command",
        "what-init-writes-per-host",
        "notes",
        "notes-1",
    }
