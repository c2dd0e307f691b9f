"""How the memory is marked off from the rest of an agent's context, so that what an entry
says can never pass for something outside the memory.

An entry may spell a delimiter in any way that reads as one: the literal tag, but also
with invisible characters inside it (a zero-width space, a word joiner, a soft hyphen),
blanks after its opener (a Braille blank), in another case, with accents, with look-alike
characters (a non-breaking hyphen, a fullwidth `＜`, a tortoise-shell `❲` for `[`, a
Cyrillic `е`, a `1` for `i`), with `_`, a space or nothing between its words, or with HTML
character references (`&#91;`). Candidates are found on the text as a reader sees it
(`_seen`), and the escape is then made on the original text, visibly, at the character
that opens the delimiter. What a reader sees:

- Character references (`&#91;`, `&#x5B;`, `&lsqb;`) are read as the character they name,
  except, for the tags, one that names `<`: `&lt;` is the tags' own escape (below), so a
  reference to `<` is text by the very argument that makes the escape safe.
- What renders as nothing is dropped: every Default_Ignorable_Code_Point (Unicode's own
  list of what renders as nothing by default, reserved code points in its ranges included),
  and every other format character, control (but white space) and combining mark. A mark
  is dropped with the letter it sits on kept: `métis` (composed or not) reads as `metis`,
  as a skimming reader or a model reads it, and escaping it costs nothing.
- Tag characters (U+E0020..E007E) are also read as the ASCII they shadow, in a second
  reading: they render as nothing, yet models read them ("ASCII smuggling").
- What shows as a gap reads as a space: white space of every kind, and the two symbols
  whose glyph is empty (U+2800 BRAILLE PATTERN BLANK, U+1D159 MUSICAL SYMBOL NULL NOTEHEAD).
- Every other character is folded by NFKD and case, and read as what it imitates
  (`_LOOKALIKES`); every dash reads as `-`, every connector (`‿`, `＿`) as `_`. A letter
  with a stroke, bar or hook that NFKD leaves whole (`ø`, `ɨ`, `ŧ`, `ɱ`, `ɏ`) reads as its
  base letter, as `o` with a combining stroke does; a math symbol drawn as `<` with
  something added (`≺`, `⋖`, `≤`, `≪`) reads as `<`.

Left as written, on purpose: private-use, unassigned (outside the default-ignorable
ranges) and U+FFFC characters, which are drawn as a box; spacing marks, which take room;
turned, reversed and ligature letters (`ᴚ`, `ɶ`); a closed or two-way `<` (`◁`, `⧀`, `≶`);
spaces inside a word of the name (`</m etis-memory>`); a right-to-left override that makes
reversed text display as the tag (models read the logical order).
"""

from __future__ import annotations

import re
import unicodedata

TYPE_CHECKING = False
if TYPE_CHECKING:  # (not at run time: the hook before every prompt imports this module)
    from collections.abc import Callable

OPEN_TAG, CLOSE_TAG = "<metis-memory>", "</metis-memory>"

_M = "(?:m|rn)"  # (`rn` reads as `m` in many fonts: Unicode's confusables list it)
_NAME = rf"{_M}etis([-_\s]*){_M}e{_M}ory"
"""The name, its words joined by any run of dashes, underscores and blanks, or by none."""
_SLASHES = r"[\s/\\]*"
"""Blanks and slashes of either kind: `<\\metis-memory>` (the wrong slash) and
`<\\/metis-memory>` (the slash as JSON may escape it) still read as a closing tag."""
_TAG = rf"<{_SLASHES}{_NAME}"
_BRACKET = rf"\[{_SLASHES}{_NAME}"
# (Patterns are compiled on first use, through `re`'s own cache: the hook that answers an
# unchanged prompt imports this module and never neutralises anything.)

# Look-alikes that NFKD and case folding leave apart, read as what they imitate:
# - From Unicode's confusables (UTS #39 confusables.txt, as confusable-homoglyphs 3.3.1
#   ships it): every single-character confusable of `< > / \ - _`, of `l` and `I` (read as
#   `i`, like `l` itself), and of each letter of `metis-memory` in either case. It lists
#   none for `[` or `]`.
# - Brackets, by their Unicode names: a left (right) bracket drawn square reads as `[`
#   (`]`): SQUARE, WHITE SQUARE, TORTOISE SHELL, LENTICULAR, CORNER and HALF brackets, and
#   CEILING and FLOOR; one drawn as an angle reads as `<` (`>`): every ANGLE BRACKET and
#   ANGLE QUOTATION MARK, single or double. A single SOLIDUS (BIG, DOTTED, VERY HEAVY, WITH
#   OVERBAR...) reads as `/`, a REVERSE one as `\`. Parentheses and braces are not listed:
#   `(/metis-memory)` reads as itself.
# - What a reader takes for a letter that the list does not name: the small capitals
#   ᴍ ᴇ ᴛ, the lower case of listed capitals (μ τ υ ⲧ ⲩ ⲙ...).
# - Letters, by their Unicode names: a Latin letter X (small, capital, small capital,
#   modifier, superscript or subscript; BARRED or DOTLESS too) WITH anything (a stroke, bar,
#   hook, tail, curl, tilde, loop...) reads as x, `l` as `i`: the marked letters that have no
#   decomposition (`ø` has none, while `o` and U+0338 reads as `o` once the mark is dropped).
#   Listed here as NFKD and case folding leave them (`Ø` folds to `ø`, `ᶬ` to `ɱ`); one that
#   NFKD spells as two visible characters (`ŀ` is `l·`) is read as it spells it.
# - `<` (`>`), by name: a math symbol (Sm) whose name holds LESS-THAN or PRECEDES (GREATER-THAN
#   or SUCCEEDS) but not the other direction, and is not CIRCLED, QUAD, CLOSED, with an ARC
#   or an ARROW: the symbol is drawn as `<` with a dot, a bar, a tilde or a second angle
#   added (`⋖ ≤ ≲ ≺ ≪ ⪡`). Triangles (`◁`) and pointing hands are closed shapes, not angles.
# (tests/hosts/test_delimiter_spellings.py recomputes both sets from Unicode's names.)
_LOOKALIKES: dict[str, str] = {
    **dict.fromkeys("«˂ᐸᚲ‹❬❮❰⟨⟪⦑⧼〈《\U0001d236", "<"),
    **dict.fromkeys("»˃ᐳ›❭❯❱⟩⟫⦒⧽〉》\U00016f3f\U0001d237", ">"),
    **dict.fromkeys("᜵⁁⁄∕╱⟋⧶⧸Ⳇⳇ⹊〳ノ㇓丿\U0001d23a\U0001f67c", "/"),
    **dict.fromkeys("∖⟍⧵⧷⧹㇔丶\U0001d20f\U0001d23b\U0001f67d", "\\"),
    **dict.fromkeys("⁅⌈⌊⎡⎢⎣❲⟦⟬⦋⦍⦏⦗⸢⸤⹕⹗「『【〔〖〘〚", "["),
    **dict.fromkeys("⁆⌉⌋⎤⎥⎦❳⟧⟭⦌⦎⦐⦘⸣⸥⹖⹘」』】〕〗〙〛", "]"),
    **dict.fromkeys("˗۔⁃−➖Ⲻⲻ", "-"),
    "ߺ": "_",
    **dict.fromkeys(
        "ΜμϺϻМмᎷᗰᛖᴍⲘⲙꓟ\U000102b0\U00010311\U0001d6b3\U0001d6ed\U0001d727\U0001d761\U0001d79b",
        "m",
    ),
    **dict.fromkeys(
        "ΕεеҽᎬᴇ℮⋿ⴹꓰꬲ\U00010286\U000118a6\U000118ae\U000118c6\U000118ce\U0001d6ac\U0001d6e6"
        "\U0001d720\U0001d75a\U0001d794",
        "e",
    ),
    **dict.fromkeys(
        "ΤτТтᎢᴛ⊤⟙Ⲧⲧꓔ\U00010297\U000102b1\U00010315\U000118bc\U00016f0a\U0001d6bb\U0001d6f5"
        "\U0001d72f\U0001d769\U0001d7a3\U0001f768",
        "t",
    ),
    **dict.fromkeys(
        "1l|ıǀɩɪ˛ͺιіӏ׀וןا١۱ߊᎥᛁ∣⍳⏽Ⲓⵏꓲꙇ￨\U0001028a\U00010309\U00010320\U000118c3\U00016f28\U0001e8c7",
        "i",
    ),
    **dict.fromkeys("ƽѕՏտᏕᏚꓢꜱ\U00010296\U00010448\U000118c1\U00016f3a", "s"),
    **dict.fromkeys(
        "0οσоօסه٥ھہە۵߀०০੦૦ଠ୦௦\u0c02౦\u0c82೦\u0d02ഠ൦\u0d82๐໐ဝ၀ჿዐᴏᴑⲟⵔ〇ꓳꬽ\U00010292\U000102ab"
        "\U0001042c\U000104ea\U00010516\U000114d0\U000118b5\U000118c8\U000118d5\U000118d7"
        "\U000118e0",
        "o",
    ),
    **dict.fromkeys("ƦʀгᎡᎱᏒᖇᴦⲅꓣꭇꭈꮁ\U000104b4\U000104dc\U00016f35\U0001d216", "r"),
    **dict.fromkeys(
        "ɣʏΥγυϒуүყᎩᎽᶌỿⲨⲩꓬꭚ\U000102b2\U000118a4\U000118c4\U000118dc\U00016f43\U0001d6bc"
        "\U0001d6f6\U0001d730\U0001d76a\U0001d7a4",
        "y",
    ),
    # (by name: letters with a stroke, bar, hook...; `<` and `>` with something added)
    **dict.fromkeys("ɱᵯᶆꬺ", "m"),
    **dict.fromkeys("ɇᶒⱸꬳꬴ", "e"),
    **dict.fromkeys("ŧƫƭȶʈᵵⱦ\U0001df09", "t"),
    **dict.fromkeys("łƚȴɨɫɬɭʟᴌᶅᶖⱡꝉꞎꬷꬸꬹ\U0001df04\U0001df11\U0001df13\U0001df1a", "i"),
    **dict.fromkeys("ȿʂᵴᶊꞩꟊ\U0001df1e", "s"),
    **dict.fromkeys("øɵⱺꝋꝍ\U0001df1b", "o"),
    **dict.fromkeys("ɍɼɽɾᵲᵳᶉꞧꭆꭉ\U0001df16", "r"),
    **dict.fromkeys("ƴɏ", "y"),
    **dict.fromkeys("≤≦≨≪≲≺≼≾⊰⋖⋘⋜⋞⋦⋨⩹⩻⩽⩿⪁⪃⪅⪇⪉⪍⪕⪗⪙⪛⪝⪟⪡⪣⪯⪱⪳⪵⪷⪹⪻⫷⫹", "<"),
    **dict.fromkeys("≥≧≩≫≳≻≽≿⊱⋗⋙⋝⋟⋧⋩⩺⩼⩾⪀⪂⪄⪆⪈⪊⪎⪖⪘⪚⪜⪞⪠⪢⪰⪲⪴⪶⪸⪺⪼⫸⫺", ">"),
}

_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)  # fmt: skip
"""Default_Ignorable_Code_Point, from Unicode 15.0's DerivedCoreProperties.txt: the ranges,
so that it holds whatever Unicode version Python's `unicodedata` knows."""
_IGNORABLE_BMP = frozenset(chr(i) for a, b in _IGNORABLE if b <= 0xFFFF for i in range(a, b + 1))


def _ignorable(ch: str) -> bool:
    """Whether `ch` is a Default_Ignorable_Code_Point."""
    if ch <= "\uffff":
        return ch in _IGNORABLE_BMP
    return any(a <= ord(ch) <= b for a, b in _IGNORABLE if a > 0xFFFF)


_BLANK = frozenset("\u2800\U0001d159")
"""Symbols (So) whose glyph is empty: they show as a space."""

_SPACES = frozenset(" \t\n\r\f\v")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_DROPPED = frozenset(("Cf", "Mn", "Me", "Cc"))
_TAG_CHARACTER = "[\U000e0020-\U000e007e]"

_REFERENCE = r"&(?:#[xX]0*([0-9a-fA-F]{1,6});?|#0*([0-9]{1,7});?|([A-Za-z][A-Za-z0-9]{1,31});)"
"""An HTML character reference: numeric (its `;` optional, as HTML reads it; leading zeros
any number) or named (with its `;`)."""


def _fold(c: str) -> str:
    """What `c` reads as: "" for a character that renders as nothing, " " for one that shows
    as a gap, else its NFKD and case folding with look-alikes read as what they imitate."""
    if c in _SPACES:
        return c
    meant = _LOOKALIKES.get(c)
    if meant is not None:
        return meant
    out = []
    for ch in unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", c).casefold()):
        if ch.isspace() or ch in _BLANK:
            out.append(" ")
            continue
        category = unicodedata.category(ch)
        if category in _DROPPED or _ignorable(ch):
            continue
        ch = _LOOKALIKES.get(ch, ch)
        if ch >= "\x80":
            ch = "-" if category == "Pd" else "_" if category == "Pc" else ch
        out.append(ch)
    return "".join(out)


def _fold_tag_as_ascii(c: str) -> str:
    """`_fold`, with a tag character read as the ASCII character it shadows."""
    if "\U000e0020" <= c <= "\U000e007e":
        return _fold(chr(ord(c) - 0xE0000))
    return _fold(c)


_FOLDED: dict[str, str] = {chr(i): _fold(chr(i)) for i in range(128)}
_ASCII = str.maketrans({c: f for c, f in _FOLDED.items() if f != c and len(f) == 1})


def _seen_ascii(text: str) -> str:
    """`_seen` for ASCII text without controls or references: one character for one."""
    return text.translate(_ASCII)


_PLAIN = r"[\t-\r -~]{16,}"
"""A run of ASCII without controls, long enough to be worth reading in one go."""


def _references(text: str, literal: str) -> list[tuple[int, int, str]]:
    """Where `text` holds a character reference, and the character(s) it names: `(start,
    end, named)`. A reference whose character reads as `literal` is left out."""
    found = []
    named_by: dict[str, str | None] = {}
    for ref in re.finditer(_REFERENCE, text):
        spelled = ref.group()
        if spelled not in named_by:
            import html  # (only for a text that holds a reference: it costs the hook 1.5 ms)

            hexadecimal, decimal, name = ref.groups()
            if name is None:
                code = int(hexadecimal or decimal, 16 if hexadecimal else 10)
                named: str | None = html.unescape(f"&#{code};")
            else:
                named = html.unescape(f"&{name};")
                named = None if named == f"&{name};" else named
            if named and literal and literal in "".join(_fold(c) for c in named):
                named = None
            named_by[spelled] = named
        named = named_by[spelled]
        if named is not None:
            found.append((ref.start(), ref.end(), named))
    return found


def _seen(
    text: str, fold: Callable[[str], str], references: list[tuple[int, int, str]]
) -> tuple[str, list[int]]:
    """`text` as a reader sees it, and for each of its characters the index in `text` of
    the character (or reference) it came from. Linear: one fold per distinct character,
    runs of plain ASCII read in one go."""
    folded: list[str] = []
    origin: list[int] = []
    cache = dict(_FOLDED)  # (per call: a module-wide one would grow with every text)

    def one_by_one(at: int, stop: int) -> None:
        for i, c in enumerate(text[at:stop], at):
            f = cache.get(c)
            if f is None:
                f = cache[c] = fold(c)
            if f:
                folded.append(f)
                origin.extend([i] * len(f))

    plain = re.compile(_PLAIN)
    at = 0
    for start, end, named in [*references, (len(text), len(text), "")]:
        for run in plain.finditer(text, at, start):
            one_by_one(at, run.start())
            folded.append(_seen_ascii(run.group()))
            origin.extend(range(run.start(), run.end()))
            at = run.end()
        one_by_one(at, start)
        f = "".join(fold(c) for c in named)
        folded.append(f)
        origin.extend([start] * len(f))
        at = end
    return "".join(folded), origin


def _escaped(text: str, pattern: str, at_separator: bool, escape: str) -> str:
    """`text` with `escape` put at each match of `pattern` in what a reader sees: in place
    of the character that opens it, or (`at_separator`) before the first character of what
    joins its words (before the second word when nothing does)."""
    references = _references(text, "" if at_separator else "<") if "&" in text else []
    readings: list[tuple[str, list[int] | None]]
    if not references and text.isascii() and not _CONTROL.search(text):
        readings = [(_seen_ascii(text), None)]  # (most memory: one character for one)
    else:
        readings = [_seen(text, _fold, references)]
        if re.search(_TAG_CHARACTER, text):
            readings.append(_seen(text, _fold_tag_as_ascii, references))
    points = set()
    for seen, origin in readings:
        for match in re.finditer(pattern, seen):
            at = match.start(1) if at_separator else match.start()
            points.add(at if origin is None else origin[at])
    if not points:
        return text
    out, last = [], 0
    for at in sorted(points):
        out.append(text[last:at])
        out.append(escape)
        last = at if at_separator else at + 1
    out.append(text[last:])
    return "".join(out)


def neutralise_tags(text: str) -> str:
    """`text` with the character that opens every spelling of `<metis-memory>` or
    `</metis-memory>` (any case, any spacing, any attributes, invisible characters,
    accents or look-alikes inside, `_` or nothing between its words) written `&lt;`.

    What an entry says must stay inside the tag that wraps the memory: an entry holding
    `</metis-memory>` would otherwise end it early, and the lines after it would read as
    instructions from outside the memory. `&lt;` is the escape HTML and XML use for that
    very character: visible, read back by any human or model at a glance, and no parser or
    model takes `&lt;/metis-memory>` for a closing tag.
    """
    return _escaped(text, _TAG, False, "&lt;")


def neutralise_brackets(text: str) -> str:
    """`text` with every spelling of `[metis-memory]` or `[/metis-memory]` written with a
    `\\` before what joins its words (`[metis\\-memory]`, `[metis\\memory]`): the same guard
    as `neutralise_tags`, for the bracket delimiters. The Markdown escape goes inside the
    name, so that the text no longer holds the delimiter at all (a model does not read `\\[`
    as an escape)."""
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
