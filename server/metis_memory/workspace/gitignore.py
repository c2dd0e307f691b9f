"""Whether git ignores a path, by the workspace's `.gitignore` files (nested ones and `!`
negations too), for the stale-reference check: a build output named in memory (`out/`)
exists only after a build, so an ignored path is never called stale.

A cloned repository writes these files, so what they cost is bounded: at most
`MAX_BYTES`, `MAX_PATTERNS` patterns (`MAX_WILDCARD_PATTERNS` with wildcards) of at most
`MAX_PATTERN_CHARS` per file, and
`MAX_DEPTH` nested files per path. A file past a bound is not read and answers "cannot
tell", which the caller takes as ignored: a stale claim needs certainty.

The syntax follows git's gitignore(5) (blank lines, `#`, `\\` escapes, trailing spaces,
`!`, a trailing `/` for directories, a `/` at the start or middle to anchor, `**`); the
matching is wcmatch's. pathspec (the usual library for this) compiles `*` to `[^/]*`, which
backtracks without bound: one pattern of twenty `a*` against a path of forty `a`s ran for
over a minute. wcmatch compiles each `*` to an atomic group, linear in the path.
"""

from __future__ import annotations

import functools
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..analysis.globs import MAX_GLOB_CHARS, MAX_GLOBSTARS, compile_glob, globstar_count

if TYPE_CHECKING:
    from wcmatch.glob import WcMatcher

MAX_BYTES = 256 * 2**10
MAX_PATTERNS = 5_000
MAX_WILDCARD_PATTERNS = 256
MAX_WILDCARD_CHARS = 8 * 2**10
"""Patterns with wildcards are compiled, at about 16 ms per 1,000 characters (maybe on the
server's event loop): at most this many characters of them per file. Plain names are
compared as strings and cost next to nothing."""
MAX_PATTERN_CHARS = MAX_GLOB_CHARS
MAX_DEPTH = 32
MAX_PATH_CHARS = 4_096


@dataclass(frozen=True)
class _Rule:
    glob: str
    include: bool
    """False for a `!` pattern: it re-includes what an earlier one ignored."""
    dir_only: bool

    def matches(self, path: str) -> bool:
        """Most patterns of a long `.gitignore` are plain names: those compare as strings,
        and only a pattern with wildcards is compiled (on first use: most lookups stop at
        the last rule that matches)."""
        literal = self.literal
        if literal is None:
            return bool(self.matcher.match(path))
        if path == literal:
            return True
        return self.glob.startswith("**/") and path.endswith("/" + literal)

    @functools.cached_property
    def literal(self) -> str | None:
        """The path (or for an unanchored one, the path's end) a wildcard-free pattern names."""
        body = self.glob.removeprefix("**/")
        return None if any(c in body for c in "*?[\\") else body

    @functools.cached_property
    def matcher(self) -> WcMatcher[str]:
        return compile_glob(self.glob)


class TooMuch(Exception):
    """A `.gitignore` past a bound: what it ignores cannot be told cheaply."""


def parse(text: str) -> tuple[_Rule, ...]:
    """The rules of one `.gitignore`, in order. Raises TooMuch past a bound."""
    rules: list[_Rule] = []
    wildcards = wildcard_chars = 0
    for raw in text.splitlines():
        line = _strip_trailing_spaces(raw)
        if not line or line.startswith("#"):
            continue
        if len(line) > MAX_PATTERN_CHARS:
            raise TooMuch(f"a pattern of {len(line):,} characters")
        include = True
        if line.startswith("!"):
            include, line = False, line[1:]
        elif line.startswith(("\\#", "\\!")):
            line = line[1:]
        dir_only = line.endswith("/")
        body = line.rstrip("/")
        if not body:
            continue
        anchored = "/" in body
        body = body.lstrip("/")
        if not body:
            continue
        glob = body if anchored or body.startswith("**/") else f"**/{body}"
        rule = _Rule(glob, include, dir_only)
        rules.append(rule)
        if rule.literal is None:
            wildcards += 1
            wildcard_chars += len(glob)
            if globstar_count(glob) > MAX_GLOBSTARS:
                raise TooMuch(f"a pattern with over {MAX_GLOBSTARS} `**`")
        if len(rules) > MAX_PATTERNS or wildcards > MAX_WILDCARD_PATTERNS:
            raise TooMuch(
                f"over {MAX_PATTERNS:,} patterns or {MAX_WILDCARD_PATTERNS} wildcard ones"
            )
        if wildcard_chars > MAX_WILDCARD_CHARS:
            raise TooMuch(f"over {MAX_WILDCARD_CHARS:,} characters of wildcard patterns")
    return tuple(rules)


def _strip_trailing_spaces(line: str) -> str:
    """Trailing spaces are dropped unless escaped with a backslash (gitignore(5))."""
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        return stripped[:-1] + " "
    return stripped


class Ignores:
    """One workspace's `.gitignore` files, each read once per change (its stamp)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: dict[str, tuple[tuple[int, int, int], tuple[_Rule, ...] | None]] = {}

    def ignored(self, rel: str) -> bool:
        """Whether git ignores `rel` (relative, `/`-separated, a trailing `/` for a folder),
        or cannot be told cheaply (a `.gitignore` past a bound)."""
        folder = rel.endswith("/")
        parts = [p for p in rel.split("/") if p]
        if not parts:
            return False
        if len(rel) > MAX_PATH_CHARS or len(parts) > MAX_DEPTH:
            return True  # too deep to tell cheaply: claim nothing
        # Git does not look inside an ignored folder: a path under one is ignored whatever
        # a later pattern says of the path itself.
        for i in range(1, len(parts) + 1):
            is_dir = folder or i < len(parts)
            verdict = self._verdict(parts[:i], is_dir)
            if verdict is None:
                return True  # cannot tell: claim nothing
            if verdict:
                return True
        return False

    def _verdict(self, parts: list[str], is_dir: bool) -> bool | None:
        """Whether the `.gitignore` files from the root down to `parts`' folder ignore it
        (the deepest file's last matching rule decides); None when one is past a bound."""
        for depth in range(len(parts) - 1, -1, -1):
            rules = self._rules("/".join(parts[:depth]))
            if rules is None:
                return None
            below = "/".join(parts[depth:])
            for rule in reversed(rules):
                if rule.dir_only and not is_dir:
                    continue
                if rule.matches(below):
                    return rule.include
        return False

    def warm(self, rel: str) -> bool:
        """Whether every `.gitignore` that decides `rel` is read as it now is (so `ignored`
        costs only `lstat`s and matching; else the caller may read them off its loop)."""
        parts = [p for p in rel.split("/") if p][:MAX_DEPTH]
        return all(self._fresh("/".join(parts[:depth])) for depth in range(len(parts)))

    def _stamp(self, folder: str) -> tuple[int, int, int] | None:
        """The `.gitignore` of `folder`'s stamp; None when there is no such regular file."""
        try:
            st = os.lstat(os.path.join(self.root, folder, ".gitignore"))
        except (OSError, ValueError):
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino) if stat.S_ISREG(st.st_mode) else None

    def _fresh(self, folder: str) -> bool:
        stamp = self._stamp(folder)
        cached = self._files.get(folder)
        return stamp is None or (cached is not None and cached[0] == stamp)

    def _rules(self, folder: str) -> tuple[_Rule, ...] | None:
        path = os.path.join(self.root, folder, ".gitignore")
        stamp = self._stamp(folder)
        if stamp is None:
            return ()
        cached = self._files.get(folder)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        rules: tuple[_Rule, ...] | None
        if stamp[1] > MAX_BYTES:
            rules = None
        else:
            from ..store.reading import read_bounded

            read = read_bounded(Path(path), MAX_BYTES)
            try:
                ok = read.problem is None and read.text is not None
                rules = parse(read.text or "") if ok else None
            except TooMuch:
                rules = None
            for rule in rules or ():
                if rule.literal is None:
                    rule.matcher  # noqa: B018  compiled here, where the file is read
        self._files[folder] = (stamp, rules)
        return rules
