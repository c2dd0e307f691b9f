"""Corpora of memory entries (tests/analysis/secret_corpus/): ordinary notes in which no
credential may be found, and credentials in prose that must each be found whole. The rates
are the figures docs/reliability.md quotes (issue #39: 5 of 40 ordinary notes were refused;
8 of 8 tokens ending a sentence leaked)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

from metis_memory.analysis.secrets import find_secrets

CORPUS = Path(__file__).parent / "secret_corpus"
ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def entries(name: str) -> list[str]:
    lines = (CORPUS / name).read_text("utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]


def test_ordinary_entries_are_not_secrets() -> None:
    ordinary = entries("ordinary_entries.txt")
    assert len(ordinary) >= 60
    refused = {
        entry: [(m.kind, entry[m.start : m.end]) for m in find_secrets(entry + "\n")]
        for entry in ordinary
    }
    refused = {entry: found for entry, found in refused.items() if found}
    rate = len(refused) / len(ordinary)
    assert not refused, (
        f"false positives: {len(refused)} of {len(ordinary)} ordinary entries ({rate:.1%}):\n"
        + "\n".join(f"{entry}\n    -> {found}" for entry, found in refused.items())
    )


def random_part(size: int, seed: str, alphabet: str = ALNUM) -> str:
    """`size` characters that look random (a key's body), the same on every run."""
    out = ""
    while len(out) < size:
        digest = hashlib.sha256(f"{seed}/{len(out)}".encode()).digest()
        out += "".join(alphabet[b % len(alphabet)] for b in digest)
    return out[:size]


def _b64(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


URL_SAFE = ALNUM + "-_"
TOKENS = {
    "stripe": "sk_live_" + random_part(24, "stripe"),
    "jwt": ".".join(
        (
            _b64({"alg": "HS256", "typ": "JWT"}),
            _b64({"sub": "1234567890", "role": "admin", "iat": 1718000000}),
            random_part(43, "jwt", URL_SAFE),
        )
    ),
    "npm": "npm_" + random_part(36, "npm"),
    "google": "AIza" + random_part(35, "gcp", URL_SAFE),
    "huggingface": "hf_" + random_part(34, "hf", ALNUM[10:]),
    "sendgrid": "SG." + random_part(22, "sg1", URL_SAFE) + "." + random_part(43, "sg2", URL_SAFE),
    "digitalocean": "dop_v1_" + random_part(64, "do", "0123456789abcdef"),
    "vault": "hvs." + random_part(95, "vault", URL_SAFE),
    "github": "ghp_" + random_part(36, "ghp"),
    "gitlab": "glpat-" + random_part(20, "glpat"),
    "anthropic": "sk-ant-api03-" + random_part(93, "ant", URL_SAFE) + "AA",
    "openai": "sk-proj-" + random_part(48, "oa"),
    "slack": "xoxb-1234567890-1234567890123-" + random_part(24, "xoxb"),
    "aws": "AKIA" + random_part(16, "aws", ALNUM[:36]),
    "aws_secret": random_part(40, "aws-secret", ALNUM + "+/"),
    "generic": random_part(32, "generic"),
    "password": "Tr0ub4dor3xQz",
    "azure": random_part(3, "azure1") + "8Q~" + random_part(34, "azure2", URL_SAFE + "~."),
}


def test_credentials_in_prose_are_found_whole() -> None:
    templates = entries("credentials_in_prose.txt")
    missed: list[str] = []
    tokens = 0
    for template in templates:
        names = re.findall(r"\{(\w+)\}", template)
        text = template
        for name in names:
            text = text.replace("{" + name + "}", TOKENS[name], 1)
        found = [text[m.start : m.end] for m in find_secrets(text + "\n")]
        tokens += len(names)
        missed += [f"{name} in {template!r}" for name in names if TOKENS[name] not in found]
    assert tokens >= 30
    assert not missed, f"{len(missed)} of {tokens} credentials in prose missed:\n" + "\n".join(
        missed
    )
