"""What the shipped secret rules cost `re` to search for, counted, not timed (issue 39).

`re` tries a pattern at each position in turn, backtracking. Two regressions came in with
the prose endings and the qualifiers, neither of which `secrets.WORK` sees (it counts the
characters handed to each search, not the steps inside it):

- 36 lookbehinds (`Idempotency key`, `next page token`...) before `key` and `token` were
  tried at every position of every line: gitleaks' generic rule cost 6 times as much on
  ordinary memory (7.6 to 55 µs a 100-character line; a 3.4 KB file 1.3 to 3.2 ms).
- the generic rule's match allowlist `[a-z0-9-]{0,1024}?api[a-z0-9-]{0,1024}?:jar:` was
  tried from every position of a match, scanning up to 1,024 characters for `api` from
  each: 10 ms a 1,000-character match, 2.4 s for 256 KiB of such assignments, 10 s for
  1 MiB; with `api` all through the value, minutes.

scripts/generate_secret_rules.py bounds each pattern's cost from its parse tree
(`search_cost`: character tests from one position at worst, and where it cannot start) and
refuses what starts with a run a search would try from each position (`leading_run`).
These tests hold the shipped file to those bounds, check the same shape with a walk of their
own, and check that the rewrites (search_only, fast_start) find what the patterns did."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from support.rules_generator import rules_generator

try:
    import re._constants as sre  # type: ignore[import-not-found,unused-ignore]
    import re._parser as sre_parse  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # pragma: no cover - before Python 3.11
    import sre_constants as sre  # type: ignore[no-redef,unused-ignore]
    import sre_parse  # type: ignore[no-redef,unused-ignore]

pytestmark = pytest.mark.skipif(
    sys.version_info < (3, 11), reason="the generator needs tomllib (Python 3.11)"
)
ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "server" / "metis_memory" / "analysis" / "secret_rules.json"
CORPUS = Path(__file__).parent / "secret_corpus"


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return rules_generator()


@pytest.fixture(scope="module")
def committed() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RULES.read_text("utf-8"))
    return data


def joined(value: str | list[str]) -> str:
    return value if isinstance(value, str) else "".join(value)


def shipped_patterns(data: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Every shipped regex, named: each rule's, each of its allowlists', the global ones'."""
    for rule in data["rules"]:
        yield rule["id"], rule["pattern"]
        for n, allowlist in enumerate(rule.get("allowlists", ())):
            for k, regex in enumerate(allowlist.get("regexes", ())):
                yield f"{rule['id']} allowlist {n} regex {k}", "(?a)" + joined(regex)
    for k, regex in enumerate(data["allowlist"].get("regexes", ())):
        yield f"global allowlist regex {k}", "(?a)" + joined(regex)


# ---- the shipped patterns, held to the generator's bounds ----------------------------------


def test_no_shipped_rule_costs_much_where_it_cannot_start(
    script: ModuleType, committed: dict[str, Any]
) -> None:
    """Nearly every position of ordinary memory is one where a rule cannot start: each is
    dismissed in a few character tests (13 at most before fast_start, 5 now). With the
    qualifiers before `key` and `token`, the generic rule took 368, the assignment rule 192."""
    costly = {r["id"]: script.search_cost(r["pattern"]).dismiss for r in committed["rules"]}
    costly = {name: cost for name, cost in costly.items() if cost > script.DISMISS_COST}
    assert not costly, (
        f"character tests to dismiss a position (at most {script.DISMISS_COST}): {costly}"
    )


def test_every_shipped_pattern_passes_the_cost_check(
    script: ModuleType, committed: dict[str, Any]
) -> None:
    """Rules and allowlist regexes alike: at most START_COST character tests from one
    position (the generic allowlist's `:jar:` alternative: 2,100,000), no run that a search
    scans again from positions inside it."""
    rules = {r["id"] for r in committed["rules"]}
    refused = {}
    for name, pattern in shipped_patterns(committed):
        try:
            script.check_cost(pattern, rule=name in rules)
        except script.Rejected as why:
            refused[name] = str(why)
    assert not refused


def _leading_repeats(pattern: str) -> list[str]:
    """This test's own walk (not the generator's): the repeats of one character, of more
    than 16 counts, that a match can start with, with no lookbehind before them ruling out
    a character of theirs before the start (a search then tries them from each position
    of a run of their characters, and each try scans the rest of the run)."""
    parsed = sre_parse.parse(pattern)
    found: list[str] = []

    def one_char(body: Any) -> bool:
        return len(body) == 1 and body[0][0] in (sre.LITERAL, sre.IN, sre.ANY, sre.NOT_LITERAL)

    def guarded(behind: list[Any], body: Any, icase: bool) -> bool:
        """Whether a one-character negative lookbehind before the repeat rules out every
        character the repeat matches (checked by matching each ASCII character)."""
        repeat = re.compile(("(?i)" if icase else "") + _render(body))
        for look in behind:
            rejected = re.compile(("(?i)" if icase else "") + _render(look))
            if all(rejected.fullmatch(chr(c)) for c in range(128) if repeat.fullmatch(chr(c))):
                return True
        return False

    def walk(items: list[tuple[Any, bool]], behind: list[Any]) -> None:
        for k, ((op, av), icase) in enumerate(items):
            rest = items[k + 1 :]
            if op is sre.ASSERT_NOT and av[0] == -1 and len(av[1]) == 1:
                behind = [*behind, av[1]]
                continue
            if op is sre.AT and av in (sre.AT_BEGINNING, sre.AT_BEGINNING_STRING):
                return  # (tried at the text's start only)
            if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
                continue
            if op is sre.SUBPATTERN:
                _group, on, off, body = av
                inner = (icase or bool(on & re.IGNORECASE)) and not off & re.IGNORECASE
                walk([(node, inner) for node in body] + rest, behind)
                return
            if op is sre.BRANCH:
                for alt in av[1]:
                    walk([(node, icase) for node in alt] + rest, behind)
                return
            if op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
                lo, hi, body = av
                if one_char(body) and hi - lo > 16 and not guarded(behind, body, icase):
                    found.append(f"{{{lo},{hi}}} of {_render(body)}")
                if lo == 0 and one_char(body):
                    continue
            return

    icase = bool(parsed.state.flags & re.IGNORECASE)
    walk([(node, icase) for node in parsed.data], [])
    return found


def _render(items: Any) -> str:
    """A one-character node list back as a pattern (for the classes `re` parsed)."""
    (op, av) = next(iter(items))
    if op is sre.LITERAL:
        return re.escape(chr(av))
    if op is sre.NOT_LITERAL:
        return f"[^{re.escape(chr(av))}]"
    if op is sre.ANY:
        return "."
    if op is sre.IN:
        out = ""
        negate = ""
        for iop, iav in av:
            if iop is sre.NEGATE:
                negate = "^"
            elif iop is sre.LITERAL:
                out += re.escape(chr(iav))
            elif iop is sre.RANGE:
                out += f"{re.escape(chr(iav[0]))}-{re.escape(chr(iav[1]))}"
            elif iop is sre.CATEGORY:
                out += {
                    sre.CATEGORY_DIGIT: r"\d",
                    sre.CATEGORY_NOT_DIGIT: r"\D",
                    sre.CATEGORY_SPACE: r"\s",
                    sre.CATEGORY_NOT_SPACE: r"\S",
                    sre.CATEGORY_WORD: r"\w",
                    sre.CATEGORY_NOT_WORD: r"\W",
                }[iav]
        return f"(?a)[{negate}{out}]"
    raise AssertionError(f"not one character: {items}")


def test_no_shipped_pattern_starts_with_a_run_tried_from_each_position(
    committed: dict[str, Any],
) -> None:
    """The shape of the 10 s allowlist, found by this test's own walk: no rule or allowlist
    regex can start with a long repeat that a search would try from each position."""
    found = {name: _leading_repeats(p) for name, p in shipped_patterns(committed)}
    assert not {name: runs for name, runs in found.items() if runs}


# ---- the checks refuse the shapes that were slow -------------------------------------------


def test_the_check_refuses_a_lazy_run_before_an_ambiguous_one(script: ModuleType) -> None:
    slow = r"(?a)(?i:(?:rapid|[\-0-9a-z]{0,1024}?api[\-0-9a-z]{0,1024}?:jar:|author))"
    assert script.search_cost(slow).start > 1_000_000
    with pytest.raises(script.Rejected, match="from one position"):
        script.check_cost(slow, rule=False)
    with pytest.raises(script.Rejected, match="each position"):
        script.check_cost(r"(?a)[\-0-9a-z]{0,1024}?:jar:", rule=False)
    with pytest.raises(script.Rejected, match="again"):
        script.check_cost(r"(?a)api[\-0-9a-z]{0,1024}?:jar:", rule=False)
    # Anchored at the start of a run, each run is tried once.
    anchored = r"(?a)(?<![\-0-9a-z])(?=[\-0-9a-z]{3,4096}:jar:)[\-0-9a-z]{0,4096}?api"
    script.check_cost(anchored, rule=False)
    # A run that a match reaching its end ends with is not scanned again (the search goes on
    # past the match), nor is what starts at the text's start only.
    script.check_cost(r"(?a)(?<![\w])ZXlK[\w+/]{40,1024}={0,2}", rule=True)
    script.check_cost(r"(?a)^[a-z]{1,1024}$", rule=False)


def test_the_check_refuses_lookbehinds_tried_at_every_position(script: ModuleType) -> None:
    """The qualifiers as they were (each before the keyword): 20 lookbehinds at every
    position. After the keyword, they are tried only where it is."""
    words = [f"w{n:02d}x" for n in range(20)]
    before = "".join(f"(?<!{w})" for w in words)
    slow = rf"(?a)(?i:(?:access|{before}key)[ \t]?[:=][ \t]?(\w{{8}}))"
    assert script.search_cost(slow).dismiss > script.DISMISS_COST
    with pytest.raises(script.Rejected, match="where it cannot start"):
        script.check_cost(slow, rule=True)
    fast = script.qualified(r"(?a)(?i:(?:access|key)[ \t]?[:=][ \t]?(\w{8}))", ["key"], words)
    assert script.search_cost(fast).dismiss <= 3
    script.check_cost(fast, rule=True)


# ---- the rewrites find what the patterns did --------------------------------------------------


def texts() -> list[str]:
    """Texts an allowlist or a rule may be asked about: the corpora's lines, each rule's
    example and near miss, the maven-ish coordinates of gitleaks' `:jar:` allowlist, and
    strings of its characters, the same on every run."""
    data = json.loads(RULES.read_text("utf-8"))
    out = [
        line
        for name in ("ordinary_entries.txt", "credentials_in_prose.txt")
        for line in (CORPUS / name).read_text("utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    for rule in data["rules"]:
        out += [joined(rule["example"]), joined(rule["near_miss"])]
        out += [f"key = {joined(rule['example'])}", f"x_{joined(rule['example'])}:jar:1"]
    out += [
        "org.example:my-api-core:jar:1.0",
        "maven-API-client:JAR:2",
        "api:jar:",
        "xapi-x:jar:",
        "ap-i:jar:",
        "api_x:jar:",
        "the api :jar:",
        "api-" * 300 + ":jar:",
        "a" * 2000 + "api:jar:",
        "api" + "b" * 900 + ":jar:",
        "key_alias=abc",
        "access_id: 1",
        "/Users/me/project/file.txt",
        "AKIAIOSFODNN7EXAMPLE",
        "x" * 30 + "EXAMPLE",
    ]
    alphabet = "api-:jrxK_.=/ \tEXAMPLE"
    for n in range(400):
        digest = hashlib.sha256(f"text/{n}".encode()).digest() * 4
        out.append("".join(alphabet[b % len(alphabet)] for b in digest[: 8 + n % 120]))
    return out


def test_allowlist_regexes_find_what_they_found_before_search_only(
    script: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """search_only drops a leading run and anchors `L X{0,n} T` at a run's start: a search
    finds a match in exactly the texts the translation without it did (runs of more than
    RUN characters aside: no text an allowlist sees holds one)."""
    config = script.tomllib.loads((ROOT / "scripts/secret_rules/gitleaks.toml").read_text())
    regexes = {
        r
        for rule in config["rules"]
        for allowlist in rule.get("allowlists", ())
        for r in allowlist.get("regexes", ())
    } | set(config["allowlist"].get("regexes", ()))
    rewritten = {}
    for go in sorted(regexes):
        try:
            rewritten[go] = re.compile(script.go_to_python(go, rule=False))
        except script.Rejected:
            continue
    monkeypatch.setattr(script, "search_only", lambda toks: toks)
    plain = {go: re.compile(script.go_to_python(go, rule=False)) for go in rewritten}
    assert any(plain[go].pattern != rewritten[go].pattern for go in rewritten)
    corpus = texts()
    differ = [
        (go, text[:80])
        for go in rewritten
        for text in corpus
        if bool(rewritten[go].search(text)) != bool(plain[go].search(text))
    ]
    assert not differ, differ[:5]


def test_fast_start_finds_what_the_pattern_finds(
    script: ModuleType, committed: dict[str, Any]
) -> None:
    """A rule with fast_start's lookahead matches where and as it did without it."""
    looked = [r for r in committed["rules"] if re.match(r"(?:\(\?[ai]\))*\(\?=\[", r["pattern"])]
    assert {"generic-api-key", "secret-assignment"} <= {r["id"] for r in looked}
    corpus = texts()
    for rule in looked:
        ahead = re.compile(rule["pattern"])
        without = re.compile(re.sub(r"\(\?=\[[^\]]*\]\)", "", rule["pattern"], count=1))
        assert ahead.pattern != without.pattern
        for text in corpus:
            a = [(m.span(), m.groups()) for m in ahead.finditer(text)]
            b = [(m.span(), m.groups()) for m in without.finditer(text)]
            assert a == b, (rule["id"], text[:80])


GITLEAKS_END = r"""(?:[\x60'"\s;]|\\[nr]|$)"""
"""How most of gitleaks' rules end (the generator widens it for prose)."""


def test_a_run_before_the_ending_is_taken_at_one_length(script: ModuleType) -> None:
    """A value's run that may hold `.` (the generic rule's `[\\w.=-]{10,150}`) was tried at
    each length from 150 down, the prose ending tested after each, so that `key=abc.def.`
    gives `abc.def` and a full stop: `key=key=key=...` (where no length ends the token) cost
    6 times what it did before the prose endings (256 KiB: 0.12 s, then 0.74 s). It is taken
    at one length, the longest not ending in `.` or `:` (or, since the second review of
    issue #39, a SOFT character: `key=abc_` is `abc` and Markdown's `_`), with the same
    secrets."""
    go = r"key=([\w.=-]{10,150})" + GITLEAKS_END
    ours = script.go_to_python(go, rule=True)
    assert "(?=(?P<_a1>" in ours
    every_length = re.sub(
        r"\(\?=\(\?P<_a1>(.*?)\{9,149\}\[.*?\]\)\)\(\?P=_a1\)",
        r"\1{10,150}" + script.NO_STOP_BEFORE.replace("\\", "\\\\"),
        ours,
    )
    assert every_length != ours
    assert 2 * script.search_cost(ours).start < script.search_cost(every_length).start
    one, each = re.compile(ours), re.compile(every_length)
    for text in (
        "key=abc.def.ghi1.",
        "key=abc.def.ghi1. More.",
        "key=abc.def.ghi1:",
        "(key=abcdefghij1).",
        "key=abc.def.ghi1.jkl",
        "key=" + "a1." * 60,
        "key=" + "b2" * 80 + " ",
        "key=key=key=key=key=key=key=key=key=",
        "key=Ab3dEf6hIj9k...",
        "key=abc.def.ghi1_ (italics)",
        "key=abcdefghij1== more",
        "key=abcdefghij1--",
        "key=abcdefghij1-_-",
    ):
        a, b = one.search(text), each.search(text)
        assert (a and (a.span(), a.group(1))) == (b and (b.span(), b.group(1))), text
    # Where the longest length cannot end the token, a shorter one ending before an inner
    # `..` is no longer tried: the token goes on (`/a` after it), as in gitleaks' own rule.
    assert each.search("key=abcdefghijk..zz/a") and not one.search("key=abcdefghijk..zz/a")
