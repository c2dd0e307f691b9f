"""Credential patterns (metis_memory.analysis.secrets)."""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metis_memory.analysis.secrets import (
    OVERLAP,
    RULES_FILE,
    SecretMatch,
    find_secrets,
    redaction,
    rules,
)

KEY_BLOCK = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def random_part(size: int, seed: str, alphabet: str = ALNUM) -> str:
    """`size` characters that look random (a key's body), the same on every run. Keys are
    put together here, never written out, so that secret scanners do not flag this file."""
    out = ""
    while len(out) < size:
        digest = hashlib.sha256(f"{seed}/{len(out)}".encode()).digest()
        out += "".join(alphabet[b % len(alphabet)] for b in digest)
    return out[:size]


GITHUB_CLASSIC = "ghp_" + random_part(36, "ghp")
GITHUB_FINE_GRAINED = "github_pat_" + random_part(22, "pat1") + "_" + random_part(59, "pat2")
SLACK_BOT = "xoxb-" + "1234567890-1234567890123-" + random_part(24, "xoxb")
SLACK_USER = "xoxp-" + "1234567890-1234567890-1234567890123-" + random_part(32, "xoxp")
SLACK_WEBHOOK = (
    "https://hooks.slack.com/services/T"
    + random_part(8, "T", ALNUM[:36])
    + "/B"
    + random_part(8, "B", ALNUM[:36])
    + "/"
    + random_part(24, "hook")
)
OPENAI_MARKED = (
    "sk-proj-" + random_part(74, "oa1") + "T3Blbk" + "FJ" + random_part(74, "oa2")
)  # the shape gitleaks knows (`T3BlbkFJ` is "OpenAI" in base64)
OPENAI_PROJECT = "sk-proj-" + random_part(48, "oa3")
ANTHROPIC = "sk-ant-api03-" + random_part(93, "ant") + "AA"
GOOGLE = "AIza" + random_part(35, "gcp")
STRIPE_LIVE = "sk_live_" + random_part(24, "stripe")


@pytest.mark.parametrize(
    ("kind", "secret"),
    [
        ("AWS access key", "AKIAIOSFODNN7EXAMPLE"),
        ("GitHub token", GITHUB_CLASSIC),
        ("GitHub token", GITHUB_FINE_GRAINED),
        ("Anthropic API key", ANTHROPIC),
        ("OpenAI API key", OPENAI_MARKED),
        ("OpenAI API key", OPENAI_PROJECT),
        ("Slack token", SLACK_BOT),
        ("Slack token", SLACK_USER),
        ("Slack webhook", SLACK_WEBHOOK),
        ("Google API key", GOOGLE),
        ("Stripe key", STRIPE_LIVE),
        ("JSON web token", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJlMTIz"),
        ("private key", KEY_BLOCK),
    ],
)
def test_known_credential_shapes_are_found_whole(kind: str, secret: str) -> None:
    text = f"- note: {secret} (do not share)\n"
    (match,) = find_secrets(text)
    assert match.kind == kind
    assert text[match.start : match.end] == secret


def test_a_password_in_a_url_is_found_and_only_the_password_redacted() -> None:
    text = "- db: postgres://admin:s3cretPassw0rd@db.internal:5432/app\n"
    (match,) = find_secrets(text)
    assert match.kind == "password in URL"
    assert text[match.start : match.end] == "s3cretPassw0rd"


def test_an_assignment_with_a_real_looking_value_is_found() -> None:
    text = 'api_key = "Zx81kPq0Lm2Nn4"\n'
    (match,) = find_secrets(text)
    assert text[match.start : match.end] == "Zx81kPq0Lm2Nn4"


@pytest.mark.parametrize(
    "text",
    [
        "- postgres://user:password@localhost/db",
        "- postgres://user:$DB_PASSWORD@localhost/db",
        "- the password is stored in the keychain",
        "- token: the lexer token type",
        "- ssh://git@github.com:22/org/repo",
        "- sk-short",
        "- password = <your password here>",
        "- see https://example.com/docs/tokens for the token format",
    ],
)
def test_prose_and_placeholders_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == []


def test_an_unterminated_key_block_runs_to_the_end() -> None:
    text = "intro\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n"
    (match,) = find_secrets(text)
    assert (match.start, match.end) == (6, len(text))


def test_matches_do_not_overlap_and_come_in_order() -> None:
    text = f"token={GITHUB_CLASSIC} and AKIAIOSFODNN7EXAMPLE"
    found = find_secrets(text)
    assert [m.kind for m in found] == ["GitHub token", "AWS access key"]
    assert found[0].end <= found[1].start


def test_redaction_text() -> None:
    (key,) = find_secrets(KEY_BLOCK)
    assert redaction(key) == "[REDACTED PRIVATE KEY]"
    (aws,) = find_secrets("AKIAIOSFODNN7EXAMPLE")
    assert redaction(aws) == "[REDACTED]"


# ---- the rule set: data from gitleaks, each rule with an example and a near miss ------------

RULE_IDS = [rule.id for rule in rules()]


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_every_rule_finds_its_example_and_not_its_near_miss(rule_id: str) -> None:
    (rule,) = [r for r in rules() if r.id == rule_id]
    assert rule.example and rule.near_miss, f"{rule_id} needs an example and a near miss"
    text = f"- note: {rule.example} (keep out of prompts)\n"
    assert [m.kind for m in find_secrets(text)] == [rule.kind], rule.example
    assert find_secrets(f"- note: {rule.near_miss} (fine)\n") == [], rule.near_miss


# ---- a token in prose: followed by punctuation, inside brackets or quotes (issue #39) --------

MARKS = ".,)]>!:?}"
"""What ends a sentence or a clause, or closes a bracket, after a token in prose."""
WRAPS = (("(", ")"), ('"', '"'), ("'", "'"), ("`", "`"))
SOFT_ENDINGS = ("/", "--", "-", "=", "==", "#", "@", "$", "%", "~", "~~", "_", "__", "+")
"""Characters that can continue a token (a path, base64 padding, `x=1`, `a@b`, `%20`) but
end one when one or two of them are followed by a space, punctuation or the line's end
(`<token>/ for staging`, `<token>--`, Markdown's closing `_`, `~~`; issue #39, second
review), or, `%`, by two hex digits (`%20`: an encoded separator)."""
MARKDOWN_AND_UNICODE = {
    "~~...~~ ending the line": "- The old key ~~{}~~",
    "~~...~~ then more prose": "- The old key ~~{}~~ (revoked in June).",
    "_..._ ending the line": "- Staging uses _{}_",
    "_..._ then more prose": "- Staging uses _{}_, rotated.",
    "__...__ then more prose": "- Staging uses __{}__ (rotated).",
    "**...** then more prose": "- Staging uses **{}** (rotated).",
    "table cell": "| staging | {} | prod |",
    "table cell without spaces": "|staging|{}|",
    "a Markdown link's text": "- see [{}](https://wiki.acme.dev/keys)",
    "an autolink": "- <{}>",
    "CJK text before, 。 after": "- 测试密钥是{}。",
    "CJK ， after": "- 密钥{}，不要提交",
    "CJK 、 after": "- 密钥{}、別の",
    "fullwidth brackets": "- 密钥（{}）",
    "corner brackets": "- 密钥「{}」",
    "guillemets": "- clé «{}»",
    "curly quotes": "- The key “{}” is staging",
    "curly single quotes": "- The key ‘{}’ is staging",
    "no-break space before": "- key\u00a0{}",
    "ideographic spaces": "- key\u3000{}\u3000ok",
}
"""Markdown and non-ASCII text around a token (issue #39, second review: strikethrough
hid 147 rules' examples, `_..._` 74; Azure AD secrets started only after gitleaks' fixed
characters, not after `**`, `|`, `（`, NBSP; a URL after CJK text)."""
PROSE = {
    **{f"{mark!r} ending the line": "- Staging uses {}" + mark for mark in MARKS},
    **{
        f"{mark!r} then more prose": "- Staging uses {}" + mark + " Then more prose."
        for mark in MARKS
    },
    **{f"{a}...{b} ending the line": "- Staging uses " + a + "{}" + b for a, b in WRAPS},
    **{
        f"{a}...{b} then more prose": "- The old " + a + "{}" + b + " is revoked." for a, b in WRAPS
    },
    **MARKDOWN_AND_UNICODE,
    **{f"{mark!r} ending the line": "- Staging uses {}" + mark for mark in (*SOFT_ENDINGS, "%20")},
    **{
        f"{mark!r} then more prose": "- Staging uses {}" + mark + " then more prose."
        for mark in (*SOFT_ENDINGS, "%2C")
    },
}
"""Each rule's example (`{}`) as memory holds it: prose, not code. What is not guaranteed
(a longer token, as the generator reads it): `<token>.json`, `<token>+more`, `<token>@host`,
`<token>#anchor`, `<token>/path`, `<token>=value`."""


def _secret_of(rule_id: str) -> tuple[str, str, str]:
    """A rule's kind, its example, and what of the example is the secret (as the rule finds
    it where gitleaks always did: before a space)."""
    (rule,) = [r for r in rules() if r.id == rule_id]
    text = f"- note: {rule.example} (keep out of prompts)\n"
    (match,) = find_secrets(text)
    return rule.kind, rule.example, text[match.start : match.end]


def missed_in(context: str) -> list[str]:
    """The rules whose example, written in `context`, is not found whole and alone as the
    rule's kind. A rule whose secret may hold the mark itself (a password's `!`) may take
    it too, and a run that can hold `_`, `-`, `=` or `%` the Markdown, padding or encoded
    character around it (up to two `_` before, the SOFT_ENDINGS or `%20` after): more is
    redacted, never less."""
    missed = []
    for rule_id in RULE_IDS:
        kind, example, secret = _secret_of(rule_id)
        text = context.replace("{}", example)
        found = find_secrets(text)
        at = text.index(example) + example.index(secret)
        after = text[at + len(secret) :]
        before = text[:at]
        soft = re.match(r"%[0-9A-Fa-f]{2}|[/=#@$%+~_-]{1,2}", after)
        more_after = max(1, len(soft.group()) if soft else 0)
        more_before = len(before) - len(before.rstrip("_"))
        starts = range(at - min(more_before, 2), at + 1)
        ends = range(at + len(secret), at + len(secret) + more_after + 1)
        whole = len(found) == 1 and found[0].start in starts
        if not (whole and [m.kind for m in found] == [kind] and found[0].end in ends):
            missed.append(rule_id)
    return missed


@pytest.mark.parametrize("context", list(PROSE.values()), ids=list(PROSE))
def test_every_rule_finds_its_example_in_prose(context: str) -> None:
    """gitleaks ends a token at a space, a quote, `;` or a backtick: `.`, `,`, `)`... after
    it hid it (146 of 222 rules missed their own example followed by a full stop)."""
    missed = missed_in(context)
    assert missed == [], f"{len(missed)} of {len(RULE_IDS)} rules miss {context!r}: {missed}"


@pytest.mark.parametrize("context", list(PROSE.values()), ids=list(PROSE))
def test_no_rule_finds_its_near_miss_in_prose(context: str) -> None:
    flagged = [
        r.id for r in rules() if find_secrets(context.replace("{}", r.near_miss) + "\n") != []
    ]
    assert flagged == []


def test_the_rules_name_their_source_and_licence() -> None:
    data = json.loads(
        resources.files("metis_memory.analysis").joinpath(RULES_FILE).read_text("utf-8")
    )
    assert data["source"].startswith("https://github.com/gitleaks/gitleaks/")
    assert len(data["upstream_commit"]) == 40
    licence = resources.files("metis_memory.analysis").joinpath("secret_rules.LICENSE")
    assert "MIT License" in licence.read_text("utf-8")


# The formats an attacker's review found missed (issue #10): each is found, whole or by value.
MISSED_BEFORE = {
    "DB_PASSWORD=Tr0ub4dor3x": "Tr0ub4dor3x",
    "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY": (
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    ),
    "export API_TOKEN='9f8e7d6c5b4a39281706'": "9f8e7d6c5b4a39281706",
    "client_secret: 'Qw3rTy8uIo0pAsDf'": "Qw3rTy8uIo0pAsDf",
    "role AROAJQABLZS4A3QDU57Q": "AROAJQABLZS4A3QDU57Q",
    "user AIDAJQABLZS4A3QDU57Q": "AIDAJQABLZS4A3QDU57Q",
    "glpat-Ab3dEf6hIj9kLm2nOp5q": "glpat-Ab3dEf6hIj9kLm2nOp5q",
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh": "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",
    "xapp-1-A0123456789-1234567890123-abcdef0123456789": (
        "xapp-1-A0123456789-1234567890123-abcdef0123456789"
    ),
    "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX1234567": (
        "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX1234567"
    ),
    "pypi-AgEIcHlwaS5vcmcAb3dEf6hIj9kLm2nAb3dEf6hIj9kLm2nAb3dEf6hIj9kLm2nAb3dEf6hIj9kLm2n": (
        "pypi-AgEIcHlwaS5vcmcAb3dEf6hIj9kLm2nAb3dEf6hIj9kLm2nAb3dEf6hIj9kLm2nAb3dEf6hIj9kLm2n"
    ),
    "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": (
        "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"
    ),
    "dop_v1_" + "0123456789abcdef" * 4: "dop_v1_" + "0123456789abcdef" * 4,
    "shpat_" + "0123456789abcdef" * 2: "shpat_" + "0123456789abcdef" * 2,
    "https://discord.com/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789": (
        "discord.com/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    ),
    "AccountKey=" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2 + "Ab3dEf6hIj9kLm2nOp5qRs==": (
        "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2 + "Ab3dEf6hIj9kLm2nOp5qRs=="
    ),
    "bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq": (
        "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq"
    ),
    "Authorization: Bearer dG9rZW4tMTIzNDU2Nzg5MA": "dG9rZW4tMTIzNDU2Nzg5MA",
    "Authorization: Basic YWRtaW46aHVudGVyMg==": "YWRtaW46aHVudGVyMg==",
    "PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 1\nAAAAIBx\nPrivate-MAC: 0a1b2c": (
        "PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 1\nAAAAIBx\nPrivate-MAC: 0a1b2c"
    ),
    "git clone https://deploy:hunter@git.example.com/repo": "hunter",
}


@pytest.mark.parametrize("text", list(MISSED_BEFORE))
def test_formats_that_were_missed_are_found(text: str) -> None:
    found = find_secrets(f"- {text}\n")
    assert [f"- {text}\n"[m.start : m.end] for m in found] == [MISSED_BEFORE[text]]


@pytest.mark.parametrize(
    "text",
    [
        "- run `make test`; CI uses `make itest` with a local Postgres",
        "- entry point cmd/tallyd/main.go; migrations in db/migrations/",
        "- pinned at commit 3440473a4850d56be8184f20dafe0a845843b1b0",
        "- request id 123e4567-e89b-12d3-a456-426614174000",
        "- version 2.14.1, node v20.20.2, python 3.11.7",
        "- the password reset flow lives in auth/reset.py",
        "- tokens are counted with tiktoken; the token limit is 8192",
        "- secret management: use the team vault, never .env files",
        "- api_key comes from $OPENAI_API_KEY",
        "- Authorization header is set by the client middleware",
        "- the bearer token expires after an hour",
        "- password: changeme (the dev container's default)",
        "- use https://user@host/path for clones",
        "- key bindings: ctrl+k then ctrl+s",
        "- Build with `make test`; CI runs `bash .ci/run`.",
        "- Docs at https://example.com/docs/api?version=2",
        "- api_key: see ${OPENAI_API_KEY}",
        "- The app sends password reset emails via SES.",
        "- Requires Python 3.11.7 and node v24.3.0",
        "- Fixed in commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 (see PR #412)",
        "- sha256 of the release tarball is "
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "- token = lexer output",
        "- UUIDs look like 123e4567-e89b-12d3-a456-426614174000",
        "- the deploy key lives in 1Password under `Deploy`; use $DEPLOY_KEY",
        "- client_secret comes from the vault (`vault kv get secret/app`)",
        "- auth: OAuth device flow, tokens cached in ~/.config/app/token.json",
    ],
)
def test_memory_entries_that_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == []


def test_aws_documentation_key_is_ordinary_only_where_the_line_says_it_is_an_example() -> None:
    """People paste AKIAIOSFODNN7EXAMPLE to try the check: it is reported. A note that says
    it is AWS's example is not refused (issue #39); a real key on such a line still is."""
    assert [m.kind for m in find_secrets("- deploy key AKIAIOSFODNN7EXAMPLE\n")] == [
        "AWS access key"
    ]
    assert find_secrets("- AWS's docs use AKIAIOSFODNN7EXAMPLE as the example key id\n") == []
    real = "AKIA" + random_part(16, "aws-real", ALNUM[:36])
    assert [m.kind for m in find_secrets(f"- the example user's key: {real}\n")] == [
        "AWS access key"
    ]


def test_a_key_below_its_rules_entropy_is_a_placeholder() -> None:
    """gitleaks' entropy threshold: a token of the right shape made of few characters is
    not reported, the same shape with a random body is."""
    assert find_secrets("- CI token: ghp_" + "x" * 36) == []
    assert [m.kind for m in find_secrets(f"- CI token: {GITHUB_CLASSIC}")] == ["GitHub token"]


def test_gitleaks_allowlists_are_honoured() -> None:
    """A rule's allowlist (here, Google's documented sample key) and the global one (a
    value that is only a variable) keep a finding out."""
    documented = "AIza" + "Sy" + "abcdefghijklmnopqrstuvwxyz" + "1234567"
    assert find_secrets(f"- maps: {documented}") == []
    assert find_secrets("- google_api_key = ${GOOGLE_API_KEY}") == []


def test_a_rule_whose_keyword_is_context_needs_it_on_the_line() -> None:
    """gitleaks runs a rule on a file holding one of its keywords; here, on a line holding
    one (an Airtable token's `pat...` shape means nothing without the word airtable)."""
    token = "pat" + random_part(14, "air") + "." + random_part(64, "air2", "0123456789abcdef")
    found = find_secrets(f"- airtable: {token}")
    assert [(m.kind, m.end - m.start) for m in found] == [("Airtable personal access token", 82)]
    assert find_secrets(f"- airtable base\n- {token}") == []


# ---- bounded cost: every rule, as compiled ---------------------------------------------------
#
# Python's `re` backtracks. A pattern runs at a bounded cost per position when every repeat
# is bounded, no repeat that can take several rounds holds another variable repeat that can
# match the characters around it (the shape whose splits multiply), and no match is longer
# than OVERLAP (the windows' overlap, which also bounds the work from one position). Checked
# here from each rule's compiled pattern, not taken from the generator; the timing of hostile
# inputs is the benchmark's business, not a test's.

try:
    import re._constants as sre  # type: ignore[import-not-found,unused-ignore]
    import re._parser as sre_parse  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # Python 3.10
    import sre_constants as sre  # type: ignore[no-redef,unused-ignore]
    import sre_parse  # type: ignore[no-redef,unused-ignore]

_ALL = frozenset(range(129))  # ASCII, and 128 for any other character
_SPACE = frozenset(map(ord, " \t\n\r\f\v"))
_DIGIT = frozenset(range(48, 58))
_WORD = _DIGIT | frozenset(range(65, 91)) | frozenset(range(97, 123)) | {95}
_CATEGORIES = {
    sre.CATEGORY_DIGIT: _DIGIT,
    sre.CATEGORY_NOT_DIGIT: _ALL - _DIGIT,
    sre.CATEGORY_SPACE: _SPACE,
    sre.CATEGORY_NOT_SPACE: _ALL - _SPACE,
    sre.CATEGORY_WORD: _WORD,
    sre.CATEGORY_NOT_WORD: _ALL - _WORD,
}
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT)
Node = tuple[Any, Any]


def _one_char(op: Any, av: Any) -> frozenset[int] | None:
    """What a one-character node matches, either case (None: not such a node)."""
    codes: set[int] = set()
    negated = op is sre.NOT_LITERAL
    if op is sre.LITERAL or op is sre.NOT_LITERAL:
        codes = {min(av, 128)}
    elif op is sre.ANY:
        return _ALL - {10}
    elif op is sre.IN:
        for item, value in av:
            if item is sre.NEGATE:
                negated = True
            elif item is sre.LITERAL:
                codes.add(min(value, 128))
            elif item is sre.RANGE:
                codes.update(range(min(value[0], 128), min(value[1], 128) + 1))
            elif item is sre.CATEGORY:
                codes |= _CATEGORIES[value]
    else:
        return None
    codes |= {ord(chr(c).swapcase()) for c in codes if c < 128 and chr(c).isalpha()}
    return _ALL - codes if negated else frozenset(codes)


def _nodes(seq: Any) -> list[Node]:
    """Every node under `seq`, depth first (a node's subtree follows it)."""
    out: list[Node] = []
    for op, av in seq:
        out.append((op, av))
        if op is sre.SUBPATTERN:
            out += _nodes(av[3])
        elif op is sre.BRANCH:
            for alternative in av[1]:
                out += _nodes(alternative)
        elif op in _REPEATS:
            out += _nodes(av[2])
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            out += _nodes(av[1])
    return out


def _chars(nodes: list[Node]) -> set[int]:
    found: set[int] = set()
    for op, av in nodes:
        found |= _one_char(op, av) or set()
    return found


def bounded_cost_problems(pattern: re.Pattern[str]) -> list[str]:
    parsed = sre_parse.parse(pattern.pattern)
    problems = []
    if parsed.getwidth()[1] > OVERLAP:
        problems.append(f"a match can be {parsed.getwidth()[1]} characters long")
    for op, av in _nodes(parsed.data):
        chars = _one_char(op, av)
        if chars is not None and 10 in chars:
            problems.append("a match (or a lookaround) can span lines")
        if op not in _REPEATS:
            continue
        low, high, body = av
        if high == sre.MAXREPEAT:
            problems.append("an unbounded repeat")
        if high <= 1 or low == high:
            continue  # `x?` or `x{4}`: no rounds to split differently
        inside = _nodes(body)
        for k, node in enumerate(inside):
            if node[0] not in _REPEATS or node[1][0] == node[1][1]:
                continue
            held = _nodes(node[1][2])
            rest = inside[:k] + inside[k + 1 + len(held) :]
            if not rest or _chars(held) & _chars(rest):
                problems.append("a variable repeat in a repeat, over the same characters")
    return problems


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_every_rule_runs_at_a_bounded_cost(rule_id: str) -> None:
    """Replaces a wall-clock test over 4 MiB hostile inputs (which flaked under load)."""
    (rule,) = [r for r in rules() if r.id == rule_id]
    assert bounded_cost_problems(rule.pattern) == []


def test_the_bounded_cost_check_catches_what_backtracks() -> None:
    assert "an unbounded repeat" in bounded_cost_problems(re.compile(r"ey[A-Za-z0-9]+\."))
    assert bounded_cost_problems(re.compile(r"(?:[a-z]{1,9}){1,9}!")) != []
    assert bounded_cost_problems(re.compile(r"(?:[a-z]{1,9}_){0,4}!")) == []
    assert bounded_cost_problems(re.compile(r"x[^a]{1,9}")) == [
        "a match (or a lookaround) can span lines"
    ]
    assert bounded_cost_problems(re.compile(r"a{4000}b{100}")) != []


PIECES = (
    [r.example for r in rules()]
    + [r.near_miss for r in rules()]
    + [
        "\n",
        "\r\n",
        " ",
        "- note: ",
        "token = ",
        "Authorization: Bearer ",
        KEY_BLOCK,
        "PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 1\nAAAAIBx\nPrivate-MAC: 0a1b2c\n",
        "\r",
        "TOKEN: ",
        "x" * 2_100,  # a line too long to keep: scanned in windows
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12))
def test_a_line_at_a_time_finds_what_a_scan_of_the_whole_text_finds(pieces: list[str]) -> None:
    """No rule matches across a line break: the kept per-line scans add up to the whole."""
    from metis_memory.analysis.secrets import _private_keys, _putty_keys, _scan

    text = "".join(pieces)
    whole = sorted(
        _scan(text, 0) + _private_keys(text) + _putty_keys(text),
        key=lambda m: (m.start, m.start - m.end),
    )
    merged: list[SecretMatch] = []
    for match in whole:
        if not merged or match.start >= merged[-1].end:
            merged.append(match)
    assert find_secrets(text) == merged


@pytest.mark.parametrize("past_edge", [0, 5, 20, 30])
def test_a_line_across_a_window_edge_is_scanned_as_the_line_alone(past_edge: int) -> None:
    """Hypothesis found a window that began mid-line matching `access=…` inside `…qaccess=…`,
    where the line's own scan (one match over both, dropped for its `access` stopword) has
    none: windows start where a line does."""
    from metis_memory.analysis.secrets import WINDOW, find_secrets_with
    from metis_memory.analysis.secrets import _rule_set as rule_set

    copy = "access=TZkS178FntarxyfuAU5PNsmq"
    line = "- note: " + copy + copy + " and more"
    second = len("- note: " + copy)  # where the second `access` starts in the line
    filler = "x" * 99 + "\n"
    at = WINDOW + past_edge - second  # where the line starts
    text = filler * (at // len(filler)) + "y" * (at % len(filler)) + line + "\n" + filler * 50
    assert text.index(line) + second == WINDOW + past_edge
    alone: list[SecretMatch] = []
    offset = 0
    for each in text.split("\n"):
        alone += [
            SecretMatch(m.kind, m.start + offset, m.end + offset)
            for m in find_secrets_with(rule_set(), each)
        ]
        offset += len(each) + 1
    assert find_secrets_with(rule_set(), text) == alone


LONG_BASE = "".join(
    f"- entry {i}: {'lorem ipsum ' * 4}{PIECES[i % len(PIECES)]}\n" for i in range(600)
)
"""Every rule's example and near miss on some line, in ~70 KB: past LINE_SCAN_MAX_CHARS (64 KiB)
by more than the edits below can cut, and no longer, as each example scans it whole twice."""


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=len(LONG_BASE)),
            st.integers(min_value=0, max_value=40),
            st.lists(st.sampled_from(PIECES), max_size=3),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_a_long_text_edited_finds_what_a_scan_of_it_from_scratch_finds(
    edits: list[tuple[int, int, list[str]]],
) -> None:
    """A keystroke in a 1 MiB file has only its lines scanned again; each edit (a deletion
    and an insertion anywhere, line breaks included) must leave the same matches as a scan
    of the new text from scratch."""
    from metis_memory.analysis.secrets import LINE_SCAN_MAX_CHARS, find_secrets_with
    from metis_memory.analysis.secrets import _rule_set as rule_set

    text = LONG_BASE
    assert len(PIECES) <= 600 and len(text) - 4 * 40 > LINE_SCAN_MAX_CHARS
    find_secrets(text)
    for at, cut, pieces in edits:
        at = min(at, len(text))
        text = text[:at] + "".join(pieces) + text[at + cut :]
        assert find_secrets(text) == find_secrets_with(rule_set(), text)
