"""The project's Markdown pages, as the documentation tests read them: which are for users
(no issue numbers, no missed targets) and which also for contributors."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the 3.10 interpreter
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]

CONTRIBUTOR_PAGES = ("CONTRIBUTING.md", "docs/engineering.md")
"""Pages for people changing the project: they may name issues and commands of the build."""


def user_pages() -> list[Path]:
    """README.md, the VSIX's README and changelog, and every page of docs/ but the
    contributors' one."""
    docs = sorted((ROOT / "docs").rglob("*.md"))
    pages = [ROOT / "README.md", ROOT / "extension" / "README.md", ROOT / "CHANGELOG.md", *docs]
    return [p for p in pages if p.relative_to(ROOT).as_posix() not in CONTRIBUTOR_PAGES]


def all_pages() -> list[Path]:
    """The user pages, the contributors' pages and the integrations' READMEs."""
    integrations = sorted((ROOT / "integrations").rglob("*.md"))
    return sorted(
        {*user_pages(), *(ROOT / p for p in CONTRIBUTOR_PAGES), *integrations},
        key=lambda p: p.relative_to(ROOT).as_posix(),
    )


def distribution_name() -> str:
    """The name pyproject.toml publishes the package under (what `pipx install` takes)."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        name = tomllib.load(f)["project"]["name"]
    assert isinstance(name, str)
    return name


@dataclass(frozen=True)
class Link:
    """A link or image a page has: its target as written, and the line it is on."""

    target: str
    line: int
    image: bool


_IMG_SRC = re.compile(r"<img\b[^>]*\bsrc=[\"']([^\"']+)[\"']", re.IGNORECASE)


def links(page: Path) -> list[Link]:
    """Every link and image of `page` as Markdown renders them (not the look-alikes inside
    code spans and blocks), with the `<img src>` of inline HTML."""
    out: list[Link] = []

    def walk(tokens: list[Token], line: int) -> None:
        for token in tokens:
            at = token.map[0] + 1 if token.map else line
            if token.type == "link_open":
                out.append(Link(str(token.attrGet("href")), at, image=False))
            elif token.type == "image":
                out.append(Link(str(token.attrGet("src")), at, image=True))
            elif token.type in ("html_inline", "html_block"):
                out.extend(Link(src, at, image=True) for src in _IMG_SRC.findall(token.content))
            if token.children:
                walk(token.children, at)

    walk(MarkdownIt("commonmark").enable("table").parse(page.read_text(encoding="utf-8")), 1)
    return out


def is_relative(target: str) -> bool:
    """A link to a file of the repository (not a web address, a mail or a page anchor)."""
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) and not target.startswith(
        "#"
    )


def base_of(page: Path) -> Path:
    """What a page's relative links are relative to: its folder, except for the VSIX's
    README, whose links vsce resolves from the package root (package.json's folder)."""
    return ROOT if page == ROOT / "extension" / "README.md" else page.parent


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the page's headings: lower case, punctuation but `-` and `_`
    dropped, spaces as `-`, a repeated one numbered."""
    tokens = MarkdownIt("commonmark").enable("table").parse(page.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out: set[str] = set()
    for i, token in enumerate(tokens):
        if token.type != "heading_open":
            continue
        inline = tokens[i + 1]
        words = [c for c in inline.children or [] if c.type in ("text", "code_inline")]
        text = "".join(child.content for child in words)
        slug = re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out
