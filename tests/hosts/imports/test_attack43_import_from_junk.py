"""Attack on `metis-memory import --from` (issue 43) with junk: a value of 100,000 characters
was echoed back whole in the refusal (messages never echo a huge input back: `short_repr`);
an escape sequence in it is shown, not sent to the terminal."""

from __future__ import annotations

from support.host_memory import Machine


def test_a_huge_or_escaped_host_name_is_refused_in_a_line(machine: Machine) -> None:
    run = machine.run("import", "--from", "claude," + "x" * 100_000, "--dry-run")

    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.startswith("metis-memory: no host 'xxxx")
    assert run.stderr.endswith(
        "to import from: name one or more of claude, codex, gemini, qwen, copilot, or all\n"
    )
    assert len(run.stderr) < 300

    escaped = machine.run("import", "--from", "cla\x1b[2Jude")

    assert escaped.returncode == 2
    assert "\x1b" not in escaped.stderr
    assert "no host 'cla\\x1b[2Jude'" in escaped.stderr
