"""Credential patterns (metis_memory.analysis.secrets)."""

from __future__ import annotations

import pytest

from metis_memory.analysis.secrets import find_secrets, redaction

KEY_BLOCK = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
    "-----END OPENSSH PRIVATE KEY-----"
)


@pytest.mark.parametrize(
    ("kind", "secret"),
    [
        ("AWS access key", "AKIAIOSFODNN7EXAMPLE"),
        ("GitHub token", "ghp_" + "a1B2" * 9),
        ("GitHub token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop"),
        ("Anthropic API key", "sk-ant-api03-" + "x1Y2z3" * 5),
        ("OpenAI API key", "sk-proj-" + "Ab12Cd34" * 4),
        ("Slack token", "xoxb-1234567890-abcdefghij"),
        ("Google API key", "AIza" + "Sy" + "A1b2C3d4E5" * 3 + "f6G"),
        ("Stripe key", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"),
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
    text = "token=ghp_" + "a1B2" * 9 + " and AKIAIOSFODNN7EXAMPLE"
    found = find_secrets(text)
    assert [m.kind for m in found] == ["GitHub token", "AWS access key"]
    assert found[0].end <= found[1].start


def test_redaction_text() -> None:
    (key,) = find_secrets(KEY_BLOCK)
    assert redaction(key) == "[REDACTED PRIVATE KEY]"
    (aws,) = find_secrets("AKIAIOSFODNN7EXAMPLE")
    assert redaction(aws) == "[REDACTED]"
