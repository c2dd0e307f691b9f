"""How the memory is marked off from the rest of an agent's context, so that what an entry
says can never pass for something outside the memory.

An entry may spell a delimiter in any way that reads as one: the literal tag, but also
with invisible characters inside it (a zero-width space, a word joiner, a soft hyphen),
in another case, or with look-alike characters (a non-breaking hyphen, a fullwidth `＜`,
a Cyrillic `е`). Candidates are found on the text as a reader sees it (`_seen`): every
character that renders as nothing dropped, the rest folded by NFKC and case, and the
look-alikes of the delimiters' own characters read as what they imitate. The escape is
then made on the original text, visibly, at the character that opens the delimiter.
"""

from __future__ import annotations

import re
import unicodedata

TYPE_CHECKING = False
if TYPE_CHECKING:  # (not at run time: the hook before every prompt imports this module)
    from collections.abc import Callable

OPEN_TAG, CLOSE_TAG = "<metis-memory>", "</metis-memory>"

_M = "(?:m|rn)"  # (`rn` reads as `m` in many fonts: Unicode's confusables list it)
_NAME = f"{_M}etis(-){_M}e{_M}ory"
_TAG = re.compile(rf"<\s*(?:/\s*)?{_NAME}")
_BRACKET = re.compile(rf"\[\s*(?:/\s*)?{_NAME}")

# Look-alikes of the characters the delimiters are spelled with that NFKC and case
# folding leave apart, from Unicode's confusables (UTS #39 confusables.txt, as
# confusable-homoglyphs 3.3.1 ships it: every single-character confusable of `< > / [ ] -`
# and of the letters of `metis-memory`, either case), plus what a reader takes for them
# that the list does not name: angle brackets for `<`, the small capitals ᴍ ᴇ ᴛ for their
# letters (it names ɪ ꜱ ᴏ ʀ ʏ). Every dash (category Pd) reads as `-`.
_LOOKALIKES: dict[str, str] = {
    "ᴍ": "m",
    "ᴇ": "e",
    "ᴛ": "t",
    **dict.fromkeys("˗۔⁃−➖ⲻ", "-"),
    **dict.fromkeys("᜵⁁⁄∕╱⟋⧸ⳇ〳ノ㇓丿\U0001d23a", "/"),
    **dict.fromkeys("˂ᐸᚲ‹❮\U0001d236〈⟨❬⧼", "<"),
    **dict.fromkeys("˃ᐳ›❯\U00016f3f\U0001d237〉⟩❭⧽", ">"),
    **dict.fromkeys("εеҽᎬ℮⋿ⴹꓰꬲ\U00010286\U000118c6\U000118ce", "e"),
    **dict.fromkeys("lıɩɪιіӏᎥ⍳ꙇ\U000118c3", "i"),
    **dict.fromkeys("μϻмᎷᗰᛖⲙꓟ\U000102b0\U00010311", "m"),
    **dict.fromkeys(
        "0οσоօסه٥ھہە۵߀०০੦૦ଠ୦௦ం౦ಂ೦ംഠ൦ං๐໐ဝ၀ჿዐᴏᴑⲟⵔ〇ꓳꬽ\U00010292\U000102ab\U0001042c"
        "\U000104ea\U00010516\U000114d0\U000118c8\U000118d5\U000118d7\U000118e0",
        "o",
    ),
    **dict.fromkeys("ʀгᎡᎱᏒᖇᴦⲅꓣꭇꭈ\U000104dc\U00016f35\U0001d216", "r"),
    **dict.fromkeys("ƽѕտᏕᏚꓢꜱ\U00010296\U00010448\U000118c1\U00016f3a", "s"),
    **dict.fromkeys("τтᎢ⊤⟙ⲧꓔ\U00010297\U000102b1\U00010315\U00016f0a\U0001f768", "t"),
    **dict.fromkeys("ɣʏγυуүყᎩᎽᶌỿⲩꓬꭚ\U000102b2\U000118c4\U00016f43", "y"),
}

_BLANK = frozenset("\u115f\u1160\u3164\uffa0")
"""Hangul fillers: letters (Lo) that render as nothing."""

_SPACES = frozenset(" \t\n\r\f\v")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")


def _fold(c: str) -> str:
    """What `c` reads as: "" for a character that renders as nothing (format characters,
    combining and enclosing marks, controls other than white space), else its NFKC and
    case folding with look-alikes read as what they imitate."""
    if c in _SPACES:
        return c
    out = []
    for ch in unicodedata.normalize("NFKC", c).casefold():
        if ch in _BLANK or unicodedata.category(ch) in ("Cf", "Mn", "Me", "Cc"):
            continue
        ch = _LOOKALIKES.get(ch, ch)
        if ch >= "\x80" and unicodedata.category(ch) == "Pd":
            ch = "-"
        out.append(ch)
    return "".join(out)


_FOLDED: dict[str, str] = {chr(i): _fold(chr(i)) for i in range(128)}


def _seen(text: str) -> tuple[str, list[int]]:
    """`text` as a reader sees it, and for each of its characters the index in `text` of
    the character it came from. Linear: one fold per distinct character."""
    folded: list[str] = []
    origin: list[int] = []
    cache = dict(_FOLDED)  # (per call: a module-wide one would grow with every text)
    for i, c in enumerate(text):
        f = cache.get(c)
        if f is None:
            f = cache[c] = _fold(c)
        if f:
            folded.append(f)
            origin.extend([i] * len(f))
    return "".join(folded), origin


def _escaped(text: str, pattern: re.Pattern[str], at_dash: bool, escape: str) -> str:
    """`text` with `escape` put at each match of `pattern` in what a reader sees: in place
    of the character that opens it, or (`at_dash`) before the one that reads as its `-`."""
    origin: list[int] | None = None
    if text.isascii() and not _CONTROL.search(text):  # (most memory: one char for one)
        seen = text.lower().replace("l", "i").replace("0", "o")
    else:
        seen, origin = _seen(text)
    points = []
    for match in pattern.finditer(seen):
        at = match.start(1) if at_dash else match.start()
        points.append(at if origin is None else origin[at])
    if not points:
        return text
    out, last = [], 0
    for at in points:
        out.append(text[last:at])
        out.append(escape)
        last = at if at_dash else at + 1
    out.append(text[last:])
    return "".join(out)


def neutralise_tags(text: str) -> str:
    """`text` with the character that opens every spelling of `<metis-memory>` or
    `</metis-memory>` (any case, any spacing, any attributes, invisible characters or
    look-alikes inside) written `&lt;`.

    What an entry says must stay inside the tag that wraps the memory: an entry holding
    `</metis-memory>` would otherwise end it early, and the lines after it would read as
    instructions from outside the memory. `&lt;` is the escape HTML and XML use for that
    very character: visible, read back by any human or model at a glance, and no parser or
    model takes `&lt;/metis-memory>` for a closing tag.
    """
    return _escaped(text, _TAG, False, "&lt;")


def neutralise_brackets(text: str) -> str:
    """`text` with every spelling of `[metis-memory]` or `[/metis-memory]` written with a
    `\\` before the character that reads as its `-` (`[metis\\-memory]`): the same guard as
    `neutralise_tags`, for the bracket delimiters. The Markdown escape goes inside the word,
    so that the text no longer holds the delimiter at all (a model does not read `\\[` as
    an escape)."""
    return _escaped(text, _BRACKET, True, "\\")


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
