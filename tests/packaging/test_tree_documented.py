"""docs/engineering.md's "Where things live" (its Python part) names every module of the
package, and none that is gone: a reader finds the room for a change from that page and `ls`
alike."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "server" / "metis_memory"
FEATURES = PACKAGE / "lsp" / "features"


def where_things_live() -> str:
    text = (ROOT / "docs" / "engineering.md").read_text(encoding="utf-8")
    start = text.index("## Where things live")
    return text[start : text.index("TypeScript (`extension/src/`)", start)]


def modules() -> list[Path]:
    """Every module but a subpackage's `__init__.py` (its package is what the page names)."""
    return sorted(
        p
        for p in PACKAGE.rglob("*.py")
        if "__pycache__" not in p.parts and not (p.name == "__init__.py" and p.parent != PACKAGE)
    )


def test_every_module_is_named_where_things_live() -> None:
    section = where_things_live()
    named = set(re.findall(r"`([\w/.]+?\.py)`", section))
    named_bare = {n.rsplit("/", 1)[-1] for n in named}
    features = set(re.findall(r"`(\w+)`", section))
    missing = [
        str(p.relative_to(PACKAGE))
        for p in modules()
        if p.name not in named_bare and not (p.parent == FEATURES and p.stem in features)
    ]
    assert missing == [], f"modules docs/engineering.md does not name: {missing}"


def test_every_module_named_where_things_live_exists() -> None:
    present = {p.name for p in PACKAGE.rglob("*.py")}
    named = {
        n.rsplit("/", 1)[-1]
        for n in re.findall(r"`([\w/.]+?\.py)`", where_things_live())
        if not n.startswith("tests/")
    }
    assert sorted(named - present) == [], "docs/engineering.md names modules that are gone"
