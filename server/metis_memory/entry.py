"""The `metis-memory` command's first step, before the CLI loads.

`metis-memory hook` runs before every prompt an agent sends, and usually has nothing to
add: `hosts/hook_command.py` answers that without the CLI's parser or the store, which cost more
to import than starting Python does. Every other command goes to `cli.main`.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"]:
        try:
            from .hosts.hook_command import hook_command
        except Exception as exc:  # a broken install must not cost the user their prompt
            sys.stderr.write(
                f"metis-memory hook: the hook could not load ({exc!r}); nothing was added to "
                "the context. Reinstall metis-memory\n"
            )
            return 0
        return hook_command(args[1:])
    from .cli import main as cli_main

    return cli_main(args)


def main_exit() -> None:
    """Console-script entry point."""
    sys.exit(main())
