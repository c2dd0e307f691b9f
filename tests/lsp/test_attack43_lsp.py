"""Attacks on the user memory in the language server (issue 43), over real stdio."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.lsp_session import CLIENT_COMMANDS, MetisClient, hover, lenses
from support.lsp_values import file_uri


def write_user_memory(home: Path, text: str) -> Path:
    path = home / "metis-memory" / "USER.md"
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o600)
    return path


@pytest.mark.parametrize("how", ["no folder", "one folder", "two folders", "symlink"])
async def test_the_lens_follows_typing(
    client: MetisClient, user_config_home: Path, tmp_path: Path, how: str
) -> None:
    path = write_user_memory(user_config_home, "# About me\n- British English\n")
    folders = []
    if how in ("one folder", "two folders"):
        for name in ("shop", "blog")[: 1 if how == "one folder" else 2]:
            (tmp_path / name).mkdir()
            folders.append(tmp_path / name)
    opened = path
    if how == "symlink":
        alias = tmp_path / "dots"
        alias.symlink_to(user_config_home, target_is_directory=True)
        opened = alias / "metis-memory" / "USER.md"
    await client.start_session(folders, options=CLIENT_COMMANDS)
    client.open(opened)
    (lens,) = await lenses(client, opened)
    assert lens.command is not None, lens
    assert ": 29 B" in lens.command.title, lens.command.title
    client.replace_all(opened, "# About me\n- British English\n- tabs, not spaces\n")
    (lens,) = await lenses(client, opened)
    assert lens.command is not None, lens
    assert ": 48 B" in lens.command.title, lens.command.title
    shown = await hover(client, opened, 0, 2)
    assert shown is not None and "48" in str(shown.contents), shown


async def test_the_lens_follows_the_first_entry_then_a_reload_then_typing(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    """As in the editor: Open User Memory before it exists writes its first entry, opens it;
    Add Entry writes a second (the editor reloads the buffer); then the person types."""
    await client.start_session([workspace], options=CLIENT_COMMANDS)
    opened = await client.command("metis.openUserMemory", {})
    path = Path(opened["path"])
    await client.command(
        "metis.memoryAdd", {"file": "user-memory", "entry": "- Answer in British English."}
    )
    client.open(path)
    (lens,) = await lenses(client, path)
    assert lens.command is not None, lens
    assert ": 29 B" in lens.command.title, lens.command.title
    await client.command(
        "metis.memoryAdd", {"file": "user-memory", "entry": "- I review diffs in unified form."}
    )
    client.replace_all(path, path.read_text())
    (lens,) = await lenses(client, path)
    assert lens.command is not None, lens
    assert ": 63 B" in lens.command.title, lens.command.title
    client.replace_all(path, path.read_text() + "- more\n")
    (lens,) = await lenses(client, path)
    assert lens.command is not None, lens
    assert ": 70 B" in lens.command.title, lens.command.title


# ---- an agent's write of the user memory, in a window of several folders -------------------
async def test_an_agents_user_memory_write_follows_the_review_of_the_folder_it_works_in(
    client: MetisClient, user_config_home: Path, tmp_path: Path
) -> None:
    """The editor's user_memory_* tools name the folder the agent works in: review on there
    stages the write, review off in the other folder does not."""
    shop, blog = tmp_path / "shop", tmp_path / "blog"
    shop.mkdir()
    blog.mkdir()
    path = write_user_memory(user_config_home, "- a\n")
    await client.start_session([shop, blog])
    await client.command("metis.setReview", {"on": True, "workspace": file_uri(blog)})

    def agent(entry: str, workspace: Path | None) -> dict[str, object]:
        args: dict[str, object] = {
            "file": "user-memory",
            "entry": entry,
            "via": "languageModelTool",
        }
        if workspace is not None:
            args["workspace"] = file_uri(workspace)
        return args

    written = await client.command("metis.memoryAdd", agent("- from shop", shop))
    assert "staged" not in written and path.read_text() == "- a\n- from shop\n"
    staged = await client.command("metis.memoryAdd", agent("- from blog", blog))
    assert "staged" in staged and path.read_text() == "- a\n- from shop\n"
    # Which folder the agent works in cannot be told: review on in any open folder holds it.
    unknown = await client.command("metis.memoryAdd", agent("- from somewhere", None))
    assert "staged" in unknown and path.read_text() == "- a\n- from shop\n"


# ---- workspace-specific: what every open workspace has is nobody's ------------------------
async def test_a_target_every_open_workspace_declares_is_not_workspace_specific(
    client: MetisClient, user_config_home: Path, tmp_path: Path
) -> None:
    """`make test` in the Makefile of each open workspace is the user's habit, true in all
    of them: moving it to one's MEMORY.md would lose it for the others. What only one has
    is still that one's."""
    shop, blog = tmp_path / "shop", tmp_path / "blog"
    (shop / "src").mkdir(parents=True)
    (shop / "src" / "app.py").write_text("x\n")
    (shop / "Makefile").write_text("test:\n\tpytest\nitest:\n\ttrue\n")
    blog.mkdir()
    (blog / "Makefile").write_text("test:\n\ttrue\n")
    text = (
        "- Always run `make test` before pushing\n"
        "- Run `make itest` for the slow tests\n"
        "- After `make test`, open `src/app.py`\n"
    )
    path = write_user_memory(user_config_home, text)
    await client.start_session([shop, blog], options=CLIENT_COMMANDS)
    client.open(path)
    await client.wait_for_codes(path, ["workspace-specific", "workspace-specific"])
    found = sorted((d.range.start.line, d.message) for d in client.diagnostics[file_uri(path)])
    assert [line for line, _ in found] == [1, 2]
    assert found[0][1].startswith("This entry names `make itest`, a target of shop's Makefile")
    assert found[1][1].startswith("This entry names `src/app.py`, a file of the workspace shop")
    moves = [a.title for a in await client.actions(path, (2, 3)) if a.title.startswith("Move")]
    assert moves == ["Move to shop's MEMORY.md"]


async def test_open_user_memory_says_a_file_stands_where_its_folder_goes(
    client: MetisClient, user_config_home: Path
) -> None:
    """A file named metis-memory where its folder goes: the first write would fail, so the
    editor is told before it asks the person for an entry (it shows `error` and asks
    nothing), with what to do."""
    (user_config_home / "metis-memory").write_text("not a folder")
    await client.start_session([])
    opened = await client.command("metis.openUserMemory", {})
    assert opened["exists"] is False
    assert "A file stands where the folder metis-memory is needed: move it away" in opened.get(
        "error", ""
    ), opened
    assert (user_config_home / "metis-memory").read_text() == "not a folder"
