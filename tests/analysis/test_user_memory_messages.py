"""The user memory's findings name it as a person knows it ("your user memory"), where a
workspace's name their file (analysis/checks.py `user_memory`)."""

from __future__ import annotations

from metis_memory.analysis.checks import check
from metis_memory.store.files import MemoryFile

TOKEN = "AKIAIOSFODNN7EXAMPLE"


def messages(text: str, *, user_memory: bool, **kwargs: object) -> dict[str, str]:
    found = check(MemoryFile.USER, text, user_memory=user_memory, **kwargs)  # type: ignore[arg-type]
    return {f.code: f.message for f in found}


def test_over_the_soft_cap() -> None:
    text = "# User\n" + "- a fact about me that takes room\n" * 50
    assert messages(text, user_memory=True)["over-soft-cap"].startswith(
        "Your user memory is 1,707 B, over its 1,536 B soft cap (hard cap 3,072 B): "
    )
    assert messages(text, user_memory=False)["over-soft-cap"].startswith("USER.md is 1,707 B")


def test_over_the_hard_cap() -> None:
    text = "- x\n" * 800
    message = messages(text, user_memory=True)["over-hard-cap"]
    assert message.startswith("Your user memory is 3,200 B, over its 3,072 B hard cap")


def test_a_secret_says_where_the_user_memory_goes() -> None:
    message = messages(f"- deploy key {TOKEN}\n", user_memory=True)["secret"]
    assert message == (
        "Possible AWS access key in your user memory: it goes into the system prompt of every "
        "workspace (a write that adds one is refused); redact it and keep the credential in a "
        "secret store"
    )
    assert TOKEN not in message


def test_not_utf8() -> None:
    text = "- caf\ufffd\n"
    message = messages(text, user_memory=True, utf8_error_offset=5, size_bytes=7)["not-utf8"]
    assert message.startswith("Your user memory is not valid UTF-8 (first bad byte at offset 5)")
