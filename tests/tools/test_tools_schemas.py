"""The three tools as advertised: the spec's exact input schemas and their definitions."""

from __future__ import annotations

import json

import pytest

from metis_memory import MemoryStore
from metis_memory.tools import (
    MEMORY_TOOL_DEFINITIONS,
    SideEffects,
    ToolDispatcher,
    ToolExecutionError,
    register_memory_tools,
)
from support.spec_schemas import SPEC_SCHEMAS


@pytest.mark.parametrize("name", list(SPEC_SCHEMAS))
def test_input_schema_is_exactly_the_specs(name: str, dispatcher: ToolDispatcher) -> None:
    definition = {d.name: d for d in dispatcher.definitions()}[name]
    assert definition.input_schema == SPEC_SCHEMAS[name]
    # Property order is what a model reads; it follows the spec too.
    assert list(definition.input_schema["properties"]) == list(SPEC_SCHEMAS[name]["properties"])
    # And it survives the trip to a client as JSON.
    assert json.loads(json.dumps(definition.to_json()))["input_schema"] == SPEC_SCHEMAS[name]


def test_the_dispatcher_lists_the_six_tools_as_write_tools(dispatcher: ToolDispatcher) -> None:
    """The spec's three over the workspace, then the user memory's three (which need no
    workspace: tests/tools/test_user_memory_tools.py)."""
    definitions = dispatcher.definitions()
    assert [d.name for d in definitions] == [
        "memory_add",
        "memory_replace",
        "memory_consolidate",
        "user_memory_add",
        "user_memory_replace",
        "user_memory_consolidate",
    ]
    for definition in definitions:
        assert definition.side_effects is SideEffects.WRITE
        assert definition.requires_workspace is not definition.name.startswith("user_")
        assert definition.description.strip()
        as_json = definition.to_json()
        assert set(as_json) == {
            "name",
            "description",
            "input_schema",
            "side_effects",
            "requires_workspace",
        }
        assert as_json["name"] == definition.name
        assert as_json["side_effects"] == "write"
        assert as_json["requires_workspace"] is definition.requires_workspace


def test_descriptions_state_the_caps() -> None:
    for definition in MEMORY_TOOL_DEFINITIONS:
        for number in ("2048", "4096", "1536", "3072"):
            assert number in definition.description, (definition.name, number)


def test_registering_a_tool_twice_is_refused(store: MemoryStore) -> None:
    dispatcher = ToolDispatcher()
    register_memory_tools(dispatcher, store)
    with pytest.raises(ValueError, match="already registered"):
        register_memory_tools(dispatcher, store)
    assert len(dispatcher.definitions()) == 3


def test_an_unknown_tool_is_a_user_visible_error(dispatcher: ToolDispatcher) -> None:
    with pytest.raises(ToolExecutionError) as info:
        dispatcher.dispatch("memory_delete", {"file": "MEMORY.md"})
    assert info.value.code == "unknown_tool"
    assert info.value.is_user_visible is True
    assert "memory_add" in info.value.message
