"""Connect Agents' compare-and-swap attacked: the plan shown for one folder sent back to
write another, and plans built to look alike (separators inside paths and texts)."""

from __future__ import annotations

from pathlib import Path

from metis_memory.lsp.features.connect import plan_digest
from support.lsp_session import MetisClient
from support.lsp_values import file_uri

REQUEST_FAILED = -32803


async def test_a_plan_shown_for_one_folder_does_not_write_another(
    client: MetisClient, tmp_path: Path
) -> None:
    """Two folders whose files are alike (both new) make the same writes by path and text,
    but a plan is about one folder's files: shown for `a`, it never writes `b`."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    await client.start_session([a, b])
    preview = await client.command(
        "metis.connectAgents", {"hosts": ["cursor"], "dryRun": True, "workspace": file_uri(a)}
    )
    error = await client.command_error(
        "metis.connectAgents",
        {"hosts": ["cursor"], "expectedPlan": preview["plan"], "workspace": file_uri(b)},
    )
    assert error.code == REQUEST_FAILED
    assert error.data == {"code": "conflict", "is_user_visible": True}
    assert list(a.iterdir()) == [] and list(b.iterdir()) == []
    written = await client.command(
        "metis.connectAgents",
        {"hosts": ["cursor"], "expectedPlan": preview["plan"], "workspace": file_uri(a)},
    )
    assert written["plan"] == preview["plan"] and (a / ".cursor" / "mcp.json").is_file()


def test_plans_built_to_look_alike_have_different_digests() -> None:
    """Each part is hashed on its own, so no separator inside a path or a text can move
    bytes from one part to the next; an absent file is not an empty one nor one whose text
    spells the absence marker."""
    folder = Path("/w")
    plans = [
        plan_digest(folder, ("claude",), [("a", None, "x")]),
        plan_digest(folder, ("claude",), [("a", "", "x")]),
        plan_digest(folder, ("claude",), [("a", "\0absent", "x")]),
        plan_digest(folder, ("claude",), [("a", "\1", "x")]),
        plan_digest(folder, ("claude",), [("a\0", None, "x")]),
        plan_digest(folder, ("claude",), [("a", None, "x"), ("b", None, "")]),
        plan_digest(folder, ("claude",), [("a", None, "xb")]),
        plan_digest(folder, ("claude", "cursor"), [("a", None, "x")]),
        plan_digest(folder, ("cursor", "claude"), [("a", None, "x")]),
        plan_digest(Path("/v"), ("claude",), [("a", None, "x")]),
    ]
    assert len(set(plans)) == len(plans)
