"""The shipped secret rules are what scripts/generate_secret_rules.py makes of gitleaks'
configuration at the pinned commit (vendored, no network) and our overlay."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from support.rules_generator import rules_generator

pytestmark = pytest.mark.skipif(
    sys.version_info < (3, 11), reason="the generator needs tomllib (Python 3.11)"
)
ROOT = Path(__file__).resolve().parents[2]
INPUT = ROOT / "scripts" / "secret_rules"
RULES = ROOT / "server" / "metis_memory" / "analysis" / "secret_rules.json"


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return rules_generator()


@pytest.fixture(scope="module")
def generated(script: ModuleType) -> tuple[dict[str, Any], str]:
    data, _log = script.generate(
        (INPUT / "gitleaks.toml").read_text("utf-8"), (INPUT / "local.toml").read_text("utf-8")
    )
    return data, script.render(data)


@pytest.fixture(scope="module")
def committed() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RULES.read_text("utf-8"))
    return data


def test_the_committed_rules_are_the_generators_output(
    generated: tuple[dict[str, Any], str],
) -> None:
    assert RULES.read_text("utf-8") == generated[1], (
        "secret_rules.json is not current: run python3 scripts/generate_secret_rules.py"
    )


def test_check_mode_agrees(script: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    assert script.main(["--check"]) == 0
    assert "is current" in capsys.readouterr().err


def test_the_vendored_config_and_licence_are_gitleaks_at_the_pinned_commit(
    script: ModuleType, committed: dict[str, Any]
) -> None:
    commit = script.UPSTREAM_COMMIT
    assert re.fullmatch(r"[0-9a-f]{40}", commit)
    assert committed["upstream_commit"] == commit and commit in committed["source"]
    assert commit in (INPUT / "README.md").read_text("utf-8")
    upstream = (INPUT / "gitleaks.toml").read_text("utf-8")
    assert upstream.startswith("# This file has been auto-generated. Do not edit manually.")
    licence = (INPUT / "LICENSE").read_text("utf-8")
    assert licence.startswith("MIT License") and "Zachary Rice" in licence
    shipped = (RULES.parent / "secret_rules.LICENSE").read_text("utf-8")
    assert shipped.endswith(licence)


def test_every_gitleaks_rule_is_kept_or_dropped_with_its_reason(
    script: ModuleType, committed: dict[str, Any]
) -> None:
    config = (INPUT / "gitleaks.toml").read_text("utf-8")
    upstream = {r["id"] for r in script.tomllib.loads(config)["rules"]}
    kept = {r["id"] for r in committed["rules"] if "local" not in r}
    dropped = {d["id"]: d["reason"] for d in committed["dropped"]}
    assert kept | set(dropped) == upstream
    assert not kept & set(dropped)
    assert all(reason.strip() for reason in dropped.values())
    assert len(kept) >= 200, f"only {len(kept)} of gitleaks' {len(upstream)} rules kept"
    ours = [r for r in committed["rules"] if "local" in r]
    assert ours and all(r["local"].strip() and r["id"] not in upstream for r in ours)


@pytest.mark.parametrize(
    "rule_id",
    [
        "github-pat",
        "github-fine-grained-pat",
        "github-oauth",
        "github-app-token",
        "aws-access-token",
        "slack-bot-token",
        "slack-user-token",
        "slack-webhook-url",
        "openai-api-key",
        "anthropic-api-key",
        "gcp-api-key",
        "stripe-access-token",
        "generic-api-key",
    ],
)
def test_the_common_formats_are_kept(committed: dict[str, Any], rule_id: str) -> None:
    assert rule_id in {r["id"] for r in committed["rules"]}


def test_rules_shown_to_users_stay_short_and_never_hold_their_example(
    committed: dict[str, Any],
) -> None:
    for rule in committed["rules"]:
        kind = rule["kind"]
        assert 0 < len(kind) <= 40 and "\n" not in kind, rule["id"]
        assert not re.search(r"[A-Za-z0-9_-]{16}", kind), rule["id"]  # nothing key-like


def test_key_like_text_is_stored_in_pieces(committed: dict[str, Any]) -> None:
    """So that secret scanners (vsce's) do not flag the rules file."""
    for rule in committed["rules"]:
        for field in ("example", "near_miss"):
            assert isinstance(rule[field], list) and all(len(p) <= 4 for p in rule[field])
        for allowlist in rule.get("allowlists", []):
            for regex in allowlist.get("regexes", []):
                assert isinstance(regex, list) or not re.search(r"[A-Za-z0-9_-]{16,}", regex)


@pytest.mark.parametrize(
    ("go", "python"),
    [
        # Go's mid-pattern flags last to the end of their group, across its alternatives.
        (
            r"\b(p8e-(?i)[a-z0-9]{32})",
            r"(?a)(p8e-(?<![A-Za-z0-9-]p8e-)(?<![A-Za-z0-9-]_p8e-)(?i:[0-9a-z]{32}))",
        ),
        (r"a(?i)b|c", r"(?a)a(?i:b)|(?i:c)"),
        (r"x(?-i:[Aa]pi|API)", r"(?a)x(?-i:[Aa]pi|API)"),
        # Ends of text are ends of lines; no class matches a line break.
        (
            r"""key=[\s'"]{0,3}(\w{8})(?:\s|\z)""",
            r"""(?a)key=[\t\f\r "']{0,3}(\w{8})(?:[\t\f\r ]|(?![^\n]))""",
        ),
        (r"^[^a]{2}$", r"(?a)(?<![^\n])[^\na]{2}(?![^\n])"),
        # POSIX classes, and a `\b` before a group of alternatives anchors them all.
        (
            r"\b(pat[[:alnum:]]{14})\b",
            r"(?a)(pat(?<![A-Za-z0-9-]pat)(?<![A-Za-z0-9-]_pat)[0-9A-Za-z]{14})"
            r"(?![A-Za-z0-9]|__?[A-Za-z0-9]|___)",
        ),
        (r"\b(?:ab|cd)x", r"(?a)(?<![A-Za-z0-9-])(?<![A-Za-z0-9-]_)(?:ab|cd)x"),
        # Unbounded repeats of one character get a bound; of a group, the rule is refused.
        (r"xox[os]-\d+", r"(?a)xox[os]-\d{1,1024}"),
    ],
)
def test_go_patterns_are_translated(script: ModuleType, go: str, python: str) -> None:
    assert script.go_to_python(go, rule=True) == python
    re.compile(python)


def test_what_cannot_be_bounded_is_refused(script: ModuleType) -> None:
    with pytest.raises(script.Rejected, match="unbounded repeat of a group"):
        script.go_to_python(r"(?:ab)+", rule=True)
    with pytest.raises(script.Rejected, match="line break"):
        script.go_to_python(r"a\nb", rule=True)
    with pytest.raises(script.Rejected, match="same characters"):
        script.check_pattern(r"(?:[a-z]{1,9}){1,9}!")
    with pytest.raises(script.Rejected, match="characters long"):
        script.check_pattern(r"a{1000}b{1000}c{1000}d{1000}e{1000}")


def test_a_repeat_is_made_atomic_only_where_giving_back_cannot_help(script: ModuleType) -> None:
    atomic = script.go_to_python(
        r"""(k[ \t\w.-]{0,20}[\s'"]{0,3}=)(\w{10,150})(?:\s|$)""", rule=True
    )
    assert atomic.count("(?=(?P<_a") == 2  # both long runs: nothing after either continues it
    kept = script.go_to_python(r"(\w{10,150})\w", rule=True)
    assert "(?=(?P<_a" not in kept  # the next `\w` could take back what the run gave
    # The same matches and secrets as without atomic repeats.
    go = r"""(k[ \t\w.-]{0,20}[\s'"]{0,3}=)(\w{10,150})\s"""
    ours = re.compile(script.go_to_python(go, rule=True))
    plain = re.compile(r"""(k[ \t\w.-]{0,20}[\t\f\r '"]{0,3}=)(\w{10,150})[\t\f\r ]""")
    own = [n for n in range(1, ours.groups + 1) if n not in ours.groupindex.values()]
    for text in (
        "k = Ab1Ab1Ab1Ab1 x",
        "k\t\t= " + "Ab1" * 60 + " ",
        "kk" * 12 + "=" + "x" * 9 + " ",
    ):
        a, b = ours.search(text), plain.search(text)
        assert (a and (a.span(), a.group(*own))) == (b and (b.span(), b.group(1, 2))), text


def test_keyword_rules_start_at_their_keyword(script: ModuleType) -> None:
    go = r"(?i)[\w.-]{0,50}?(?:adafruit)(?:[ \t\w.-]{0,20})="
    assert script.without_identifier_prefix(go) == (r"(?i)(?:adafruit)(?:[ \t\w.-]{0,20})=", 50)
    double = r"[\w.-]{0,50}?(?i:[\w.-]{0,50}?(?:okta))="
    assert script.without_identifier_prefix(double) == (r"(?i:(?:okta))=", 100)


# ---- prose: a token followed by punctuation (issue #39) ------------------------------------

GITLEAKS_END = r"""(?:[\x60'"\s;]|\\[nr]|$)"""
"""How 152 of gitleaks' rules end: after the secret, a space, a quote, `;`, a backtick, an
escaped line break, or the end of the line."""


def _local_rule(pattern: str, example: str, near_miss: str) -> str:
    """A local.toml holding one rule of ours (Python syntax) and nothing else."""
    return (
        "[[rules]]\nid = 'zz-token'\nkind = 'ZZ token'\nreason = 'a test'\n"
        f"pattern = '''{pattern}'''\ngroup = 1\nkeywords = ['zz_']\n"
        f"example = {json.dumps(script_pieces(example))}\n"
        f"near_miss = {json.dumps(script_pieces(near_miss))}\n"
    )


def script_pieces(text: str) -> list[str]:
    return [text[i : i + 4] for i in range(0, len(text), 4)]


def test_gitleaks_token_end_lets_prose_punctuation_end_a_token(script: ModuleType) -> None:
    """A token followed by `.`, `,`, `)`... is found; a `.` or `:` followed by a token
    character is inside a longer token (a dotted name, `host:port`), which is not."""
    pattern = re.compile(script.go_to_python(r"\b(zz_[a-z0-9]{12})" + GITLEAKS_END, rule=True))
    token = "zz_" + "a1b2c3d4e5f6"
    for text in (
        *(f"uses {token}{mark}" for mark in ".,)]>!:?}"),
        *(f"uses {token}{mark} then" for mark in ".,)]>!:?}"),
        f"({token})",
        f"`{token}`",
        f"{token}\u201d",  # a closing curly quote
        f"{token}...",
        f"**{token}**",
        f"| {token}|",
        f"{token}\\n",
    ):
        hit = pattern.search(text)
        assert hit is not None and hit.group(1) == token, text
    for text in (f"{token}.json", f"{token}:8080", f"{token}x", f"{token}/path", f"{token}=x"):
        assert pattern.search(text) is None, text


def test_a_trailing_full_stop_is_not_part_of_a_secret(script: ModuleType) -> None:
    """A secret whose characters include `.` (gitleaks' generic rule's `[\\w.=-]`) stops
    before the full stop that ends a sentence: the finding is the token, not the token and
    the stop (which made the generic rule's finding longer than a named rule's)."""
    pattern = re.compile(script.go_to_python(r"key=([\w.=-]{10,150})" + GITLEAKS_END, rule=True))
    for text, secret in (
        ("key=abc.def.ghi1.", "abc.def.ghi1"),
        ("key=abc.def.ghi1. More.", "abc.def.ghi1"),
        ("key=abc.def.ghi1 x", "abc.def.ghi1"),
        ("key=abc.def.ghi1.jkl", "abc.def.ghi1.jkl"),
    ):
        hit = pattern.search(text)
        own = [n for n in range(1, pattern.groups + 1) if n not in pattern.groupindex.values()]
        assert hit is not None and hit.group(own[0]) == secret, text


def test_the_generator_refuses_a_rule_that_misses_its_example_in_prose(
    script: ModuleType,
) -> None:
    """Every kept rule is checked with its example followed by each mark and inside
    brackets and quotes, in Markdown and after CJK text: a rule that ends a token only at a
    space cannot ship, nor one that a closing `_` (italics) hides (issue #39)."""
    token = "zz_" + "Qw3rTy7uIo9pAs2dFg4h"
    narrow = r"(?<![A-Za-z0-9_-])(zz_[A-Za-z0-9]{20})(?:[ \t\"'`;]|(?![^\n]))"
    with pytest.raises(SystemExit, match=r"zz-token.*prose"):
        script.generate("rules = []\n", _local_rule(narrow, token, "zz_short"))
    wide = (
        r"(?<![A-Za-z0-9-])(?<![A-Za-z0-9-]_)(zz_[A-Za-z0-9]{20})"
        r"(?![A-Za-z0-9]|[_-]{1,2}[A-Za-z0-9]|[_-]{3})"
    )
    italics_hide = r"(?<![A-Za-z0-9_-])(zz_[A-Za-z0-9]{20})(?![A-Za-z0-9_-])"
    with pytest.raises(SystemExit, match=r"zz-token.*prose.*_<example>_"):
        script.generate("rules = []\n", _local_rule(italics_hide, token, "zz_short"))
    data, _log = script.generate("rules = []\n", _local_rule(wide, token, "zz_short"))
    assert [r["id"] for r in data["rules"]] == ["zz-token"]


# ---- ordinary notes (issue #39) -------------------------------------------------------------


def test_a_qualified_keyword_does_not_count_after_a_qualifier(script: ModuleType) -> None:
    """`Idempotency key: ...` names an identifier; the pattern still matches at another of
    its keywords (`public access token: ...` at `token`), and a keyword that is not an
    alternative of the pattern stops the script (local.toml would be out of date)."""
    pattern = script.qualified(
        r"(?a)(?i:(?:access|key|token)[ \t]?[:=][ \t]?(\w{8}))",
        ["key", "token"],
        ["idempotency", "page", "public"],
    )
    script.check_pattern(pattern)
    found = re.compile(pattern)
    for text in (
        "Idempotency key: Ab3dEf6h",
        "Idempotency-Key: Ab3dEf6h",
        "next page token=Ab3dEf6h",
    ):
        assert found.search(text) is None, text
    for text in ("key: Ab3dEf6h", "api key: Ab3dEf6h", "public access token: Ab3dEf6h"):
        assert found.search(text) is not None, text
    with pytest.raises(SystemExit, match="qualified"):
        script.qualified(r"(?:keys|tokens)=x", ["key"], ["page"])


def test_the_shipped_qualifiers_apply_to_the_generic_and_assignment_rules(
    script: ModuleType, committed: dict[str, Any]
) -> None:
    local = script.tomllib.loads((INPUT / "local.toml").read_text("utf-8"))
    words = local["qualifiers"]["words"]
    assert local["qualifiers"]["reason"].strip() and "idempotency" in words
    by_id = {r["id"]: r for r in committed["rules"]}
    for rule_id in ("generic-api-key", "secret-assignment"):
        pattern = by_id[rule_id]["pattern"]
        assert "(?<!(?i:" in pattern and "idempotency" in pattern, rule_id
