"""How the memory is marked off from the rest of an agent's context, so that what an entry
says can never pass for something outside the memory."""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # (not at run time: the hook before every prompt imports this module)
    from collections.abc import Callable

OPEN_TAG, CLOSE_TAG = "<metis-memory>", "</metis-memory>"

_TAG = re.compile(r"<(?=\s*(?:/\s*)?metis-memory)", re.IGNORECASE)
_BRACKET = re.compile(r"(\[\s*(?:/\s*)?metis)(-memory)", re.IGNORECASE)


def neutralise_tags(text: str) -> str:
    """`text` with the `<` of every `<metis-memory>` or `</metis-memory>` (any case, any
    spacing, any attributes) written `&lt;`.

    What an entry says must stay inside the tag that wraps the memory: an entry holding
    `</metis-memory>` would otherwise end it early, and the lines after it would read as
    instructions from outside the memory. `&lt;` is the escape HTML and XML use for that
    very character: visible, read back by any human or model at a glance, and no parser or
    model takes `&lt;/metis-memory>` for a closing tag. Invisible characters (a zero-width
    space inside the tag) would hide the change from a user reading the transcript and
    survive copy-paste back into memory; a lookalike `<` would too.
    """
    return _TAG.sub("&lt;", text)


def neutralise_brackets(text: str) -> str:
    """`text` with every `[metis-memory]` or `[/metis-memory]` (any case, any spacing)
    written `[metis\\-memory]`: the same guard as `neutralise_tags`, for the bracket
    delimiters. The Markdown escape goes inside the word, so that the text no longer holds
    the delimiter at all (a model does not read `\\[` as an escape)."""
    return _BRACKET.sub(r"\1\\\2", text)


class Delimiters:
    """How the memory is marked off from the rest of the context."""

    __slots__ = ("close", "neutralise", "open")

    def __init__(self, open: str, close: str, neutralise: Callable[[str], str]) -> None:
        self.open = open
        self.close = close
        self.neutralise = neutralise
        """Makes what the memory says unable to close the delimiters early."""


TAGS = Delimiters(OPEN_TAG, CLOSE_TAG, neutralise_tags)
BRACKETS = Delimiters("[metis-memory]", "[/metis-memory]", neutralise_brackets)
"""For a host that escapes `<` and `>` in hook context (Gemini CLI writes them `&lt;` and
`&gt;`, so the model would read `&lt;metis-memory&gt;`): brackets pass through unchanged."""
