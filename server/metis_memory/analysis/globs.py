"""The one glob matcher: budgets' globs (built-in and `.metis/budgets.toml`), Copilot's
`applyTo`, and the walk of `check`.

A cloned repository writes these globs, so their cost is bounded here, once. wcmatch
compiles each `*` to an atomic group, so a folder name's stars match in linear time (the
hand-written `[^/]*` per star it replaces never returned on a glob of many stars). What
wcmatch does not bound is bounded here: each `**` multiplies the work by the path's depth
(eight of them against a 32-level path: 3 s), so a glob holds at most `MAX_GLOBSTARS`;
brace expansion stops at `MAX_EXPANSIONS`; and compiling costs about 16 ms per 1,000
characters of the expanded globs, so a glob is at most `MAX_GLOB_CHARS` and its
alternatives together `MAX_EXPANDED_CHARS`. Past a bound,
`GlobTooComplex` says which, and the caller decides what that means (a problem in
`budgets.toml`; "cannot tell" for `applyTo`).

Syntax: `**` any folders (or none), `*` and `?` within one folder name, `[...]` a class,
`{a,b}` alternatives when `braces` is asked; dot files match like any other.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wcmatch.glob import WcMatcher

MAX_GLOB_CHARS = 512
MAX_EXPANSIONS = 64
"""Brace alternatives one glob may expand to: `*.{ts,tsx}` is 2, seventeen `{a,b}` groups
are 131,072 (the language server once stopped answering for 30 s on those)."""
MAX_EXPANDED_CHARS = 4_096
MAX_GLOBSTARS = 2


class GlobTooComplex(ValueError):
    """A glob past a bound; its text says which bound and the numbers."""


def expand_braces(text: str, limit: int) -> list[str]:
    """`text`'s brace alternatives (`a{b,c}` is `ab`, `ac`), at most `limit` of them: the one
    brace expansion of text a repository wrote. Past the limit (or nested past Python's
    recursion), GlobTooComplex."""
    import bracex

    try:
        return list(bracex.iexpand(text, limit=limit))
    except (bracex.ExpansionLimitException, RecursionError) as exc:
        raise GlobTooComplex(f"its braces expand to over {limit:,} alternatives") from exc


@functools.lru_cache(maxsize=2048)
def compile_glob(glob: str, *, braces: bool = False, ignore_case: bool = False) -> WcMatcher[str]:
    """The compiled glob; raises GlobTooComplex past a bound."""
    from wcmatch import glob as wcglob
    from wcmatch._wcparse import PatternLimitException  # raised by compile; not re-exported

    if len(glob) > MAX_GLOB_CHARS:
        raise GlobTooComplex(
            f"the glob is {len(glob):,} characters, over the {MAX_GLOB_CHARS:,} allowed"
        )
    globstars = globstar_count(glob)
    if globstars > MAX_GLOBSTARS:
        raise GlobTooComplex(
            f"the glob has {globstars} `**` folders, over the {MAX_GLOBSTARS} allowed (each "
            "multiplies the work by the depth of the path)"
        )
    if braces:
        try:
            expanded = sum(map(len, expand_braces(glob, MAX_EXPANSIONS)))
        except GlobTooComplex as exc:
            raise GlobTooComplex(
                f"the glob's braces expand to over {MAX_EXPANSIONS:,} alternatives"
            ) from exc
        if expanded > MAX_EXPANDED_CHARS:
            raise GlobTooComplex(
                f"the glob's alternatives come to {expanded:,} characters, over the "
                f"{MAX_EXPANDED_CHARS:,} allowed"
            )
    flags = wcglob.GLOBSTAR | wcglob.DOTGLOB | wcglob.NOUNIQUE
    if braces:
        flags |= wcglob.BRACE
    if ignore_case:
        flags |= wcglob.IGNORECASE
    try:
        return wcglob.compile(glob, flags=flags, limit=MAX_EXPANSIONS)
    except (PatternLimitException, RecursionError) as exc:
        raise GlobTooComplex(
            f"the glob's braces expand to over {MAX_EXPANSIONS:,} alternatives"
        ) from exc


def globstar_count(glob: str) -> int:
    """`**` that stand for any folders: whole path segments (`a**b` is `a*b`)."""
    return sum(part == "**" for part in glob.split("/"))


def glob_matches(glob: str, path: str, *, braces: bool = False, ignore_case: bool = False) -> bool:
    """Whether the relative posix `path` matches `glob`; a glob past a bound matches nothing."""
    try:
        matcher = compile_glob(glob, braces=braces, ignore_case=ignore_case)
    except GlobTooComplex:
        return False
    return bool(matcher.match(path))


def split_outside_braces(text: str, *, at_whitespace: bool = False) -> list[str]:
    """`**/*.ts,**/*.{js,jsx}` -> `**/*.ts`, `**/*.{js,jsx}`: commas outside braces (and
    whitespace, with `at_whitespace`: tox's `env_list`) separate; empty items are dropped.
    Linear: one pass, slices, no string built a character at a time."""
    items: list[str] = []
    depth, start = 0, 0
    for i, char in enumerate(text):
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(0, depth - 1)
        elif depth == 0 and (char == "," or (at_whitespace and char.isspace())):
            items.append(text[start:i].strip())
            start = i + 1
    items.append(text[start:].strip())
    return [item for item in items if item]
