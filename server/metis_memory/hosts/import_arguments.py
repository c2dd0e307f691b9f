"""The `import` subcommand's arguments, apart from the command: every run of the CLI builds
its parser (`metis-memory lsp` and `mcp` too), and the readers behind `import_command` cost a
language server 10 MiB it never uses."""

from __future__ import annotations

import argparse

HOST_NAMES = ("claude", "codex", "gemini", "qwen", "copilot")
"""`hosts/imports/registry.NAMES`, in its order (a test keeps them equal)."""
ALL_HOSTS = "all"
"""`registry.ALL`."""


def import_arguments(parser: argparse.ArgumentParser) -> None:
    """The `import` subcommand's arguments."""
    parser.description = (
        "Bring in what agent hosts remember, for this workspace and for you: each entry placed "
        "in the workspace's MEMORY.md or USER.md or in your user memory, duplicates of what is "
        "there left out, secrets refused, each file within its caps. Shown as a diff, applied "
        "only when you confirm (or pass --yes). The hosts' own files are only read."
    )
    parser.add_argument(
        "--from",
        dest="hosts",
        action="append",
        required=True,
        metavar="HOST",
        help=(
            "a host to import from, repeatable or comma-separated: "
            f"{', '.join(HOST_NAMES)}, or {ALL_HOSTS}"
        ),
    )
    parser.add_argument(
        "--workspace", "-w", default=".", metavar="DIR", help="workspace (default: .)"
    )
    parser.add_argument("--dry-run", action="store_true", help="print the proposal, write nothing")
    parser.add_argument(
        "--yes", "-y", action="store_true", help="apply without asking (for scripts)"
    )
    parser.add_argument(
        "--json", action="store_true", help="print a JSON object (the proposal, what was applied)"
    )
