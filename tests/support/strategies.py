"""Hypothesis strategies for the analysis tests: Markdown-ish memory files."""

from __future__ import annotations

from hypothesis import strategies as st

WORDS = ["fact", "Fact", "use make", "café", "日本語", "😀", "naïve", "x", "", "  "]
LINE_SHAPES = [
    "- {w}",
    "* {w}",
    "1. {w}",
    "  - {w}",
    "    {w}",
    "{w}",
    "# {w}",
    "## {w}",
    "",
    "   ",
    "---",
    "===",
    "-",
    "```",
    "~~~",
    "{w} {w}",
]


@st.composite
def memory_lines(draw: st.DrawFn) -> str:
    shape = draw(st.sampled_from(LINE_SHAPES))
    return shape.replace("{w}", draw(st.sampled_from(WORDS)), 1).replace(
        "{w}", draw(st.sampled_from(WORDS))
    )


@st.composite
def memory_texts(draw: st.DrawFn) -> str:
    lines = draw(st.lists(memory_lines(), max_size=25))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    trailing = draw(st.sampled_from(["", newline, newline * 2, "  " + newline]))
    return newline.join(lines) + trailing
