"""Who a `metis-memory` command writes as (`hosts.actor`): the user at their own terminal, or
the agent host whose shell tool set its marker. The markers are those each host's tool shell
was seen to set (Claude Code 2.1.330, Codex 0.169.0, Gemini CLI 0.61.0, Copilot CLI 1.0.102,
opencode 1.18.33, Qwen Code 0.24.4, Cline CLI 3.0.65, VS Code 1.139.1); here, what is made of
them, and of values a hostile environment could hold."""

from __future__ import annotations

import pytest

from metis_memory.hosts.actor import MARKERS, cli_provenance, shell_host
from metis_memory.store.provenance import Provenance


def test_a_terminal_without_markers_is_the_user() -> None:
    assert cli_provenance({"PATH": "/usr/bin", "TERM_PROGRAM": "vscode"}) == Provenance(
        "cli", "user"
    )
    assert not cli_provenance({}).agent


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (
            {
                "CLAUDECODE": "1",
                "CLAUDE_CODE_SESSION_ID": "s1",
                "AI_AGENT": "claude-code_2-1-330_agent",
            },
            ("claude-code 2.1.330", "s1"),
        ),
        ({"CODEX_THREAD_ID": "t1", "CODEX_VERSION": "0.169.0"}, ("codex 0.169.0", "t1")),
        ({"GEMINI_CLI": "1", "GEMINI_SESSION_ID": "not-given-to-commands"}, ("gemini-cli", None)),
        (
            {
                "COPILOT_CLI": "1",
                "COPILOT_AGENT_SESSION_ID": "c1",
                "COPILOT_CLI_BINARY_VERSION": "1.0.102",
            },
            ("copilot-cli 1.0.102", "c1"),
        ),
        ({"AGENT": "1", "OPENCODE": "1", "OPENCODE_PID": "4242"}, ("opencode", None)),
        (
            {
                "QWEN_CODE": "1",
                "QWEN_CODE_SESSION_ID": "q1",
                "QWEN_CODE_STARTUP_VERSION": "0.24.4",
                "QWEN_CODE_PROMPT_ID": "q1########0",
            },
            ("qwen-code 0.24.4", "q1"),
        ),
        ({"CLINE_CONNECTOR_CLI_LAUNCH": '{"launcher":"/x/cline"}'}, ("cline-cli", None)),
        (
            {"COPILOT_AGENT": "1", "TERM_PROGRAM": "vscode", "TERM_PROGRAM_VERSION": "1.139.1"},
            ("VS Code 1.139.1 chat agent", None),
        ),
    ],
)
def test_each_hosts_shell_makes_an_agents_write(
    env: dict[str, str], expected: tuple[str, str | None]
) -> None:
    by = cli_provenance(env)
    assert (by.door, by.actor, by.session, by.agent) == ("cli", *expected, True)


@pytest.mark.parametrize(
    "env",
    [
        {"CLAUDECODE": "0"},
        {"CLAUDECODE": ""},
        {"GEMINI_CLI": "true"},
        {"COPILOT_CLI": "yes"},
        {"COPILOT_AGENT": "0"},
        {"CODEX_THREAD_ID": ""},
        {"CODEX_HOME": "/home/me/.codex"},  # a user's own setting, not Codex's shell
        {"CLAUDE_PROJECT_DIR": "/p"},  # set for Gemini CLI's hooks too: not a marker
        {"AI_AGENT": "claude-code_2-1-330_agent"},  # a version alone marks nothing
        {"OPENCODE": "true"},
        {"AGENT": "1"},  # set by opencode, and a convention of others: names no host
        {"OPENCODE": "1", "OPENCODE_TERMINAL": "1"},  # a terminal opencode opened for the user
        {"OPENCODE_PID": "4242"},
        {"QWEN_CODE": "0"},
        {"QWEN_CODE_SESSION_ID": "q1", "QWEN_CODE_STARTUP_VERSION": "0.24.4"},  # hooks get these
        {"CLINE_CONNECTOR_CLI_LAUNCH": ""},
        {"CLINE_DATA_DIR": "/home/me/.cline/data"},  # a user's own setting, not Cline's shell
    ],
)
def test_values_that_are_not_the_hosts_are_the_user(env: dict[str, str]) -> None:
    assert shell_host(env) is None
    assert cli_provenance(env) == Provenance("cli", "user")


def test_a_version_that_is_not_one_is_left_out() -> None:
    for odd in ("claude-code_2-1-330-beta_agent", "claude-code__agent", "claude-code_x_agent", "x"):
        by = cli_provenance({"CLAUDECODE": "1", "AI_AGENT": odd})
        assert by.actor == "claude-code", odd
    assert cli_provenance({"COPILOT_AGENT": "1", "TERM_PROGRAM_VERSION": "9"}).actor == (
        "VS Code chat agent"
    ), "TERM_PROGRAM_VERSION is VS Code's only beside TERM_PROGRAM=vscode"


def test_qwens_stand_in_for_a_version_it_could_not_read_is_left_out() -> None:
    """Qwen Code's launcher writes "unknown" when its package.json cannot be read
    (cli-entry.js), and a nested Qwen keeps the outer one's value: only a version is kept."""
    for odd in ("unknown", "", "v", "-1"):
        by = cli_provenance({"QWEN_CODE": "1", "QWEN_CODE_STARTUP_VERSION": odd})
        assert by.actor == "qwen-code", odd
    assert cli_provenance(
        {"QWEN_CODE": "1", "QWEN_CODE_STARTUP_VERSION": "0.25.0-beta.1"}
    ).actor == ("qwen-code 0.25.0-beta.1")


def test_hostile_values_are_one_short_printable_line() -> None:
    by = cli_provenance(
        {
            "CODEX_THREAD_ID": "t\x1b[2J\nforged line" + "x" * 5000,
            "CODEX_VERSION": "1.0\n\x07 " + "v" * 5000,
        }
    )
    assert by.agent and by.actor.startswith("codex 1.0 ") and len(by.actor) <= 200
    assert by.session is not None and len(by.session) <= 200
    for text in (by.actor, by.session):
        assert text.isprintable() and "\n" not in text


def test_a_host_inside_another_hosts_shell_is_an_agent_either_way() -> None:
    nested = {"CLAUDECODE": "1", "COPILOT_CLI": "1", "GEMINI_CLI": "1"}
    assert cli_provenance(nested).agent
    assert set(MARKERS) == {
        "CLAUDECODE",
        "CODEX_THREAD_ID",
        "GEMINI_CLI",
        "COPILOT_CLI",
        "OPENCODE",
        "QWEN_CODE",
        "CLINE_CONNECTOR_CLI_LAUNCH",
        "COPILOT_AGENT",
    }


def test_a_host_started_in_opencodes_user_terminal_is_still_named() -> None:
    """opencode's own terminal is the user's, but a host the user starts there marks its
    commands as usual (it inherits OPENCODE=1 and OPENCODE_TERMINAL=1)."""
    inside = {"OPENCODE": "1", "OPENCODE_TERMINAL": "1", "QWEN_CODE": "1"}
    assert cli_provenance(inside).actor == "qwen-code"
    assert cli_provenance({"OPENCODE": "1", "OPENCODE_TERMINAL": ""}).actor == "opencode"
