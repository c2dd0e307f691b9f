"""`metis-memory check` on secrets in the memory files: each one's `file:line:col` and kind,
never its value nor the line that holds it, in text, `--json` and `--format sarif` (a rule
per kind), and exit 1, so CI fails before the secret is pushed."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from metis_memory.analysis.secret_report import rule_id, secret_findings
from metis_memory.analysis.secrets import find_secrets
from support.cli import Runner
from support.memory_files import write_memory

# Built in pieces: no secret scanner flags this file.
GITHUB = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
AWS = "AKIA" + "Z7Q2M4K8W3N6P9R5"
KEY_BODY = [
    "MIIEow" + "IBAAKCAQEAq7Zp3Lk9VmT2xYwQ8sR4nJ6hG1fD5cB0aE7uI3oP9lK2jH4gF6d",
    "S8aQ1wE3rT5yU7iO9pA2sD4fG6hJ8kL0zX1cV3bN5mQ7wE9rT2yU4iO6pA8sD0fG",
]
KEY_BLOCK = "\n".join(
    ["-----BEGIN RSA " + "PRIVATE KEY-----", *KEY_BODY, "-----END RSA " + "PRIVATE KEY-----"]
)
SECRETS = [GITHUB, AWS, *KEY_BODY]

MEMORY = (
    "- Build with make test\n"
    "- CI deploys with (tokenline-marker) " + GITHUB + " for the release job\n"
    "- S3 (émoji 😀 before it) " + AWS + "\n"
)
USER = "- Prefers short answers\n- Personal token: " + GITHUB + "\n- SSH key:\n" + KEY_BLOCK + "\n"
TEXTS = {"MEMORY.md": MEMORY, "USER.md": USER}


def slug(kind: str) -> str:
    return "metis-memory/secret/" + re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-")


def expected() -> list[dict[str, Any]]:
    """Every secret written, in file order: position worked out from the text itself, and
    the kind the scanner gives the match that starts there (the kinds are data)."""
    places: list[dict[str, Any]] = []
    for file, text in TEXTS.items():
        starts = sorted(text.index(s) for s in (GITHUB, AWS, "-----BEGIN") if s in text)
        kinds = {m.start: m.kind for m in find_secrets(text)}
        assert sorted(kinds) == starts, f"the scanner must find exactly the secrets in {file}"
        for start in starts:
            line_start = text.rfind("\n", 0, start) + 1
            places.append(
                {
                    "file": file,
                    "line": text.count("\n", 0, start) + 1,
                    "column": start - line_start + 1,
                    "utf16_column": len(text[line_start:start].encode("utf-16-le")) // 2 + 1,
                    "kind": kinds[start],
                }
            )
    return places


@pytest.fixture
def secrets_workspace(workspace: Path) -> Path:
    for file, text in TEXTS.items():
        write_memory(workspace, file, text)
    return workspace


def assert_nothing_leaks(result: subprocess.CompletedProcess[str]) -> None:
    output = result.stdout + result.stderr
    for secret in SECRETS:
        pieces = {secret[i : i + 8] for i in range(len(secret) - 7)}
        assert not [p for p in pieces if p in output], "a part of a secret was printed"
    assert "tokenline-marker" not in output, "the line holding a secret was echoed"
    assert "BEGIN RSA" not in output


def test_text_names_each_secret_by_file_line_and_column_and_fails(
    cli: Runner, secrets_workspace: Path
) -> None:
    result = cli("check")
    assert result.returncode == 1, result.stderr
    assert_nothing_leaks(result)
    found = [
        re.fullmatch(r"\.metis/(\S+):(\d+):(\d+): suspected (.+?): (.*)", line)
        for line in result.stdout.splitlines()
    ]
    reported = [(m[1], int(m[2]), int(m[3]), m[4]) for m in found if m]
    assert reported == [(e["file"], e["line"], e["column"], e["kind"]) for e in expected()]
    for m in found:
        if m:
            assert m[5] == (
                "remove it (metis-memory consolidate) and keep a pointer to where it lives instead"
            )
    # The usual size lines still come first.
    assert result.stdout.splitlines()[0].startswith("MEMORY.md ")


def test_json_lists_each_secret_with_its_kind_and_rule_id(
    cli: Runner, secrets_workspace: Path
) -> None:
    for args in (["--json"], ["--format", "json"]):
        result = cli("check", *args)
        assert result.returncode == 1, result.stderr
        assert_nothing_leaks(result)
        report = json.loads(result.stdout)
        assert report["secrets"] == [
            {
                "file": e["file"],
                "line": e["line"],
                "column": e["column"],
                "kind": e["kind"],
                "rule_id": slug(e["kind"]),
            }
            for e in expected()
        ]
        assert report["MEMORY.md"]["status"] == "ok"  # the per-file report keeps its place


def test_sarif_has_a_result_per_secret_and_a_rule_per_kind(
    cli: Runner, secrets_workspace: Path
) -> None:
    result = cli("check", "--format", "sarif")
    assert result.returncode == 1, result.stderr
    assert_nothing_leaks(result)
    log = json.loads(result.stdout)
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    assert run["columnKind"] == "utf16CodeUnits"
    rules = run["tool"]["driver"]["rules"]
    ids = [rule["id"] for rule in rules]
    assert len(ids) == len(set(ids)), "one rule per kind"
    by_id = {rule["id"]: rule for rule in rules}
    places = expected()
    assert set(ids) == {slug(e["kind"]) for e in places}
    for e in places:
        rule = by_id[slug(e["kind"])]
        assert rule["shortDescription"]["text"] == f"Suspected {e['kind']} in a memory file"
        assert "metis-memory consolidate" in rule["help"]["text"]
        assert "`$GITHUB_TOKEN`, in 1Password under Deploy" in rule["help"]["text"]
    results = run["results"]
    assert all(r["ruleId"] in by_id for r in results)
    assert all(r["level"] == "error" and r["message"]["text"] for r in results)
    located = [
        (
            r["ruleId"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["locations"][0]["physicalLocation"]["region"]["startColumn"],
        )
        for r in results
    ]
    assert located == [
        (slug(e["kind"]), f".metis/{e['file']}", e["line"], e["utf16_column"]) for e in places
    ]
    for r in results:
        region = r["locations"][0]["physicalLocation"]["region"]
        assert (region["endLine"], region["endColumn"]) >= (
            region["startLine"],
            region["startColumn"] + 1,
        )
    # The astral character before the AWS key counts two UTF-16 units: SARIF's column is
    # one past the text's.
    aws = next(e for e in places if e["file"] == "MEMORY.md" and e["line"] == 3)
    assert aws["utf16_column"] == aws["column"] + 1


def test_ordinary_entries_pass_with_no_secret_reported(cli: Runner, workspace: Path) -> None:
    write_memory(
        workspace, "MEMORY.md", "- api_key: see ${OPENAI_API_KEY}\n- Build with make test\n"
    )
    write_memory(workspace, "USER.md", "- Keeps the deploy token in 1Password under Deploy\n")
    text = cli("check")
    assert text.returncode == 0, text.stdout + text.stderr
    assert "suspected" not in text.stdout
    report = json.loads(cli("check", "--json").stdout)
    assert report["secrets"] == []
    sarif = cli("check", "--format", "sarif")
    assert sarif.returncode == 0
    assert json.loads(sarif.stdout)["runs"][0]["results"] == []


def test_python_dash_m_fails_the_same_way(cli_module: Runner, secrets_workspace: Path) -> None:
    result = cli_module("check")
    assert result.returncode == 1
    assert_nothing_leaks(result)


def test_rule_ids_are_slugs_of_the_kind() -> None:
    assert rule_id("GitHub token") == "metis-memory/secret/github-token"
    assert rule_id("password in URL") == "metis-memory/secret/password-in-url"
    assert rule_id("  ") == "metis-memory/secret/unknown"


def test_positions_count_lines_by_newline_and_columns_in_both_units() -> None:
    text = "a\r\n😀 x " + AWS + "\n\n" + GITHUB
    (aws, gh) = secret_findings("MEMORY.md", text)
    assert (aws.line, aws.column, aws.utf16_column) == (2, 5, 6)
    assert (aws.end_line, aws.end_utf16_column) == (2, 6 + len(AWS))
    assert (gh.line, gh.column, gh.utf16_column) == (4, 1, 1)


def test_a_line_of_thousands_of_secrets_lists_the_first_thousand_and_says_more_follow(
    cli: Runner, workspace: Path
) -> None:
    """Issue 39, item 6: `check` on a 1 MiB line of `api_key=…` pairs lists the first 1,000
    and says the scan stopped there (it took 19 s to list 40,000)."""
    pair = "api_key=Zx9Qw3Er7Ty1Ui5O "
    write_memory(workspace, "MEMORY.md", "- keys: " + pair * 40_000)
    result = cli("check")
    assert result.returncode == 1, result.stderr
    listed = [line for line in result.stdout.splitlines() if ": suspected " in line]
    assert len(listed) == 1_000
    assert listed[0].startswith(".metis/MEMORY.md:1:9: suspected ")
    assert result.stdout.splitlines()[-1] == (
        ".metis/MEMORY.md: more suspected secrets follow; the first 1,000 are listed and the "
        "scan stops there: remove them (metis-memory consolidate) and run check again"
    )
    assert pair.strip()[8:] not in result.stdout
    report = json.loads(cli("check", "--json").stdout)
    assert len(report["secrets"]) == 1_000
    assert report["MEMORY.md"]["secrets_listed"] == "the first 1,000: the scan stops there"
    assert "secrets_listed" not in report["USER.md"]
