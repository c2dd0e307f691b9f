"""Each host's memory, laid out as the host writes it (fixtures/README.md), read into a proposal:
every entry in the place it belongs (MEMORY.md, USER.md or the user memory), what the host
keeps for itself (pointers, routing, drafts, other projects' blocks) left out, and nothing
written anywhere."""

from __future__ import annotations

import os
from pathlib import Path

from metis_memory import MemoryStore
from metis_memory.hosts.imports import ImportProposal, Target, propose
from support.host_memory import CODEX_USER_ENTRIES, Machine, sanitised, tree_digest


def proposal(machine: Machine, *hosts: str) -> ImportProposal:
    return propose(MemoryStore(machine.workspace), hosts, home=machine.home, env=machine.env())


def added(found: ImportProposal, target: Target) -> list[str]:
    return [a.text for a in found.target(target).added]


def sources(found: ImportProposal, target: Target) -> set[str]:
    return {Path(a.source).name for a in found.target(target).added}


def test_claude_code_user_instructions_and_auto_memory_by_type(machine: Machine) -> None:
    machine.install("claude")
    (machine.workspace / "Makefile").write_text("itest:\n\tgo test -tags=integration ./...\n")
    before = tree_digest(machine.home)

    found = proposal(machine, "claude")

    assert added(found, "user-memory") == [
        "- Answer in British English.",
        "- I review diffs in unified form; never paste whole files back.",
        "- Prefer ripgrep over grep.",
    ]
    # `make itest` is a target this workspace's Makefile declares: a fact about this workspace.
    assert added(found, "MEMORY.md") == [
        "- Before pushing, run `make itest` and wait for it to pass.",
        "- The staging cluster is called blue-7.",
        "- Merge freeze for non-critical changes begins 2026-12-04 for the mobile release cut.",
        "- grafana.internal/d/api-latency is the on-call latency dashboard: check it when "
        "changing request handling.",
        "- Database migrations need two approvals before merging.",
    ]
    assert added(found, "USER.md") == [
        "- Do not summarise what you just did at the end of a reply; the user reads the diff.\n"
        "\n"
        '  **Why:** the user said "stop summarizing, I can read the diff".\n'
        "\n"
        "  **How to apply:** end with the result or the next question, never a recap.",
        "- The user is a data engineer who knows Python well and is new to this repository's\n"
        "  TypeScript frontend: explain frontend code in terms of data pipelines.",
    ]
    assert sources(found, "USER.md") == {"feedback_terse.md", "user_role.md"}
    assert sources(found, "MEMORY.md") == {
        "CLAUDE.md",
        "MEMORY.md",
        "project_freeze.md",
        "reference_dashboards.md",
        "review.md",
    }
    # The index's pointer lines are not entries: the files they point at are.
    assert not any("](" in text for t in found.targets for text in added(found, t.target))
    assert tree_digest(machine.home) == before
    assert not (machine.workspace / ".metis").exists()
    assert not machine.user_memory.exists()


def test_codex_summary_and_this_workspaces_blocks_only(machine: Machine) -> None:
    machine.install("codex")

    found = proposal(machine, "codex")

    assert added(found, "user-memory") == CODEX_USER_ENTRIES
    # This workspace's task group: its preferences about the user, its knowledge; the task
    # sections (rollout files, keywords) are Codex's routing, and their `[Task 1]` marks go.
    assert added(found, "USER.md") == [
        '- when benchmarking, the user asked / corrected: "compare against main with '
        'benchstat" -> always report benchstat output against main',
    ]
    assert added(found, "MEMORY.md") == [
        "- The bucket refills lazily on each Allow call; there is no background goroutine.",
        "- Benchmarks run under -race are ten times slower: compare only runs with the same flags.",
    ]
    everything = "\n".join(t.proposed for t in found.targets)
    assert "ISO dates" not in everything  # another project's block
    assert "rollout_summaries" not in everything
    assert "thread_id" not in everything
    assert "Raw Memories" not in everything


def test_gemini_cli_global_memory_and_private_project_memory(machine: Machine) -> None:
    machine.install("gemini")

    found = proposal(machine, "gemini")

    assert added(found, "user-memory") == [
        "- Use British spelling in prose and comments.",
        "- My preferred test runner across projects is pytest.",
        "- I like commit messages that explain why, not what.",
    ]
    assert added(found, "MEMORY.md") == [
        "- On my machine the test database listens on port 5433.",
        "- The local seed data is loaded with `make seed`.",
        "- The docker compose file in this checkout is started with the `dev` profile; the API "
        "then\n  answers on port 8081.",
    ]
    assert added(found, "USER.md") == []


def test_gemini_cli_project_found_by_its_marker_without_the_registry(machine: Machine) -> None:
    machine.install("gemini")
    (machine.home / ".gemini" / "projects.json").unlink()

    found = proposal(machine, "gemini")

    assert "- The local seed data is loaded with `make seed`." in added(found, "MEMORY.md")


def test_gemini_cli_registry_naming_another_folders_marker_is_not_taken(
    machine: Machine, tmp_path: Path
) -> None:
    machine.install("gemini")
    (machine.home / ".gemini" / "tmp" / "shop" / ".project_root").write_text("/elsewhere\n")

    found = proposal(machine, "gemini")

    assert added(found, "MEMORY.md") == []
    assert len(added(found, "user-memory")) == 3


def test_qwen_code_context_file_auto_memories_and_the_workspaces_added_memories(
    machine: Machine,
) -> None:
    machine.install("qwen")

    found = proposal(machine, "qwen")

    assert added(found, "user-memory") == [
        "- I work in Berlin time and prefer replies before 18:00 to be short.",
        "- My shell is fish, not bash: give commands that work in fish.",
        "- The user reviews one commit at a time and wants each commit message to say why.",
    ]
    assert added(found, "USER.md") == [
        "- The user wrote most of the worker package and needs no introduction to it.",
    ]
    assert added(found, "MEMORY.md") == [
        "- In development the API listens on 8080 and the worker's health check on 8091.",
        '- The on-call runbook is the wiki page "Worker incidents" in the platform space.',
        "- The worker retries a failed job three times with exponential backoff.",
    ]
    # The workspace's QWEN.md is the team's instructions except its added memories.
    assert "make build" not in found.target("MEMORY.md").proposed
    untyped = [s for s in found.skipped if s.path.endswith("draft-without-type.md")]
    assert len(untyped) == 1
    assert "no memory type" in untyped[0].reason


def test_copilot_instructions_and_vs_code_memory_tool(machine: Machine) -> None:
    machine.install("copilot")

    found = proposal(machine, "copilot")

    assert added(found, "user-memory") == [
        "- Explain shell commands before running anything destructive.",
        "- When a test is flaky, rerun it alone with -count=20 before changing code.",
        "- I use VS Code with vim keybindings.",
        "- Prefer small functions with early returns.",
    ]
    assert added(found, "MEMORY.md") == [
        "- The frontend is built with `npm run build:web` from the repository root.",
        "- End-to-end tests need the API running on port 8081.",
    ]
    assert "session memory" not in "\n".join(t.proposed for t in found.targets)


def test_copilot_repository_memory_found_when_the_id_is_not_the_guessed_one(
    machine: Machine,
) -> None:
    machine.install("copilot")
    storage = machine.config / "Code" / "User" / "workspaceStorage"
    (only,) = storage.iterdir()
    only.rename(storage / "0123456789abcdef0123456789abcdef")

    found = proposal(machine, "copilot")

    assert len(added(found, "MEMORY.md")) == 2


def test_a_user_scope_entry_naming_this_workspaces_file_goes_to_its_memory(
    machine: Machine,
) -> None:
    (machine.workspace / "ratelimit").mkdir()
    (machine.workspace / "ratelimit" / "bucket.go").write_text("package ratelimit\n")
    claude = machine.home / ".claude"
    claude.mkdir()
    (claude / "CLAUDE.md").write_text(
        "- The rate limiter lives in `ratelimit/bucket.go`.\n"
        "- Cache keys are built in `cache/keys.go`.\n"
        f"- Scratch notes go in {machine.workspace}/notes.\n"
    )

    found = proposal(machine, "claude")

    assert added(found, "MEMORY.md") == [
        "- The rate limiter lives in `ratelimit/bucket.go`.",
        f"- Scratch notes go in {machine.workspace}/notes.",
    ]
    # A path this workspace does not have says nothing about it: the user's habit, kept.
    assert added(found, "user-memory") == ["- Cache keys are built in `cache/keys.go`."]


def test_duplicates_of_our_files_and_among_hosts_are_left_out(machine: Machine) -> None:
    machine.install("claude")
    machine.install("codex")
    metis = machine.workspace / ".metis"
    metis.mkdir()
    (metis / "MEMORY.md").write_text("# Memory\n\n- the STAGING cluster is called   blue-7.\n")
    machine.user_memory.parent.mkdir(parents=True)
    machine.user_memory.write_text("* Answer in British English.\n")

    found = proposal(machine, "claude", "codex")

    memory = found.target("MEMORY.md")
    assert "- The staging cluster is called blue-7." not in added(found, "MEMORY.md")
    assert [(d.text, d.of) for d in memory.duplicates] == [
        ("- The staging cluster is called blue-7.", "MEMORY.md")
    ]
    user = found.target("user-memory")
    of = {d.text: d.of for d in user.duplicates}
    assert of["- Answer in British English."] == "your user memory"
    # Codex's AGENTS.md says it again: the first import of it is kept, this one named.
    claude_md = machine.home / ".claude" / "CLAUDE.md"
    line = claude_md.read_text().splitlines().index("- Prefer ripgrep over grep.") + 1
    assert of["- Prefer ripgrep over grep."] == f"{claude_md}:{line}"
    assert added(found, "user-memory").count("- Prefer ripgrep over grep.") == 1
    assert user.proposed.startswith("* Answer in British English.\n")


def test_nothing_found_reads_nothing_and_proposes_nothing(machine: Machine) -> None:
    found = proposal(machine, "claude", "codex", "gemini", "qwen", "copilot")

    assert found.found_nothing
    assert not found.changed
    assert found.read == []
    assert str(machine.home / ".claude" / "CLAUDE.md") in found.looked_in
    assert str(machine.home / ".codex" / "memories") in found.looked_in


def test_a_workspace_named_with_an_emoji_is_found_under_the_hosts_names(
    machine: Machine, tmp_path: Path
) -> None:
    # JavaScript replaces each UTF-16 unit: an emoji becomes two dashes in Claude Code's and
    # Qwen Code's folder names.
    machine.workspace = tmp_path / "shop-🛒 café"
    machine.workspace.mkdir()
    machine.install("claude")
    machine.install("qwen")

    found = proposal(machine, "claude", "qwen")

    assert "-shop----caf-" in sanitised(str(machine.workspace))
    freeze = "- Merge freeze for non-critical changes begins 2026-12-04 for the mobile release cut."
    assert freeze in added(found, "MEMORY.md")
    assert "- The user wrote most of the worker package and needs no introduction to it." in (
        added(found, "USER.md")
    )


def test_a_workspace_in_a_repository_has_the_repositorys_auto_memory(
    machine: Machine, tmp_path: Path
) -> None:
    # Claude Code and Qwen Code key auto memory to the git root: every folder of the
    # repository shares it.
    repository = tmp_path / "mono"
    (repository / ".git").mkdir(parents=True)
    machine.workspace = repository / "services" / "api"
    machine.workspace.mkdir(parents=True)
    root = os.path.realpath(repository)
    for host, folder in (("claude", ".claude"), ("qwen", ".qwen")):
        memory = machine.home / folder / "projects" / sanitised(root) / "memory"
        memory.mkdir(parents=True)
        (memory / f"{host}.md").write_text(
            f"---\ntype: project\n---\nThe monorepo's {host} fact.\n"
        )

    found = proposal(machine, "claude", "qwen")

    assert added(found, "MEMORY.md") == [
        "- The monorepo's claude fact.",
        "- The monorepo's qwen fact.",
    ]
