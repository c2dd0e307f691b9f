"""What the workspace bears out, for the stale-reference check (`analysis/stale.py`): whether
a path exists, and which targets a Makefile, package.json, justfile, Taskfile or tox.ini
declares.

A cloned workspace is untrusted: a path is only `lstat`ed (never read, never walked), one
outside the workspace is never asked about, and a declaring file is read bounded, once per
change (its size and mtime), and only when it is a regular file inside the workspace. What
cannot be told for certain (a Makefile target made of variables, an include that cannot be
read, a justfile that imports another) declares nothing rather than guess.
"""

from __future__ import annotations

import errno
import os
import posixpath
import re
import stat
import threading
from collections.abc import Callable
from pathlib import Path

from ..analysis.globs import split_outside_braces
from ..analysis.references import Tool
from ..analysis.stale import StaleCheck, Targets
from ..store.reading import read_bounded
from ..store.within import is_within
from .gitignore import Ignores

MAX_DECLARING_BYTES = 1 * 2**20
MAX_INCLUDES = 16
MAX_MAKE_LINE = 4_000
MAX_MOVED_SCAN_DIRS = 5_000
"""The moved-file fix looks this far, and offers nothing when the tree is larger."""

DECLARING: dict[Tool, tuple[str, ...]] = {
    # GNU make reads the first of these that exists.
    "make": ("GNUmakefile", "makefile", "Makefile"),
    "npm": ("package.json",),
    "just": ("justfile", "Justfile", ".justfile", "JUSTFILE"),
    "task": ("Taskfile.yml", "taskfile.yml", "Taskfile.yaml", "taskfile.yaml"),
    "tox": ("tox.ini",),
}


Defer = Callable[[Callable[[], object]], None]
"""Runs a read in a worker thread and, once it is done, has the memory analysed again."""


class WorkspaceFacts:
    """One workspace's answers; declared targets cached per declaring file's (mtime, size).

    With `defer` (the language server), a declaring file or `.gitignore` not read since it
    changed is never read on the main thread (the event loop): the read goes to `defer`,
    and the answer meanwhile is "cannot tell" (no stale claim), never remembered."""

    def __init__(self, root: Path, defer: Defer | None = None) -> None:
        self.root = root
        self._defer = defer
        self._pending: set[object] = set()
        self._deferred = 0
        """Answers given as "cannot tell yet" (on the main thread only)."""
        self._declared: dict[Tool, tuple[object, Targets | None, tuple[Path, ...]]] = {}
        """Per tool: the stamps of every file read (a Makefile and its includes), the answer."""
        self._ignores = Ignores(root)
        self._known: dict[str, bool] | None = None
        """Remembered `exists` answers, while the editor watches those paths."""
        self._resolved: dict[str, bool] | None = None
        """Remembered `resolves` answers, likewise."""

    def remember(self) -> None:
        """Keep `exists` answers until `forget`: only once the editor watches every path asked
        about and each of their folders (`lsp/stale_refs.py`), so that no change goes unseen."""
        if self._known is None:
            self._known, self._resolved = {}, {}

    def forget(self) -> None:
        """A watched path changed: ask the disk again."""
        if self._known is not None:
            self._known, self._resolved = {}, {}

    def stop_remembering(self) -> None:
        """The watchers are being replaced: answers from the disk until they are back."""
        self._known = self._resolved = None

    def exists(self, rel: str) -> bool:
        """Whether `rel` (relative, normalised, a trailing `/` for a folder) names something.
        True when it cannot be told (permission denied...): nothing is claimed then."""
        known = self._known
        if known is not None:
            answer = known.get(rel)
            if answer is None:
                before = self._deferred
                answer = self._exists(rel)
                if self._deferred == before:  # a "cannot tell yet" is not remembered
                    known[rel] = answer
            return answer
        return self._exists(rel)

    def _later(self, key: object, read: Callable[[], object]) -> bool:
        """True when `read` was handed to a worker (on the main thread, with `defer`): the
        caller answers "cannot tell" for now."""
        if self._defer is None or threading.current_thread() is not threading.main_thread():
            return False
        self._deferred += 1
        if key not in self._pending:
            self._pending.add(key)

            def job() -> None:
                try:
                    read()
                finally:
                    self._pending.discard(key)

            self._defer(job)
        return True

    def _exists(self, rel: str) -> bool:
        folder = rel.endswith("/")
        path = os.path.join(self.root, rel.rstrip("/"))
        try:
            st = os.lstat(path)
            if folder and stat.S_ISLNK(st.st_mode):
                if not self._inside(path):
                    return True  # a folder link out of the workspace: not asked about
                st = os.stat(path)
        except (OSError, ValueError) as exc:
            if isinstance(exc, ValueError) or exc.errno not in (errno.ENOENT, errno.ENOTDIR):
                return True
            if not self._inside(os.path.dirname(path)):
                return True  # through a symlink out of the workspace: claim nothing
            return self._ignored(rel)  # a build output (`out/`) exists only after a build
        return stat.S_ISDIR(st.st_mode) or not folder

    def resolves(self, rel: str) -> bool:
        """Whether `rel` (relative, normalised, a trailing `/` for a folder) certainly names
        something here: the user memory's workspace-specific check (`analysis/
        workspace_specific.py`) claims an entry for this workspace on it, so what cannot be
        told (permission denied, a git-ignored path that is not there, an answer not read
        yet) is False, where `exists` says True to claim nothing. One `lstat` (and a `stat`
        for a folder link), never a read; remembered as `exists` answers are."""
        known = self._resolved
        if known is None:
            return self._resolves(rel)
        answer = known.get(rel)
        if answer is None:
            answer = known[rel] = self._resolves(rel)
        return answer

    def _resolves(self, rel: str) -> bool:
        folder = rel.endswith("/")
        path = os.path.join(self.root, rel.rstrip("/"))
        try:
            st = os.lstat(path)
            if folder and stat.S_ISLNK(st.st_mode):
                st = os.stat(path)
        except (OSError, ValueError):
            return False
        return stat.S_ISDIR(st.st_mode) if folder else True

    def _inside(self, path: str) -> bool:
        """Whether `path`, symlinks resolved, is in the workspace (asked only on the rare
        answers that would say something about a place outside it)."""
        return is_within(path, self.root)

    def _ignored(self, rel: str) -> bool:
        """Whether git ignores `rel`, or a `.gitignore` is past its bounds (`gitignore.py`)."""
        ignores = self._ignores
        if not ignores.warm(rel) and self._later(("ignored", rel), lambda: ignores.ignored(rel)):
            return True
        return ignores.ignored(rel)

    def moved_to(self, rel: str) -> str | None:
        """Where a missing path went, when the workspace holds exactly one file (or folder,
        for `dir/`) of its name: found by a bounded scan, on request only (a quick fix)."""
        from ..budgets.discover import scan

        folder = rel.endswith("/")
        name = posixpath.basename(rel.rstrip("/"))
        # Scanned on every request (only a cursor on a stale path asks): a cached scan would
        # miss a second file of that name created since, and offer a wrong unique answer.
        files, complete = scan(self.root, MAX_MOVED_SCAN_DIRS)
        if not complete:
            return None
        if folder:
            found = {
                posixpath.dirname(f)
                for f in files
                if posixpath.basename(posixpath.dirname(f)) == name
            }
            found = {f + "/" for f in found}
        else:
            found = {f for f in files if posixpath.basename(f) == name}
        return found.pop() if len(found) == 1 else None

    def declaring_files(self) -> list[str]:
        """Every file name whose appearance or change can change `declared` (to watch)."""
        return [name for names in DECLARING.values() for name in names]

    def declared(self, tool: Tool) -> Targets | None:
        found = self._declaring_file(tool)
        if found is None:
            return None
        path = found[0]
        cached = self._declared.get(tool)  # (dict operations are atomic: no lock needed)
        if cached is not None and cached[2][0] == path and cached[0] == _stamps(cached[2]):
            return cached[1]
        if self._later(("declared", tool), lambda: self.declared(tool)):
            return None
        read: list[Path] = [path]
        try:
            targets = PARSERS[tool](self.root, path, read)
        except (ValueError, RecursionError, OSError):
            targets = None  # a file we cannot make sense of declares nothing
        self._declared[tool] = (_stamps(read), targets, tuple(read))
        return targets

    def _declaring_file(self, tool: Tool) -> tuple[Path, os.stat_result] | None:
        for name in DECLARING[tool]:
            path = self.root / name
            try:
                st = os.lstat(path)
            except OSError:
                continue
            return (path, st) if stat.S_ISREG(st.st_mode) else None
        return None


def _stamps(paths: tuple[Path, ...] | list[Path]) -> tuple[object, ...]:
    out: list[object] = []
    for path in paths:
        try:
            st = os.lstat(path)
            out.append((st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            out.append(None)
    return tuple(out)


def _text(path: Path) -> str | None:
    read = read_bounded(path, MAX_DECLARING_BYTES)
    return read.text if read.problem is None else None


# ---- make ---------------------------------------------------------------------------------
_RULE = r"^([^\s:#=][^:#=]*):(?!=)(?::(?!=))?"
"""Greedy up to the first `:`, whitespace stripped after: linear in the line. The lazy
`[^:#=]*?\\s*:` it replaces was quadratic on a run of spaces with no colon (1.7 s for a
200 KB Makefile of such lines)."""
_ASSIGN = r"^\s*[A-Za-z0-9_.-]+\s*(?:[:+?!]?=|::=|:::=)"
_INCLUDE = r"^\s*(-?include|sinclude)\s+(.+)$"
# Patterns as strings: `re` compiles each on first use, so a hook whose memory names no
# make target never pays for them.


def _make_targets(root: Path, path: Path, read: list[Path]) -> Targets | None:
    names: set[str] = set()
    patterns: list[tuple[str, str]] = []
    queue, seen = [path], set[Path]()
    while queue:
        current = queue.pop()
        if current in seen:
            continue
        seen.add(current)
        if current not in read:
            read.append(current)
        if len(seen) > MAX_INCLUDES:
            return None
        text = _text(current)
        if text is None:
            return None
        in_define = False
        for line in text.replace("\\\n", " ").splitlines():
            if in_define:
                in_define = not line.strip().startswith("endef")
                continue
            if line.startswith("\t") or not line.strip() or line.lstrip().startswith("#"):
                continue
            if len(line) > MAX_MAKE_LINE or "$(eval" in line or "${eval" in line:
                return None  # targets made at run time, or a line not worth the patterns' time
            if line.lstrip().startswith("define "):
                in_define = True
                continue
            include = re.match(_INCLUDE, line)
            if include is not None:
                optional = include.group(1) != "include"
                for name in include.group(2).split("#", 1)[0].split():
                    if "$" in name or any(c in name for c in "*?["):
                        return None  # made of variables or a glob: cannot tell what it adds
                    target = (root / name).resolve()
                    if not is_within(target, root):
                        return None
                    if target.is_file():
                        queue.append(target)
                    elif not optional:
                        return None
                continue
            if re.match(_ASSIGN, line):
                continue
            rule = re.match(_RULE, line)
            if rule is None:
                continue
            head = rule.group(1).strip()
            words = head.split()
            if head.startswith(".PHONY"):
                names.update(line.split(":", 1)[1].split("#", 1)[0].split())
                continue
            for word in words:
                if "$" in word:
                    return None  # a target made of variables: could be any name
                if "%" in word:
                    prefix, _, suffix = word.partition("%")
                    patterns.append((prefix, suffix))
                else:
                    names.add(word)
    return Targets(frozenset(names), tuple(patterns))


# ---- npm ----------------------------------------------------------------------------------
def _npm_scripts(_root: Path, path: Path, _read: list[Path]) -> Targets | None:
    import json

    text = _text(path)
    if text is None:
        return None
    try:
        scripts = json.loads(text).get("scripts", {})
    except (ValueError, AttributeError):
        return None
    return Targets(frozenset(scripts)) if isinstance(scripts, dict) else None


# ---- just, task, tox ----------------------------------------------------------------------
_RECIPE = r"^@?([A-Za-z_][A-Za-z0-9_-]*)(?:\s[^:]*)?:(?!=)"
_ALIAS = r"^alias\s+([A-Za-z_][A-Za-z0-9_-]*)\s*:="


def _just_recipes(_root: Path, path: Path, _read: list[Path]) -> Targets | None:
    text = _text(path)
    if text is None:
        return None
    names: set[str] = set()
    for line in text.splitlines():
        if re.match(r"^(import|mod)\b", line):
            return None  # recipes from another file
        match = re.match(_ALIAS, line) or re.match(_RECIPE, line)
        if match is not None and not line.startswith((" ", "\t")):
            names.add(match.group(1))
    return Targets(frozenset(names))


def _task_names(_root: Path, path: Path, _read: list[Path]) -> Targets | None:
    text = _text(path)
    if text is None:
        return None
    if re.search(r"^includes\s*:", text, re.MULTILINE):
        return None  # namespaced tasks from other files
    names: set[str] = set()
    in_tasks, indent = False, None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.startswith((" ", "\t")):
            in_tasks = line.split("#", 1)[0].strip() == "tasks:"
            indent = None
            continue
        if not in_tasks:
            continue
        width = len(line) - len(line.lstrip(" "))
        indent = width if indent is None else indent
        match = re.match(r"^\s*['\"]?([A-Za-z0-9_:.-]+)['\"]?\s*:", line)
        if width == indent and match is not None:
            names.add(match.group(1))
    return Targets(frozenset(names))


MAX_TOX_NAMES = 1_000
"""Environments one tox.ini may declare, braces expanded; past it, it declares nothing."""
MAX_TOX_ITEM = 4_096
"""Characters of one `env_list` item or section name: a factor product longer than this is
not a list of names anyone types."""
MAX_TOX_LIST = 16 * 2**10
"""Characters of `env_list`: a few hundred names, far more than any real list."""
MAX_TOX_GROUPS = 32
"""Brace groups in one item: bracex recurses once per group."""


def _tox_envs(_root: Path, path: Path, _read: list[Path]) -> Targets | None:
    """`[testenv:NAME]` sections and `env_list` (or `envlist`) of `[tox]`, as configparser
    reads the INI (tox's own ini loader is a configparser too), each brace product expanded by
    `analysis.globs.expand_braces` under a limit: a product that would exceed `MAX_TOX_NAMES`
    declares nothing."""
    import configparser

    from ..analysis.globs import GlobTooComplex, expand_braces

    text = _text(path)
    if text is None:
        return None
    # configparser's option pattern (`.*?\s*[=:]`) is quadratic in a run of spaces; runs are
    # cut to one space first (no section or environment name holds two).
    text = re.sub(r"[ \t]{2,}", " ", text)
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    items = [name[len("testenv:") :] for name in parser.sections() if name.startswith("testenv:")]
    if parser.has_section("tox"):
        listed = parser["tox"].get("env_list", parser["tox"].get("envlist", ""))
        if len(listed) > MAX_TOX_LIST:
            return None
        items += split_outside_braces(listed, at_whitespace=True)
    names: set[str] = set()
    for item in items:
        # As tox reads factors: spaces inside braces dropped, a one-factor `{311}` is `311`.
        item = re.sub(r"\{([^{},]*)\}", r"\1", "".join(item.split()))
        if len(item) > MAX_TOX_ITEM or item.count("{") > MAX_TOX_GROUPS:
            return None
        try:
            names.update(expand_braces(item, MAX_TOX_NAMES - len(names) or 1))
        except GlobTooComplex:
            return None
        if len(names) > MAX_TOX_NAMES:
            return None
    # tox runs `pyXY` environments without any declaration.
    return Targets(frozenset(n.strip() for n in names if n.strip()), patterns=(("py", ""),))


PARSERS: dict[Tool, Callable[[Path, Path, list[Path]], Targets | None]] = {
    "make": _make_targets,
    "npm": _npm_scripts,
    "just": _just_recipes,
    "task": _task_names,
    "tox": _tox_envs,
}


SEVERITIES = ("error", "warning", "information", "hint")


def stale_check(facts: WorkspaceFacts, memory_dir: Path, severity: str) -> StaleCheck | None:
    """The check for memory files in `memory_dir`; None when `[stale] severity = "off"`."""
    if severity not in SEVERITIES:
        return None
    from ..analysis.findings import Severity

    file_dir = os.path.relpath(memory_dir, facts.root).replace(os.sep, "/")
    return StaleCheck(facts.exists, facts.declared, file_dir, Severity[severity.upper()])
