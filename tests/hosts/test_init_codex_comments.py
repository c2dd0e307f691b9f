"""`init --host codex` removes a sub-table of its own server table (an `env` a cloned
repository planted, say) by removing exactly that table's own lines: its header, its keys
and what lies between them. Every comment and blank line after its last key (above the
next table, at the end of the file) and above its header is the user's, and stays (issue
39, item 8: two of three comments before the next table were gone, exit 0)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metis_memory.hosts.config_edits import SERVER_NAME
from metis_memory.hosts.configs import CODEX_CONFIG, CODEX_KEEP
from metis_memory.hosts.tomlfiles import set_table
from support.init_files import init, write

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib

OURS = {"command": "metis-memory", "args": ["mcp"], "required": True}
KEYS = ("mcp_servers", SERVER_NAME)
HEAD = '[mcp_servers.metis-memory]\ncommand = "metis-memory"\nargs = ["mcp"]\nrequired = true\n'


def layout(marked: str) -> tuple[str, str]:
    """A file written with each line marked `-` (init's to remove) or ` ` (kept): the file,
    and what it must be after init."""
    lines = marked.splitlines(keepends=True)
    assert all(line[:1] in "- " for line in lines), marked
    before = "".join(line[1:] for line in lines)
    after = "".join(line[1:] for line in lines if line.startswith(" "))
    return before, after


def marked_head() -> str:
    return "".join(" " + line for line in HEAD.splitlines(keepends=True))


LAYOUTS = {
    "the reported file: comments and a blank line before the next table": (
        marked_head()
        + " \n"
        + "-[mcp_servers.metis-memory.env]\n"
        + '-A = "1"\n'
        + " # one\n"
        + " \n"
        + " # two: about tui\n"
        + " # three: about tui\n"
        + " [tui]\n"
        + " notifications = true\n"
    ),
    "a comment directly above the next header": (
        marked_head()
        + "-[mcp_servers.metis-memory.env]\n"
        + '-A = "1"\n'
        + " # the tui settings\n"
        + " [tui]\n"
    ),
    "comments at the end of the file": (
        marked_head()
        + " \n"
        + "-[mcp_servers.metis-memory.env]\n"
        + '-A = "1"  # on its line: goes with it\n'
        + " \n"
        + " # the end\n"
        + " # really\n"
    ),
    "a comment between the removed table's keys is its own": (
        marked_head()
        + "-[mcp_servers.metis-memory.env]\n"
        + "-# PATH for pyenv\n"
        + '-PATH = "/x"\n'
        + "-\n"
        + '-B = "2"\n'
        + " # about docs\n"
        + " [mcp_servers.docs]\n"
        + ' command = "docs-mcp"\n'
    ),
    "a comment above the removed header stays": (
        marked_head()
        + " \n"
        + " # why the env (now unused)\n"
        + "-[mcp_servers.metis-memory.env]\n"
        + '-A = "1"\n'
        + " \n"
        + " [tui]\n"
    ),
    "a kept sub-table after the removed one keeps its comment": (
        marked_head()
        + " \n"
        + "-[mcp_servers.metis-memory.env]\n"
        + '-A = "1"\n'
        + " \n"
        + " # I approved this one\n"
        + " [mcp_servers.metis-memory.tools.memory_add]\n"
        + ' approval_mode = "approve"\n'
        + " # last\n"
    ),
    "two removed tables, comments after each": (
        marked_head()
        + "-[mcp_servers.metis-memory.env]\n"
        + '-A = "1"\n'
        + " # after env\n"
        + "-[mcp_servers.metis-memory.http_headers]\n"
        + '-X = "y"\n'
        + " # after headers\n"
        + " [tui]\n"
    ),
    "a removed table with a sub-table of its own": (
        marked_head()
        + "-[mcp_servers.metis-memory.env]\n"
        + '-A = "1"\n'
        + "-# between its two headers: its own\n"
        + "-[mcp_servers.metis-memory.env.deeper]\n"
        + '-B = "2"\n'
        + " # above tui\n"
        + " [tui]\n"
    ),
    "the removed table out of order, after another table": (
        marked_head()
        + " \n"
        + " [tui]\n"
        + " notifications = true\n"
        + " # above the env\n"
        + "-[mcp_servers.metis-memory.env]\n"
        + '-A = "1"\n'
        + " # after the env\n"
        + " [history]\n"
        + ' persistence = "none"\n'
    ),
    "an indented header and a comment with brackets": (
        marked_head()
        + "-  [mcp_servers.metis-memory.env]  # planted\n"
        + '-  A = "[not a header]"\n'
        + "   # [tui] is next\n"
        + " [tui]\n"
    ),
    "an array of tables: what lies between its elements is its own": (
        marked_head()
        + "-[[mcp_servers.metis-memory.x]]\n"
        + "-a = 1\n"
        + "-# between the two\n"
        + "-[[mcp_servers.metis-memory.x]]\n"
        + "-a = 2\n"
        + " # after the last\n"
        + " [tui]\n"
    ),
    "an inline table and a dotted key: their own line only": (
        marked_head()
        + '-env = { A = "1" }  # planted\n'
        + " # after the inline table\n"
        + '-cwd.x = "y"\n'
        + " \n"
        + " # above tui\n"
        + " [tui]\n"
    ),
    "a multi-line string that looks like comments and a header": (
        marked_head()
        + "-[mcp_servers.metis-memory.env]\n"
        + '-A = """\n'
        + "-# not a comment\n"
        + "-[tui]\n"
        + '-"""\n'
        + " # a comment\n"
        + " [tui]\n"
    ),
}


@pytest.mark.parametrize("marked", LAYOUTS.values(), ids=list(LAYOUTS))
def test_removing_our_sub_table_removes_exactly_its_own_lines(marked: str, workspace: Path) -> None:
    before, after = layout(marked)
    write(workspace, CODEX_CONFIG, before)
    done = init("--host", "codex", str(workspace), cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert (workspace / CODEX_CONFIG).read_text("utf-8") == after
    again = init("--host", "codex", "--dry-run", str(workspace), cwd=workspace)
    assert ".codex/config.toml: unchanged" in again.stderr + again.stdout


def test_a_key_init_adds_goes_after_the_last_key_not_between_a_comment_and_its_table(
    workspace: Path,
) -> None:
    before = (
        '[mcp_servers.metis-memory]\ncommand = "metis-memory"\nargs = ["mcp"]\n'
        "# the tui settings\n[tui]\n"
    )
    write(workspace, CODEX_CONFIG, before)
    assert init("--host", "codex", str(workspace), cwd=workspace).returncode == 0
    assert (workspace / CODEX_CONFIG).read_text("utf-8") == before.replace(
        "# the", "required = true\n# the"
    )


def test_crlf_file_keeps_its_comments_and_line_ends(workspace: Path) -> None:
    before, after = layout(
        LAYOUTS["the reported file: comments and a blank line before the next table"]
    )
    write(workspace, CODEX_CONFIG, before.replace("\n", "\r\n"))
    done = init("--host", "codex", str(workspace), cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert (workspace / CODEX_CONFIG).read_bytes() == after.replace("\n", "\r\n").encode()


def test_dry_run_shows_only_the_tables_own_lines_going(workspace: Path) -> None:
    before, _ = layout(
        LAYOUTS["the reported file: comments and a blank line before the next table"]
    )
    write(workspace, CODEX_CONFIG, before)
    done = init("--host", "codex", "--dry-run", str(workspace), cwd=workspace)
    removed = [
        line
        for line in done.stdout.splitlines()
        if line.startswith("-") and not line.startswith("---")
    ]
    assert removed == ["-[mcp_servers.metis-memory.env]", '-A = "1"'], done.stdout


# ---- the property -------------------------------------------------------------------------
COMMENT = st.sampled_from(
    ["# note", "# [tui]", "  # indented", "#", "# é ✓", '# A = "1"', "# [[x]]"]
).map(lambda c: c + "\n")
GAP = st.lists(COMMENT | st.just("\n") | st.just("  \n"), max_size=3).map("".join)
REMOVED = {
    "env": ['A = "1"', 'B = "two"  # inline'],
    "http_headers": ['X = "y"'],
    "env.deeper": ["C = 3"],
}
KEPT_SUBS = {"tools.memory_add": ['approval_mode = "approve"']}
OTHER = {"tui": ["notifications = true"], "mcp_servers.docs": ['command = "docs-mcp"']}


@st.composite
def config(draw: st.DrawFn) -> tuple[str, str]:
    """A config holding our table, some of its sub-tables init removes or keeps, and the
    user's tables, in any order, with comments and blank lines in every gap. Returns the
    file and what it must be after init."""
    names = draw(
        st.lists(
            st.sampled_from([*REMOVED, *KEPT_SUBS, *OTHER]), unique=True, min_size=1, max_size=5
        )
    )
    if "env.deeper" in names and "env" in names:  # (a table before its own sub-table)
        names.remove("env.deeper")
        names.insert(names.index("env") + 1, "env.deeper")
    before = after = draw(GAP)
    blocks = [("", ['command = "metis-memory"', 'args = ["mcp"]', "required = true"])]
    blocks += [(name, REMOVED.get(name) or KEPT_SUBS.get(name) or OTHER[name]) for name in names]
    for name, keys in blocks:
        header = (
            f"[{name}]"
            if name in OTHER
            else "[mcp_servers.metis-memory" + (f".{name}" if name else "") + "]"
        )
        own = header + "\n"
        for i, key in enumerate(keys):
            own += key + "\n"
            if i < len(keys) - 1:
                own += draw(GAP)  # between its keys: the table's own
        tail = draw(GAP)  # after its last key: the user's, unless its own sub-table is next
        before += own + tail
        if name in REMOVED:
            after += "" if name == "env" and "env.deeper" in names else tail
        else:
            after += own + tail
    return before, after


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=config())
def test_property_only_the_removed_tables_own_lines_go(files: tuple[str, str]) -> None:
    before, after = files
    new = set_table(before, CODEX_CONFIG, KEYS, OURS, "", keep=CODEX_KEEP)
    assert new == after
    expected = tomllib.loads(before)
    ours = expected["mcp_servers"][SERVER_NAME]
    for key in [k for k in ours if k not in CODEX_KEEP and k not in OURS]:
        del ours[key]
    assert tomllib.loads(new) == expected
    assert set_table(new, CODEX_CONFIG, KEYS, OURS, "", keep=CODEX_KEEP) == new
