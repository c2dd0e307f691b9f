"""docs/engineering.md's "Where things live" (its Python part) names every module of the
package in the row of its own package, and none that is gone: a reader finds the room for a
change from that page and `ls` alike."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "server" / "metis_memory"
LSP_CORE = "The language server (`lsp/`)"
"""The sentence before the table of `lsp/`'s own modules."""


def where_things_live() -> str:
    text = (ROOT / "docs" / "engineering.md").read_text(encoding="utf-8")
    start = text.index("## Where things live")
    return text[start : text.index("TypeScript (`extension/src/`)", start)]


def documented() -> set[PurePosixPath]:
    """Each module a row names, as a path in the package: a row's first cell says which
    package(s) its names are in (`store/`; `lsp/` | `mcp/`; a top-level module; in the
    `lsp/` table, `lsp/` itself, or `features/` for the features, named without `.py`)."""
    out: set[PurePosixPath] = set()
    in_lsp = False
    for line in where_things_live().splitlines():
        in_lsp = in_lsp or line.startswith(LSP_CORE)
        if not line.startswith("| `"):
            continue
        first = line.split(" | ", 1)[0]
        packages = re.findall(r"`([\w/]+?)/`", first)  # `hosts/imports/`: a subpackage
        if in_lsp:
            packages = ["lsp/features"] if packages == ["features"] else ["lsp"]
        if not packages:
            packages = [""]  # the top level: `entry.py`, `cli.py`
        for name in re.findall(r"`([\w/.]+?)`", line):
            if name.startswith("tests/"):
                continue
            if not name.endswith(".py"):
                if packages != ["lsp/features"] or not name.isidentifier():
                    continue
                name += ".py"
            for package in packages:
                head, _, leaf = name.rpartition("/")
                if head and not package.endswith(head):
                    continue
                out.add(PurePosixPath(package, leaf))
    return out


def modules() -> set[PurePosixPath]:
    """Every module but a subpackage's `__init__.py` (its package is what the page names)."""
    return {
        PurePosixPath(p.relative_to(PACKAGE).as_posix())
        for p in PACKAGE.rglob("*.py")
        if "__pycache__" not in p.parts and not (p.name == "__init__.py" and p.parent != PACKAGE)
    }


def test_every_module_is_named_in_its_packages_row() -> None:
    missing = sorted(str(m) for m in modules() - documented())
    assert missing == [], f"modules docs/engineering.md does not name in their row: {missing}"


def test_every_module_named_where_things_live_exists() -> None:
    present = {p.name for p in PACKAGE.rglob("*.py")}
    gone = sorted(str(m) for m in documented() if m.name not in present)
    assert gone == [], f"docs/engineering.md names modules that are gone: {gone}"
