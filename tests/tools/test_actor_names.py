"""Who a record says wrote it, for the hosts of issue 42 (`tools.history.actor_name`, and
`person` as the log, the hover and the review inbox show it).

The actors are those the real binaries left in the write log (tests/real_hosts, one write
each): opencode 1.18.33 sends its own name and version; Qwen Code 0.24.4 names its MCP
client after the server entry, with a version of "0.0.1" whatever its own; the Cline CLI
3.0.65 leaves its SDK's defaults, "@cline/core" "0.0.0". A version that is only a
placeholder is not shown: "Qwen Code 0.0.1" would read as the product's version. Through the
shell door, `hosts.actor` names them from the variables their shell tools set."""

from __future__ import annotations

import pytest

from metis_memory import MemoryStore
from metis_memory.hosts.actor import cli_provenance
from metis_memory.store.provenance import Provenance
from metis_memory.tools.history import actor_name, person


@pytest.mark.parametrize(
    ("actor", "shown"),
    [
        ("opencode 1.18.33", "opencode 1.18.33"),
        ("qwen-cli-mcp-client-metis-memory 0.0.1", "Qwen Code"),
        ("qwen-cli-mcp-client-memory 0.0.1", "Qwen Code"),  # the user named the entry
        ("qwen-cli-mcp-client-my memory 0.0.1", "Qwen Code"),  # (a name with a space)
        ("qwen-cli-mcp-client-metis-memory 0.25.0", "Qwen Code 0.25.0"),  # a real one, kept
        ("@cline/core 0.0.0", "Cline"),
        ("@cline/core 0.0.87", "Cline 0.0.87"),
    ],
)
def test_the_new_hosts_mcp_clients_read_as_their_products(
    store: MemoryStore, actor: str, shown: str
) -> None:
    store.add_entry("MEMORY.md", "- Deploys happen on Tuesdays", by=Provenance("mcp", actor))
    record = store.history("MEMORY.md", limit=1)[0]
    assert record.actor == actor, "the log keeps what the client sent"
    assert actor_name(record.actor) == shown
    assert person(record) == f"{shown} through memory_add over MCP"


@pytest.mark.parametrize(
    ("env", "shown"),
    [
        # What each host's shell tool gave `env` (tests/real_hosts/test_cli_in_agent_shell.py).
        ({"AGENT": "1", "OPENCODE": "1", "OPENCODE_PID": "4242"}, "opencode"),
        (
            {
                "QWEN_CODE": "1",
                "QWEN_CODE_SESSION_ID": "cbab239c-5b79-4a46-9e03-504080aa4475",
                "QWEN_CODE_STARTUP_VERSION": "0.24.4",
            },
            "Qwen Code 0.24.4",
        ),
        (
            {"CLINE_CONNECTOR_CLI_LAUNCH": '{"launcher":"/x/cline","cwd":"/x"}'},
            "Cline CLI",
        ),
    ],
)
def test_a_command_in_the_new_hosts_shells_reads_as_the_host(
    store: MemoryStore, env: dict[str, str], shown: str
) -> None:
    store.add_entry("MEMORY.md", "- Deploys happen on Tuesdays", by=cli_provenance(env))
    record = store.history("MEMORY.md", limit=1)[0]
    assert record.agent
    assert person(record) == f"{shown} with metis-memory add"


@pytest.mark.parametrize(
    ("actor", "shown"),
    [
        ("qwen-cli-mcp-client-metis-memory", "Qwen Code"),  # no version
        ("qwen-cli-mcp-client-metis-memory beta", "Qwen Code"),  # a word is the server's name
        ("qwen-cli-mcp-client-", "qwen-cli-mcp-client-"),  # no server: not Qwen's
        ("qwen-cli-mcp-client 0.0.1", "qwen-cli-mcp-client 0.0.1"),  # not the per-server name
        ("QWEN-CLI-MCP-CLIENT-x 0.0.1", "Qwen Code"),  # names are matched as case-folded
        ("@cline/core", "Cline"),
        ("@cline/corex 0.0.0", "@cline/corex 0.0.0"),
        ("opencode-fork 2.0", "opencode-fork 2.0"),
    ],
)
def test_only_the_names_themselves_are_taken_for_the_hosts(actor: str, shown: str) -> None:
    assert actor_name(actor) == shown


def test_a_secret_in_a_qwen_server_name_is_never_shown() -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    assert actor_name(f"qwen-cli-mcp-client-{token} 0.0.1") == "Qwen Code"
    assert token not in actor_name(f"@cline/core {token}")
