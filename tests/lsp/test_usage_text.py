"""Usage numbers (metis_memory.store.usage) and their texts (metis_memory.lsp.usage_text)."""

from __future__ import annotations

from metis_memory.lsp.usage_text import hover_markdown, lens_title, usage_json
from metis_memory.store.files import MemoryFile
from metis_memory.store.usage import Usage


def test_json_shape_for_the_status_bar() -> None:
    usages = {
        MemoryFile.USER: Usage(MemoryFile.USER, 10, "disk"),
        MemoryFile.MEMORY: Usage(MemoryFile.MEMORY, 2311, "buffer"),
    }
    assert usage_json(usages) == {
        "MEMORY.md": {
            "size_bytes": 2311,
            "soft_cap": 2048,
            "hard_cap": 4096,
            "over_soft_cap": True,
            "over_hard_cap": False,
            "source": "buffer",
            "level": "warning",
            "state": "over the soft cap: consolidate before adding more",
        },
        "USER.md": {
            "size_bytes": 10,
            "soft_cap": 1536,
            "hard_cap": 3072,
            "over_soft_cap": False,
            "over_hard_cap": False,
            "source": "disk",
            "level": "ok",
            "state": "within budget",
        },
    }


def test_lens_and_hover_texts() -> None:
    usage = Usage(MemoryFile.MEMORY, 2311, "buffer")
    assert lens_title(usage) == (
        "MEMORY.md: 2,311 B · 113% of 2,048 B soft cap · 56% of 4,096 B hard cap · over soft cap"
    )
    hover = hover_markdown(usage)
    assert hover.startswith("**MEMORY.md** — over soft cap (editor buffer, UTF-8 bytes)")
    assert "| size | 2,311 | |" in hover
    assert "| soft cap | 2,048 | 113% |" in hover
    assert "| hard cap | 4,096 | 56% |" in hover


def test_status_at_the_edges() -> None:
    assert Usage(MemoryFile.USER, 1536, "disk").status == "within caps"
    assert Usage(MemoryFile.USER, 1537, "disk").status == "over soft cap"
    assert Usage(MemoryFile.USER, 3073, "disk").status == "over hard cap"


def test_an_unreadable_file_is_an_error_whose_state_says_why() -> None:
    usage = Usage(MemoryFile.USER, 0, "disk", error="a directory, not a file")
    assert (usage.level, usage.state) == ("error", "cannot be read — a directory, not a file")
    over = Usage(MemoryFile.USER, 3073, "disk")
    assert (over.level, over.state) == (
        "error",
        "over the hard cap: writes are refused until it is consolidated",
    )
