"""`metis-memory init` keeps every byte it does not change (issue 24, items 8 and 9): number
literals, escapes, spacing and key order survive, and a file it cannot read faithfully (a
lone surrogate, nesting thousands deep) stops the run before the first write."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metis_memory.hosts.config_edits import Edit
from metis_memory.hosts.configs import SETUPS
from metis_memory.hosts.jsonfiles import MAX_DEPTH, merged, parse_object
from metis_memory.store.errors import ConfigRefused
from support.init_files import init, snapshot, write

JSON_EDITS: list[Edit] = [
    e for setup in SETUPS.values() for e in setup.edits("metis-memory") if e.change
]


def valid_files_before(workspace: Path) -> None:
    """Files init would update, earlier in its order than the bad one."""
    write(workspace, ".claude/settings.json", '{\n  "permissions": {"allow": []}\n}\n')
    write(workspace, ".codex/hooks.json", "{}\n")


# ---- item 8: every byte kept --------------------------------------------------------------
ODD = (
    '{\n  "n": 1e400,\n  "big": 12345678901234567890.5,\n  "neg": -0.0E-0,\n'
    '  "s": "caf\\u00e9 \\/ \\ud83d\\ude00",  "order": {"z": 1, "a": [ 1 ,2 ]},\n'
    '  "mcpServers": {\n    "other": {"command": "x"}\n  }\n}\n'
)


def test_number_literals_escapes_and_spacing_are_kept_byte_for_byte(workspace: Path) -> None:
    write(workspace, ".mcp.json", ODD)
    done = init("--host", "claude", cwd=workspace)
    assert done.returncode == 0, done.stderr
    after = (workspace / ".mcp.json").read_text(encoding="utf-8")
    assert "1e400" in after and "Infinity" not in after
    assert "12345678901234567890.5" in after and '"caf\\u00e9 \\/ \\ud83d\\ude00"' in after
    assert after.endswith("\n  }\n}\n")
    # What init added, and nothing else: remove it and the original is back, byte for byte.
    added = ',\n    "metis-memory": {\n      "command": "metis-memory",\n      "args": [\n'
    added += '        "mcp"\n      ]\n    }'
    assert after.replace(added, "", 1) == ODD
    doc = json.loads(after, parse_float=Decimal)
    assert doc["n"] == Decimal("1e400") and doc["big"] == Decimal("12345678901234567890.5")
    second = init("--host", "claude", cwd=workspace)
    assert second.returncode == 0 and (workspace / ".mcp.json").read_text() == after


@pytest.mark.parametrize(
    "literal", ["1e400", "12345678901234567890.5", "-1E-400", "0.1000000000000000000001"]
)
def test_unit_a_number_is_kept_as_written(literal: str) -> None:
    text = f'{{"timeout": {literal}, "hooks": {{}}}}'
    doc = parse_object(text, "x.json")
    doc["hooks"]["added"] = [1]
    assert merged(text, doc, "x.json") == f'{{"timeout": {literal}, "hooks": {{"added": [1]}}}}'


def test_unit_an_unchanged_document_is_returned_as_it_was() -> None:
    text = '\ufeff{ "a" :1e400 ,\r\n "b":"\\u00e9"}  \r\n'
    assert merged(text, parse_object(text, "x.json"), "x.json") == text


# ---- item 9: refused before the first write -----------------------------------------------
@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "x\\ud83dy", "\\ud83d\\u0041"])
def test_a_lone_surrogate_stops_init_before_any_write(escape: str, workspace: Path) -> None:
    valid_files_before(workspace)
    write(workspace, ".mcp.json", '{"mcpServers": {"x": {"command": "a' + escape + '"}}}')
    before = snapshot(workspace)
    done = init(cwd=workspace)
    assert snapshot(workspace) == before  # no byte, no mtime, no new file or folder
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    bad = escape.replace("x", "").replace("y", "")[:6]
    assert ".mcp.json holds " + bad + " at line 1, column " in done.stderr
    assert "surrogate" in done.stderr and "Nothing was written" in done.stderr
    assert done.stdout == ""


def test_a_surrogate_pair_is_a_character_and_is_kept(workspace: Path) -> None:
    text = '{"mcpServers": {"x": {"command": "\\ud83d\\ude00"}}}'
    write(workspace, ".mcp.json", text)
    assert init("--host", "claude", cwd=workspace).returncode == 0
    assert (workspace / ".mcp.json").read_text().startswith(text[:-2])


@pytest.mark.parametrize(
    "deep",
    [
        '{"a": ' + "[" * 5000 + "]" * 5000 + "}",
        '{"a":' * 5000 + "1" + "}" * 5000,
    ],
)
def test_nesting_5000_deep_stops_init_before_any_write(deep: str, workspace: Path) -> None:
    valid_files_before(workspace)
    write(workspace, ".mcp.json", "{}")
    write(workspace, ".gemini/settings.json", deep)  # after .claude, .mcp.json, .codex
    before = snapshot(workspace)
    done = init(cwd=workspace)
    assert snapshot(workspace) == before
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr
    assert ".gemini/settings.json nests objects and arrays more than 256 levels" in done.stderr
    assert "level 257 opens at line 1, column" in done.stderr
    assert "Nothing was written" in done.stderr
    assert done.stdout == ""


def test_unit_nesting_up_to_the_bound_is_read() -> None:
    ok = '{"a": ' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}"
    doc = parse_object(ok, "x.json")
    doc["b"] = 1
    assert json.loads(merged(ok, doc, "x.json"))["b"] == 1
    too_deep = '{"a": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}"
    with pytest.raises(ConfigRefused, match=r"more than 256 levels deep \(level 257"):
        parse_object(too_deep, "x.json")


def test_a_command_that_is_not_utf8_stops_init_before_any_write(workspace: Path) -> None:
    """The instructions file comes before .vscode/mcp.json: it must not be written alone."""
    before = snapshot(workspace)
    done = init("--host", "copilot", "--command", b"metis\xff-memory", cwd=workspace)
    assert snapshot(workspace) == before
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "cannot be written as UTF-8" in done.stderr and "nothing was written" in done.stderr


def test_unit_a_file_changed_after_planning_stops_every_write(workspace: Path) -> None:
    """The check that each file is still as planned runs for all of them before the
    first write: .claude/settings.json, planned first, is not written alone."""
    from metis_memory.hosts.init import apply_init, plan_init

    plan = plan_init(workspace, ["claude"], "metis-memory")
    write(workspace, ".mcp.json", '{"mcpServers": {}}')  # another program, meanwhile
    before = snapshot(workspace)
    with pytest.raises(ConfigRefused, match=r"\.mcp\.json changed while init ran; nothing was"):
        apply_init(plan)
    assert snapshot(workspace) == before


def test_unit_an_unexpected_error_while_merging_is_a_refusal_naming_the_file(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from metis_memory.hosts import configs
    from metis_memory.hosts.init import plan_init

    def broken(*_: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(configs, "mcp_server", broken)
    with pytest.raises(ConfigRefused) as refused:
        plan_init(workspace, ["claude"], "metis-memory")
    assert str(refused.value).startswith(
        ".mcp.json: init could not merge its entries (RecursionError: maximum recursion"
    )
    assert "nothing was written anywhere" in str(refused.value)
    assert snapshot(workspace) == {}


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"a": NaN}', "line 1, column 7: NaN is not JSON"),
        ('{"a": -Infinity}', "line 1, column 7: -Infinity is not JSON"),
        ('{"a": 1} x', "line 1, column 10: Extra data"),
        ('{"a": "\x01"}', "line 1, column 8: Invalid control character"),
        ('{"a": 01}', "line 1, column 8: Expecting ',' delimiter"),
        ('\ufeff{"a" 1}', "line 1, column 6: Expecting ':' delimiter"),
        ('{"a": 1, "\\u0061": 2}', "the key 'a' twice in one object (again at line 1, column 10)"),
    ],
)
def test_unit_what_is_not_strict_json_is_refused_with_where(text: str, where: str) -> None:
    with pytest.raises(ConfigRefused, match=r"x\.json") as refused:
        parse_object(text, "x.json")
    assert where in str(refused.value)


# ---- the property -------------------------------------------------------------------------
KEYS = st.sampled_from(
    [
        "hooks",
        "mcpServers",
        "servers",
        "SessionStart",
        "UserPromptSubmit",
        "BeforeAgent",
        "sessionStart",
        "version",
        "matcher",
        "command",
        "type",
        "metis-memory",
        "é",
        "a\nb",
    ]
) | st.text(max_size=6)
SPACE = st.sampled_from(["", " ", "\n", "\r\n", "\t", "\n    ", "  \n\t"])
NUMBER = st.from_regex(
    r"-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,24})?([eE][-+]?[0-9]{1,3})?", fullmatch=True
)
COMMANDS = st.sampled_from(
    ["./mine.sh", "old/metis-memory hook --host claude", "x hook --host cursor", "metis-memory"]
)


@st.composite
def json_string(draw: st.DrawFn, value: str | None = None) -> str:
    """A JSON string literal, each character raw or escaped at random."""
    text = draw(st.text(max_size=8) | COMMANDS) if value is None else value
    out = []
    for ch in text:
        if ch in '"\\' or ord(ch) < 0x20 or draw(st.booleans()):
            if ord(ch) > 0xFFFF:
                high, low = divmod(ord(ch) - 0x10000, 0x400)
                out.append(f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04X}")
            else:
                out.append(draw(st.sampled_from([json.dumps(ch)[1:-1], f"\\u{ord(ch):04x}"])))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _container(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    @st.composite
    def build(draw: st.DrawFn) -> str:
        if draw(st.booleans()):
            items = draw(st.lists(children, max_size=4))
            inner = ",".join(draw(SPACE) + item + draw(SPACE) for item in items)
            return "[" + (inner or draw(SPACE)) + "]"
        keys = draw(st.lists(KEYS, max_size=4, unique=True))
        members = [
            draw(SPACE)
            + draw(json_string(k))
            + draw(SPACE)
            + ":"
            + draw(SPACE)
            + draw(children)
            + draw(SPACE)
            for k in keys
        ]
        return "{" + (",".join(members) or draw(SPACE)) + "}"

    return build()


VALUES = st.recursive(
    st.sampled_from(["true", "false", "null"]) | NUMBER | json_string(),
    _container,
    max_leaves=12,
)


@st.composite
def object_text(draw: st.DrawFn) -> str:
    keys = draw(st.lists(KEYS, max_size=5, unique=True))
    members = [
        draw(SPACE) + draw(json_string(k)) + draw(SPACE) + ":" + draw(SPACE) + draw(VALUES)
        for k in keys
    ]
    bom = draw(st.sampled_from(["", "\ufeff"]))
    return bom + "{" + (",".join(members) or draw(SPACE)) + draw(SPACE) + "}" + draw(SPACE)


def _pairs(value: Any) -> Any:
    """JSON as nested tuples, so that equal also means the same member order."""
    if isinstance(value, dict):
        return ("object", tuple((k, _pairs(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("array", tuple(_pairs(v) for v in value))
    return value


def _is_subsequence(small: str, big: str) -> bool:
    it = iter(big)
    return all(ch in it for ch in small)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=object_text(), index=st.integers(0, len(JSON_EDITS) - 1))
def test_property_init_changes_only_what_it_adds(text: str, index: int) -> None:
    """For any JSON object text init accepts: the result is valid JSON holding the original
    plus exactly init's change, in the original's order; when init only adds (no entry of
    its own was there), every original byte is still there, in order; a second run
    changes nothing."""
    edit = JSON_EDITS[index]
    assert edit.change is not None
    expected = json.loads(text.removeprefix("\ufeff"), parse_float=Decimal)
    decoded = json.dumps(expected, ensure_ascii=False, default=str)
    ours_there = "metis-memory" in decoded or "hook --host" in decoded
    try:
        edit.change(expected)
    except ConfigRefused:  # a value of the wrong kind where init adds: refused both ways
        with pytest.raises(ConfigRefused):
            edit.apply(text)
        return
    after = edit.apply(text)
    assert after.startswith("\ufeff") == text.startswith("\ufeff")
    got = json.loads(after.removeprefix("\ufeff"), parse_float=Decimal)
    assert _pairs(got) == _pairs(expected)
    if not ours_there:  # init only adds: every byte of the text is kept, in order
        assert _is_subsequence(text, after)
    assert after.encode("utf-8")
    assert edit.apply(after) == after
