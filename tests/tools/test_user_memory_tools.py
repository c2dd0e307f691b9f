"""The user memory's three tools (user_memory_add, _replace, _consolidate) against a real
workspace and a real config folder: their schemas (the spec's less `file`), what they write
and where, what they answer, and each refusal said of the user memory, with its numbers and
what to do."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from metis_memory import EventSink, MemoryStore
from metis_memory.store.events import MemoryEvent, MemoryEviction, MemoryUpdated
from metis_memory.store.files import CAPS, MemoryFile
from metis_memory.store.provenance import Provenance
from metis_memory.tools import (
    MEMORY_TOOL_DEFINITIONS,
    USER_MEMORY_TOOL_DEFINITIONS,
    SideEffects,
    ToolDispatcher,
    ToolExecutionError,
    memory_dispatcher,
    register_user_memory_tools,
    review,
)
from metis_memory.tools.people import CLI, EDITOR
from support.spec_schemas import SPEC_SCHEMAS

USER_CAPS = CAPS[MemoryFile.USER]
CLAUDE = Provenance("mcp", "claude-code 2.1.4", "s-7")
GITHUB = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
NAMED = "your user memory (USER.md read in every workspace)"
SPEC_TOOL = re.compile(r"(?<!user_)memory_(add|replace|consolidate)")
"""A spec tool's name in a message: about the user memory, only its own tools are named."""


def user_file(user_config_home: Path) -> Path:
    return user_config_home / "metis-memory" / "USER.md"


def refused(dispatcher: ToolDispatcher, tool: str, arguments: dict[str, str]) -> ToolExecutionError:
    with pytest.raises(ToolExecutionError) as caught:
        dispatcher.dispatch(tool, arguments, by=CLAUDE)
    return caught.value


# ---- what they are --------------------------------------------------------------------------
def test_each_takes_the_specs_fields_less_file(dispatcher: ToolDispatcher) -> None:
    advertised = {d.name: d for d in dispatcher.definitions()}
    for spec_name in SPEC_SCHEMAS:
        spec = json.loads(json.dumps(SPEC_SCHEMAS[spec_name]))
        del spec["properties"]["file"]
        spec["required"].remove("file")
        definition = advertised[f"user_{spec_name}"]
        assert definition.input_schema == spec
        assert list(definition.input_schema["properties"]) == list(spec["properties"])
        assert definition.side_effects is SideEffects.WRITE
        assert definition.requires_workspace is False
        # The spec's own stay exactly the spec's, beside them.
        assert advertised[spec_name].input_schema == SPEC_SCHEMAS[spec_name]


def test_every_door_gets_all_six_from_one_dispatcher(dispatcher: ToolDispatcher) -> None:
    names = [d.name for d in dispatcher.definitions()]
    assert names == [d.name for d in (*MEMORY_TOOL_DEFINITIONS, *USER_MEMORY_TOOL_DEFINITIONS)]


def test_descriptions_say_what_belongs_there_and_what_never_does() -> None:
    for definition in USER_MEMORY_TOOL_DEFINITIONS:
        text = definition.description
        assert "every workspace" in text
        for kind in ("language", "review"):
            assert kind in text, (definition.name, kind)
        assert "Never workspace facts (paths, commands, make targets" in text
        assert "MEMORY.md with memory_add" in text
        assert str(USER_CAPS.soft) in text and str(USER_CAPS.hard) in text
    assert "user_memory_add" in MEMORY_TOOL_DEFINITIONS[0].description


def test_only_the_user_memory_can_back_them(store: MemoryStore) -> None:
    with pytest.raises(ValueError, match="workspace's memory, not the user's"):
        register_user_memory_tools(ToolDispatcher(), store)


# ---- what they write --------------------------------------------------------------------------
def test_add_replace_consolidate_write_the_user_memory_only(
    workspace: Path, user_config_home: Path, dispatcher: ToolDispatcher
) -> None:
    added = dispatcher.dispatch("user_memory_add", {"entry": "- Answers in British English"})
    path = user_file(user_config_home)
    assert path.read_text() == "- Answers in British English\n"
    assert not (workspace / ".metis").exists()
    assert added.text == (
        f"Added entry to {NAMED}: 0 B → 29 B (soft cap 1,536 B, hard cap 3,072 B)."
    )
    assert added.agent_text == (
        f"{added.text}\n\nYour user memory now reads (the whole file):\n\n"
        "- Answers in British English"
    )
    assert added.for_people(CLI) == (
        f"Added entry to your user memory ({path}): 0 B → 29 B (soft cap 1,536 B, "
        "hard cap 3,072 B)."
    )
    dispatcher.dispatch("user_memory_replace", {"old": "British", "new": "Canadian"})
    assert path.read_text() == "- Answers in Canadian English\n"
    done = dispatcher.dispatch("user_memory_consolidate", {"content": ""})
    assert path.read_text() == ""
    assert done.agent_text.endswith("Your user memory is now empty.")


def test_the_same_user_memory_is_written_from_any_workspace(
    tmp_path: Path, user_config_home: Path
) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    memory_dispatcher(MemoryStore(first)).dispatch("user_memory_add", {"entry": "- uses vim"})
    result = memory_dispatcher(MemoryStore(second)).dispatch(
        "user_memory_add", {"entry": "- reads diffs unified"}
    )
    assert result.write is not None
    assert result.write.content == "- uses vim\n- reads diffs unified\n"
    assert user_file(user_config_home).read_text() == result.write.content


def test_the_spec_tools_still_write_the_workspace_user_md(
    workspace: Path, user_config_home: Path, dispatcher: ToolDispatcher
) -> None:
    dispatcher.dispatch("memory_add", {"file": "USER.md", "entry": "- owns billing here"})
    assert (workspace / ".metis" / "USER.md").read_text() == "- owns billing here\n"
    assert not user_file(user_config_home).exists()


def test_a_write_is_logged_in_the_user_memorys_history_as_its_writer(
    dispatcher: ToolDispatcher, store: MemoryStore
) -> None:
    dispatcher.dispatch("user_memory_add", {"entry": "- likes tea"}, by=CLAUDE)
    records = store.user_memory.history()
    assert [(r.file, r.operation, r.door, r.actor, r.session) for r in records] == [
        ("USER.md", "add", "mcp", "claude-code 2.1.4", "s-7")
    ]
    assert store.history() == []  # the workspace's log holds none of it


def test_events_carry_scope_user_and_workspace_events_stay_the_specs(
    dispatcher: ToolDispatcher, events: list[MemoryEvent]
) -> None:
    dispatcher.dispatch("user_memory_add", {"entry": "y" * (USER_CAPS.soft + 10)})
    dispatcher.dispatch("memory_add", {"file": "USER.md", "entry": "- here"})
    updated, eviction, workspace = events
    assert isinstance(updated, MemoryUpdated) and isinstance(eviction, MemoryEviction)
    assert updated.payload()["scope"] == "user" and updated.payload()["file"] == "USER.md"
    assert eviction.payload()["scope"] == "user"
    assert isinstance(workspace, MemoryUpdated)
    assert "scope" not in workspace.payload()
    assert set(workspace.payload()) == {
        "file",
        "operation",
        "before_hash",
        "after_hash",
        "before_size_bytes",
        "after_size_bytes",
    }


def test_user_memory_consolidate_takes_an_expected_hash(
    dispatcher: ToolDispatcher, store: MemoryStore, user_config_home: Path
) -> None:
    dispatcher.dispatch("user_memory_add", {"entry": "- one"})
    read = store.user_memory.snapshot(MemoryFile.USER).sha256
    dispatcher.dispatch("user_memory_add", {"entry": "- two"})  # lands in between
    with pytest.raises(ToolExecutionError) as caught:
        dispatcher.dispatch("user_memory_consolidate", {"content": "- one\n"}, expected_hash=read)
    assert caught.value.code == "conflict"
    assert caught.value.message.startswith(f"{NAMED} changed since it was read")
    assert "Re-read the user memory" in caught.value.message
    assert user_file(user_config_home).read_text() == "- one\n- two\n"
    with pytest.raises(ToolExecutionError, match="user_memory_consolidate only"):
        dispatcher.dispatch("user_memory_add", {"entry": "- x"}, expected_hash=read)


# ---- refusals -------------------------------------------------------------------------------
def test_an_add_past_the_hard_cap_is_refused_with_its_numbers(
    dispatcher: ToolDispatcher, user_config_home: Path
) -> None:
    dispatcher.dispatch("user_memory_add", {"entry": "y" * 1500})
    path = user_file(user_config_home)
    before = path.read_bytes()
    error = refused(dispatcher, "user_memory_add", {"entry": "z" * 1600})
    assert error.code == "hard_cap_exceeded"
    assert error.message == (
        f"add rejected: {NAMED} would be 3,102 B, 30 B over its hard cap of 3,072 B (now "
        "1,501 B; soft cap 1,536 B). Nothing was written. Consolidate the user memory with "
        "user_memory_consolidate to at most 1,471 B (merge, shorten or drop entries) so this "
        "1,601 B entry fits, then retry."
    )
    assert error.for_people(CLI) == (
        f"Not added: your user memory ({path}) would be 3,102 B, 30 B over its 3,072 B hard "
        "cap (it is 1,501 B now). Nothing was written. Make room first: bring "
        f"{path} to at most 1,471 B: edit it, or write a shorter version with "
        "`metis-memory consolidate --user --from FILE`, then run the add again."
    )
    assert '"Metis: Consolidate User Memory…"' in error.for_people(EDITOR)
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("user_memory_consolidate", {"content": "c" * (USER_CAPS.hard + 1)}),
        ("user_memory_replace", {"old": "seed", "new": "r" * USER_CAPS.hard}),
        ("user_memory_add", {"entry": "e" * USER_CAPS.hard}),
    ],
)
def test_every_refusal_names_the_user_memory_and_its_own_tools(
    dispatcher: ToolDispatcher, user_config_home: Path, tool: str, arguments: dict[str, str]
) -> None:
    dispatcher.dispatch("user_memory_add", {"entry": "seed"})
    error = refused(dispatcher, tool, arguments)
    assert error.code == "hard_cap_exceeded"
    assert NAMED in error.message
    assert "3,072 B" in error.message
    assert not SPEC_TOOL.search(error.message), error.message
    person = error.for_people(CLI)
    assert f"your user memory ({user_file(user_config_home)})" in person or (
        "the user memory's 3,072 B hard cap" in person
    )
    assert ".metis/" not in person and "USER.md --from" not in person
    assert user_file(user_config_home).read_text() == "seed\n"


def test_a_missing_old_text_names_the_user_memory(dispatcher: ToolDispatcher) -> None:
    dispatcher.dispatch("user_memory_add", {"entry": "- uses vim"})
    error = refused(dispatcher, "user_memory_replace", {"old": "emacs", "new": "x"})
    assert error.code == "not_found"
    assert error.message == (
        f"text to replace was not found in {NAMED}: nothing was written; copy 'old' exactly "
        "(whitespace and case matter) from the current user memory"
    )


def test_a_secret_is_refused_and_the_file_kept(
    dispatcher: ToolDispatcher, user_config_home: Path
) -> None:
    dispatcher.dispatch("user_memory_add", {"entry": "- uses vim"})
    for tool, arguments in (
        ("user_memory_add", {"entry": f"deploy token {GITHUB}"}),
        ("user_memory_replace", {"old": "vim", "new": f"vim, token {GITHUB}"}),
        ("user_memory_consolidate", {"content": f"- {GITHUB}\n"}),
    ):
        error = refused(dispatcher, tool, arguments)
        assert error.code == "secret_detected"
        assert error.message.startswith(f"{tool} refused: ")
        assert "GitHub token" in error.message and GITHUB not in error.message
        assert "The user memory is sent to the model provider with every prompt, in every " in (
            error.message
        )
        assert "committed with the repository" not in error.message
    assert user_file(user_config_home).read_text() == "- uses vim\n"


def test_file_is_not_a_field_of_theirs(dispatcher: ToolDispatcher) -> None:
    error = refused(dispatcher, "user_memory_add", {"file": "USER.md", "entry": "x"})
    assert error.code == "invalid_input"
    assert error.message == (
        "invalid input for user_memory_add: 'file' is not an accepted field. "
        'Expected {"entry": <text>} and nothing else.'
    )


def test_a_user_memory_others_may_write_is_refused_naming_it(
    dispatcher: ToolDispatcher, user_config_home: Path
) -> None:
    dispatcher.dispatch("user_memory_add", {"entry": "- uses vim"})
    folder = user_config_home / "metis-memory"
    folder.chmod(0o777)
    try:
        error = refused(dispatcher, "user_memory_add", {"entry": "- more"})
    finally:
        folder.chmod(0o700)
    assert "your user memory" in error.message and str(folder) in error.message
    assert user_file(user_config_home).read_text() == "- uses vim\n"


# ---- review -----------------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["user memory", "workspace"])
def test_an_agents_write_waits_when_review_is_on_there_or_for_the_user_memory(
    store: MemoryStore, user_config_home: Path, where: str
) -> None:
    user = store.user_memory
    (user if where == "user memory" else store).set_review(True)
    sink = EventSink()
    seen: list[MemoryEvent] = []
    sink.subscribe(seen.append)
    result = memory_dispatcher(store, sink).dispatch(
        "user_memory_add", {"entry": "- likes tea"}, by=CLAUDE
    )
    assert result.staged and result.write is not None and result.write.staged is not None
    staged_id = result.write.staged.id
    assert result.agent_text == (
        f"Staged for the user's review as change #{staged_id}: {NAMED} is unchanged until the "
        "user accepts it (they may reject it). Do not retry this write; carry on with your task."
    )
    assert result.for_people(CLI) == (
        f"Change #{staged_id} to your user memory ({user_file(user_config_home)}) waits for your "
        f"review: accept or reject it in Memory History, or run `metis-memory review --user "
        f"accept {staged_id}`."
    )
    assert not user_file(user_config_home).exists() and seen == []
    assert [c.id for c in user.staged()] == [staged_id] and store.staged() == []
    # The user's own write never waits.
    memory_dispatcher(store).dispatch("user_memory_add", {"entry": "- mine"})
    assert user_file(user_config_home).read_text() == "- mine\n"
    accepted = review.accept(user, staged_id, sink)
    assert user_file(user_config_home).read_text() == "- mine\n- likes tea\n"
    assert accepted.for_people(CLI).startswith("Added entry to your user memory (")
    assert [type(e) for e in seen] == [MemoryUpdated]
    assert seen[0].payload()["scope"] == "user"
    record = user.history(limit=1)[0]
    assert (record.actor, record.door, record.detail) == (
        "claude-code 2.1.4",
        "mcp",
        f"accepted after review (#{staged_id})",
    )


def test_review_refusals_name_the_user_memorys_commands(store: MemoryStore) -> None:
    user = store.user_memory
    with pytest.raises(ToolExecutionError) as caught:
        review.accept(user, 41)
    assert "`metis-memory review --user`" in caught.value.message
    with pytest.raises(ToolExecutionError) as caught:
        review.reject(user, 41)
    assert "`metis-memory review --user`" in caught.value.for_people(CLI)
