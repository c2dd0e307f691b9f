"""Other agents' files in the editor, over real stdio: each open file a budget covers is
squiggled from where its agent stops reading, the Codex chain follows the files above it
on disk, and `.metis/budgets.toml` reports its own problems on their lines."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pytest_lsp import client_capabilities

from metis_memory.budgets.paths import claude_project
from support.lsp_session import SERVER_HOME, MetisClient, apply_workspace_edit, hover, lenses
from support.lsp_values import file_uri, span


async def test_an_over_budget_claude_md_is_squiggled_from_the_cut(
    client: MetisClient, workspace: Path
) -> None:
    claude = workspace / "CLAUDE.md"
    text = "# Rules\n" + "".join(
        f"- keep it #{i:04d} ✓\n" for i in range(2_400)
    )  # 43,208 characters, 2,401 lines
    claude.write_text(text, encoding="utf-8")
    await client.start_session([workspace])
    client.open(claude)
    await client.wait_for_codes(claude, ["over-budget", "over-budget"])
    by_budget = {
        d.data["budget"]: d for d in client.diagnostics[file_uri(claude)] if d.data is not None
    }
    assert set(by_budget) == {"claude-md", "claude-md-lines"}
    chars = by_budget["claude-md"]
    assert chars.severity == types.DiagnosticSeverity.Warning and chars.source == "metis"
    assert chars.data == {
        "budget": "claude-md",
        "consumer": "Claude Code",
        "unit": "chars",
        "limit": 40_000,
        "size": len(text),
    }
    # Character 40,000 is on line 1 + (40,000 - 8) // 18 = 2,222, at (40,000 - 8) % 18 = 14.
    assert span(chars.range)[0] == (2_222, 14)
    lines = by_budget["claude-md-lines"]
    assert span(lines.range)[0] == (200, 0)
    assert lines.message.startswith("CLAUDE.md is 2,401 lines, over the 200 lines Claude Code")

    client.replace_all(claude, "# Rules\n- keep it short\n")
    await client.wait_for_codes(claude, [])


async def test_the_codex_chain_counts_the_files_above_on_disk(
    client: MetisClient, workspace: Path
) -> None:
    (workspace / ".git").mkdir()
    (workspace / "AGENTS.md").write_text("r" * 30_000)
    deep = workspace / "svc" / "AGENTS.md"
    deep.parent.mkdir()
    deep.write_text(
        "".join(f"- use the Makefile, rule {i:03d}\n" for i in range(100))
    )  # 2,900 B; 2,768 B are left
    await client.start_session([workspace])
    client.open(deep)
    await client.wait_for_codes(deep, ["over-budget"])
    cut = client.diagnostic(deep, "over-budget")
    assert cut.severity == types.DiagnosticSeverity.Error
    assert span(cut.range)[0] == (95, 13)  # 2,768 B = 95 lines of 29 B, then 13 B more
    assert cut.data is not None and cut.data["spent_before"] == 30_000

    # The root file shrinks on disk (saved in the editor): the deep file fits again.
    root = workspace / "AGENTS.md"
    client.open(root)
    client.replace_all(root, "r" * 1_000)
    client.save(root)
    await client.wait_for_codes(deep, [])


async def test_files_no_budget_covers_get_nothing(client: MetisClient, workspace: Path) -> None:
    readme = workspace / "README.md"
    readme.write_text("x" * 100_000)
    claude = workspace / "CLAUDE.md"
    claude.write_text("x" * 40_001)
    await client.start_session([workspace])
    client.open(readme)
    client.open(claude)
    await client.wait_for_codes(claude, ["over-budget"])
    assert file_uri(readme) not in client.diagnostics


async def test_closing_withdraws_the_diagnostics(client: MetisClient, workspace: Path) -> None:
    rules = workspace / ".windsurf" / "rules" / "style.md"
    rules.parent.mkdir(parents=True)
    rules.write_text("w" * 12_001)
    await client.start_session([workspace])
    client.open(rules)
    await client.wait_for_codes(rules, ["over-budget"])
    client.close(rules)
    await client.wait_for_codes(rules, [])


async def test_budgets_toml_reports_its_problems_and_its_budgets_apply(
    client: MetisClient, workspace: Path
) -> None:
    config = workspace / ".metis" / "budgets.toml"
    config.parent.mkdir()
    config.write_text(
        '[[budget]]\nname = "team notes"\nfiles = ["notes/*.md"]\nunit = "lines"\nlimit = 2\n'
        'past = "truncated"\n'
    )
    notes = workspace / "notes" / "a.md"
    notes.parent.mkdir()
    notes.write_text("1\n2\n3\n")
    await client.start_session([workspace])
    client.open(notes)
    await client.wait_for_codes(notes, ["over-budget"])
    assert client.diagnostic(notes, "over-budget").message.startswith(
        "team notes loads only the first 2 lines of a.md: line 3 is never seen"
    )

    client.open(config)
    client.replace_all(config, '[[budget]]\nname = "team notes"\nunit = "words"\n')
    await client.wait_for_codes(config, ["budgets-config"])
    problem = client.diagnostic(config, "budgets-config")
    assert span(problem.range) == ((0, 0), (0, 10))  # the [[budget]] header line
    assert "'unit' must be one of bytes, chars, lines" in problem.message
    assert problem.severity == types.DiagnosticSeverity.Error


async def test_the_lens_and_hover_show_each_budgets_usage(
    client: MetisClient, workspace: Path
) -> None:
    (workspace / ".git").mkdir()
    (workspace / "AGENTS.md").write_text("r" * 30_000)
    deep = workspace / "svc" / "AGENTS.md"
    deep.parent.mkdir()
    deep.write_text("s" * 5_000)
    capabilities = client_capabilities("emacs")  # without markdown-mode: plain text only
    assert capabilities.text_document is not None and capabilities.text_document.hover
    capabilities.text_document.hover.content_format = [types.MarkupKind.PlainText]
    await client.start_session([workspace], capabilities=capabilities)
    client.open(deep)
    await client.wait_for_codes(deep, ["over-budget"])
    (lens,) = await lenses(client, deep)
    assert lens.command is not None
    assert lens.command.title == (
        "Codex: 5,000 B after 30,000 B above of 32,768 B (107%) · text is lost"
    )
    shown = await hover(client, deep, 0, 0)
    assert shown is not None and isinstance(shown.contents, types.MarkupContent)
    assert shown.contents.kind == types.MarkupKind.PlainText
    assert shown.contents.value == (
        "What each agent sees of this file:\n"
        "Codex: 5,000 B after 30,000 B above of 32,768 B (107%) · text is lost"
    )


async def test_the_hover_is_a_table_for_markdown_clients(
    client: MetisClient, workspace: Path
) -> None:
    memory = workspace / "home" / ".hermes" / "memories" / "USER.md"
    claude = workspace / "CLAUDE.md"
    claude.write_text("# Rules\n- short\n")
    await client.start_session([workspace])
    client.open(claude)
    await client.wait_until(lambda: file_uri(claude) in client.diagnostics, "CLAUDE.md analysed")
    shown = await hover(client, claude, 0, 2)
    assert shown is not None and isinstance(shown.contents, types.MarkupContent)
    assert shown.contents.kind == types.MarkupKind.Markdown
    rows = shown.contents.value.splitlines()[4:]
    assert rows == [
        "| Claude Code (CLAUDE.md size warning (200k-token context)) | 16 characters of "
        "40,000 characters (0%) | ok |",
        "| Claude Code (CLAUDE.md size limit) | 16 B of 4,194,304 B (0%) | ok |",
        "| Claude Code (CLAUDE.md length guidance) | 2 lines of 200 lines (1%) | ok |",
    ]
    assert not memory.exists()


async def test_agent_context_lists_each_agents_files_with_levels_and_cuts(
    client: MetisClient, workspace: Path
) -> None:
    (workspace / ".git").mkdir()
    (workspace / "AGENTS.md").write_text("r" * 30_000)
    deep = workspace / "svc" / "AGENTS.md"
    deep.parent.mkdir()
    deep.write_text(
        "".join(f"- use the Makefile, rule {i:03d}\n" for i in range(100))
    )  # cut at line 95, character 13
    claude = workspace / "CLAUDE.md"
    claude.write_text("# Rules\n- short\n")
    await client.start_session([workspace])
    client.open(claude)
    client.replace_all(claude, "# Rules\n" + "- typed, not saved\n" * 170)  # 85 % of 200 lines
    await client.wait_until(lambda: file_uri(claude) in client.diagnostics, "CLAUDE.md analysed")
    agents = await client.command("metis.agentContext", {})
    by_agent = {a["consumer"]: a for a in agents}
    assert list(by_agent) == ["Claude Code", "Codex"]
    codex = by_agent["Codex"]
    assert codex["worst"] == "red"
    files = {f["shown"]: f for f in codex["files"]}
    assert files["AGENTS.md"]["level"] == "yellow"  # 30,000 of 32,768 B: 92 %
    assert files["AGENTS.md"]["cut"] is None
    assert files["svc/AGENTS.md"]["level"] == "red"
    assert files["svc/AGENTS.md"]["cut"] == {"line": 95, "character": 13}
    assert files["svc/AGENTS.md"]["uri"] == file_uri(deep)
    assert files["svc/AGENTS.md"]["used"] == "2,900 B after 30,000 B above of 32,768 B (100%)"
    claude_files = {f["budget"]: f for f in by_agent["Claude Code"]["files"]}
    # The open buffer counts, unsaved: 171 lines.
    assert claude_files["claude-md-lines"]["used"] == "171 lines of 200 lines (86%)"
    assert claude_files["claude-md-lines"]["level"] == "yellow"
    # The budgets the file is far from (under half) are no rows of their own beside it, but
    # named in its row (the view's tooltip).
    assert list(claude_files) == ["claude-md-lines"]
    assert claude_files["claude-md-lines"]["also"] == [
        "CLAUDE.md size warning (200k-token context): 3,238 characters of 40,000 characters (8%)",
        "CLAUDE.md size limit: 3,238 B of 4,194,304 B (0%)",
    ]


async def test_rule_files_agents_ignore_are_squiggled_where_they_go_wrong(
    client: MetisClient, workspace: Path
) -> None:
    claude = workspace / "CLAUDE.md"
    claude.write_text("# Rules\nSee @docs/gone.md for setup.\n")
    rule = workspace / ".cursor" / "rules" / "go.mdc"
    rule.parent.mkdir(parents=True)
    rule.write_text('---\nalwaysApply: "true"\n---\nUse gofmt.\n')
    await client.start_session([workspace])
    client.open(claude)
    client.open(rule)
    await client.wait_for_codes(claude, ["missing-import"])
    assert span(client.diagnostic(claude, "missing-import").range) == ((1, 4), (1, 17))
    await client.wait_for_codes(rule, ["rule-frontmatter", "rule-frontmatter"])
    # Creating the file and typing fixes both.
    (workspace / "docs").mkdir()
    (workspace / "docs" / "gone.md").write_text("setup\n")
    client.replace_all(claude, "# Rules\nSee @docs/gone.md for setup.\n")
    await client.wait_for_codes(claude, [])
    client.replace_all(rule, "---\nalwaysApply: true\n---\nUse gofmt.\n")
    await client.wait_for_codes(rule, [])


async def test_agent_files_get_the_duplicate_and_secret_checks(
    client: MetisClient, workspace: Path
) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    agents = workspace / "AGENTS.md"
    agents.write_text(f"# Rules\n- run make test\n- Run make test\n- deploy token {token}\n")
    await client.start_session([workspace])
    client.open(agents)
    await client.wait_for_codes(agents, ["duplicate-entry", "secret"])
    secret = client.diagnostic(agents, "secret")
    assert secret.message.startswith(
        "Possible GitHub token in AGENTS.md: Codex loads it into the model's context; redact it"
    )
    assert token not in secret.message


async def test_claude_codes_auto_memory_is_reported_while_closed_and_followed(
    client: MetisClient, workspace: Path
) -> None:
    """Nobody opens ~/.claude/projects/<project>/memory/MEMORY.md, and Claude Code loads only
    its first 200 lines: the diagnostics come without opening it, and follow the disk."""
    memory = SERVER_HOME / ".claude" / "projects" / claude_project(workspace) / "memory"
    memory.mkdir(parents=True)
    index = memory / "MEMORY.md"
    index.write_text("".join(f"- [note {i}](note{i}.md)\n" for i in range(243)))
    for i in range(243):
        (memory / f"note{i}.md").write_text(
            f"---\nname: note {i}\ndescription: fact {i}\ntype: project\n---\nfact {i}\n"
        )
    await client.start_session([workspace])
    await client.wait_for_codes(index, ["over-budget"])
    cut = client.diagnostic(index, "over-budget")
    assert span(cut.range)[0] == (200, 0)
    assert cut.message.startswith(
        "Claude Code loads only the first 200 lines of MEMORY.md: lines 201–243 are never seen"
    )
    # The server asked the client to watch that one file for it.
    await client.wait_until(lambda: bool(client.registrations), "the watcher's registration")
    (registration,) = client.registrations
    assert registration.method == "workspace/didChangeWatchedFiles"
    options = registration.register_options
    assert isinstance(options, dict)
    (watcher,) = options["watchers"]
    # This capability set declares no relativePatternSupport: the pattern is the file's path.
    assert watcher["globPattern"] == str(index)
    # Claude Code consolidates its index: the client's file watching reports the change.
    index.write_text("".join(f"- [note {i}](note{i}.md)\n" for i in range(243))[:2_000])
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            [types.FileEvent(uri=file_uri(index), type=types.FileChangeType.Changed)]
        )
    )
    await client.wait_until(
        lambda: "over-budget" not in client.codes(index), "the cut to go once the index is short"
    )


async def test_a_large_agent_file_gets_its_cut_and_then_its_entry_checks(
    client: MetisClient, workspace: Path
) -> None:
    """Past 8 KiB the cut is published first, the duplicate and secret checks right after,
    for the same version."""
    agents = workspace / "AGENTS.md"
    text = "".join(f"- rule {i:05d} of the house style\n" for i in range(1_200))  # 38,400 B
    agents.write_text(text + "- rule 00007 of the house style\n")
    await client.start_session([workspace])
    client.open(agents)
    await client.wait_for_codes(agents, ["duplicate-entry", "over-budget"])
    client.replace_all(agents, text)
    await client.wait_for_codes(agents, ["over-budget"])


AGENT_RULES = (
    "# Rules\n"
    "- run `make check` before pushing\n"
    "- Run `make check` before pushing\n"  # 2: a repeat
    "- deploy key 🔑 AKIAIOSFODNN7EXAMPLE\n"  # 3: a secret
    + "- filler ✓ line\n"
    * 240  # 4..243: over Claude Code's 200-line guidance
)


async def test_other_agents_files_get_the_memory_files_quick_fixes(
    client: MetisClient, workspace: Path
) -> None:
    """Remove duplicate, redact and tidy on a CLAUDE.md: edits for the buffer version they
    were computed for, which leave the file on disk alone."""
    claude = workspace / "CLAUDE.md"
    claude.write_text(AGENT_RULES, encoding="utf-8")
    await client.start_session([workspace])
    uri = client.open(claude)
    await client.wait_until(
        lambda: {"over-budget", "secret", "duplicate-entry"} <= set(client.codes(claude)),
        f"budget, secret and duplicate diagnostics on {claude}",
    )

    def after(action: types.CodeAction) -> str:
        assert action.edit is not None and action.edit.document_changes
        (change,) = action.edit.document_changes
        assert isinstance(change, types.TextDocumentEdit)
        assert change.text_document.version == client.versions[uri]
        return apply_workspace_edit(action.edit, lambda _u: AGENT_RULES, client.encoding)[uri]

    on_repeat = {a.title: a for a in await client.actions(claude, (2, 4))}
    assert after(
        on_repeat["Remove duplicate entry “Run `make check` before pushing” (it repeats line 2)"]
    ) == AGENT_RULES.replace("- Run `make check` before pushing\n", "")
    on_secret = {a.title: a for a in await client.actions(claude, (3, 20))}
    redacted = after(on_secret["Redact the AWS access key on line 4"])
    assert "AKIAIOSFODNN7EXAMPLE" not in redacted and redacted.count("\n") == AGENT_RULES.count(
        "\n"
    )
    cut = client.diagnostic(claude, "over-budget")
    on_cut = {a.title: a for a in await client.actions(claude, (cut.range.start.line, 0))}
    tidy = on_cut["Tidy CLAUDE.md (repeats, empty items, blank runs)"]
    assert tidy.diagnostics and tidy.diagnostics[0].code == "over-budget"
    assert after(tidy) == (
        "# Rules\n- run `make check` before pushing\n- deploy key 🔑 AKIAIOSFODNN7EXAMPLE\n"
        "- filler ✓ line\n"
    )
    assert claude.read_text(encoding="utf-8") == AGENT_RULES  # the server wrote nothing


async def test_agent_file_fixes_reach_a_client_without_literal_support(
    client: MetisClient, workspace: Path
) -> None:
    """Such a client is sent `metis.applyEdit` commands; the server accepts them for an open
    agent's file at the version they were made for, and refuses them once it changed."""
    capabilities = client_capabilities("visual-studio-code")
    assert capabilities.text_document and capabilities.text_document.code_action
    capabilities.text_document.code_action.code_action_literal_support = None
    claude = workspace / "CLAUDE.md"
    claude.write_text(AGENT_RULES, encoding="utf-8")
    await client.start_session([workspace], capabilities=capabilities)
    uri = client.open(claude)
    await client.wait_until(lambda: "secret" in client.codes(claude), f"a secret on {claude}")
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(3, 20), types.Position(3, 20)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert result and all(isinstance(r, types.Command) for r in result), result
    redact = next(r for r in result if r.title == "Redact the AWS access key on line 4")
    assert isinstance(redact, types.Command) and redact.arguments
    assert await client.command(redact.command, *redact.arguments) == {
        "applied": True,
        "failureReason": None,
    }
    (sent,) = client.applied_edits
    assert (
        "AKIAIOSFODNN7EXAMPLE"
        not in apply_workspace_edit(sent.edit, lambda _u: AGENT_RULES, client.encoding)[uri]
    )
    client.replace_all(claude, AGENT_RULES + "- one more\n")
    refused = await client.command_error(redact.command, *redact.arguments)
    assert "changed since the fix was offered" in refused.message
    assert len(client.applied_edits) == 1


async def test_claude_codes_auto_memory_is_followed_for_a_client_that_cannot_watch(
    client: MetisClient, workspace: Path
) -> None:
    """Neovim cannot watch files for the server: the server watches the index itself, so
    Claude Code's edit reaches the diagnostics without the client saying anything."""
    memory = SERVER_HOME / ".claude" / "projects" / claude_project(workspace) / "memory"
    memory.mkdir(parents=True)
    index = memory / "MEMORY.md"
    index.write_text("".join(f"- fact {i}\n" for i in range(230)))
    await client.start_session([workspace], client="neovim")
    await client.wait_for_codes(index, ["over-budget"])
    assert client.registrations == []  # nothing asked of the client
    index.write_text("".join(f"- fact {i}\n" for i in range(150)))  # Claude Code consolidates
    await client.wait_until(
        lambda: "over-budget" not in client.codes(index), "the cut to go once the index is short"
    )
    index.write_text("".join(f"- fact {i}\n" for i in range(250)))
    await client.wait_for_codes(index, ["over-budget"])


async def test_a_budgets_toml_budget_on_other_files_registers_their_sync(
    client: MetisClient, workspace: Path
) -> None:
    """An editor sends only the documents its selector names; a budget on `notes/*.txt` is
    registered for didOpen/didChange/didClose/didSave, and re-registered when it changes."""
    config = workspace / ".metis" / "budgets.toml"
    config.parent.mkdir()
    config.write_text(
        '[[budget]]\nname = "team notes"\nfiles = ["notes/*.txt"]\nunit = "lines"\nlimit = 2\n'
        'past = "truncated"\n'
    )
    await client.start_session([workspace])
    methods = [
        "textDocument/didOpen",
        "textDocument/didChange",
        "textDocument/didClose",
        "textDocument/didSave",
    ]

    def selectors() -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for method in methods:
            registration = client.live_registrations.get(f"metis-budget-files:{method}")
            if registration is not None:
                options = registration.register_options
                assert isinstance(options, dict)
                out[method] = [f["pattern"] for f in options["documentSelector"]]
        return out

    notes = f"{workspace.as_posix()}/notes/*.txt"
    await client.wait_until(
        lambda: selectors() == {m: [notes] for m in methods}, "the notes registration"
    )
    todo = workspace / "notes" / "todo.txt"
    todo.parent.mkdir()
    todo.write_text("1\n2\n3\n")
    client.open(todo)
    await client.wait_for_codes(todo, ["over-budget"])

    config.write_text(config.read_text().replace("notes/*.txt", "docs/**/*.rst"))
    rst = f"{workspace.as_posix()}/docs/**/*.rst"
    await client.wait_until(
        lambda: selectors() == {method: [rst] for method in methods}, "the re-registration"
    )
    config.unlink()
    await client.wait_until(lambda: selectors() == {}, "the registration withdrawn")


def test_budget_patterns_are_absolute_globs_that_match_only_their_workspace(
    tmp_path: Path,
) -> None:
    """A workspace path holding glob characters is matched literally; a glob naming Claude
    Code's project folder is left to the built-in selector."""
    from metis_memory.budgets.catalog import workspace_catalog
    from metis_memory.lsp.features.budget_sync import patterns

    workspace = tmp_path / "a[1]{x}"
    (workspace / ".metis").mkdir(parents=True)
    (workspace / ".metis" / "budgets.toml").write_text(
        '[[budget]]\nname = "notes"\nfiles = ["notes/*.txt"]\nunit = "lines"\nlimit = 2\n'
        'past = "truncated"\n'
    )
    base = tmp_path.as_posix()
    assert patterns([workspace], workspace_catalog) == (f"{base}/a[[]1[]][{{]x[}}]/notes/*.txt",)
    assert patterns([tmp_path], workspace_catalog) == ()  # no budgets.toml: built-ins only
