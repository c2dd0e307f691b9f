"""The `metis-memory` command's first step, before the CLI loads: the start of the process.

`metis-memory hook` runs before every prompt an agent sends, and usually has nothing to
add: `hosts/hook_command.py` answers that without the CLI's parser or the store, which cost more
to import than starting Python does. Every other command goes to `cli.main`.

The command's modules are imported with the garbage collector off, and what they made is then
frozen out of its reach (`gc.freeze`). An import makes a few hundred thousand objects that live
as long as the process; the collector went over them again and again while they were made
(a quarter of the language server's import CPU), and again at every full collection after.
But for lsprotocol: attrs builds each of its ~550 classes through a builder whose reference
cycles hold a copy of the module's namespace. With the collector off those cycles pile up
(12 MiB, a third of the language server's resident memory) and `gc.freeze` would keep them for
good, so lsprotocol is imported first, with the collector on, as any pygls server imports it.
"""

from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_SERVERS = {"lsp": "metis_memory.lsp.server", "mcp": "metis_memory.mcp.server"}
"""What a long-running command imports once it runs: imported here, with the rest."""
_COLLECTED = {"lsp": "lsprotocol.types"}
"""What a long-running command imports before the rest, with the collector on: its import
makes garbage in cycles (see the module's docstring). RSS after `make bench`'s keystroke
run: 59-61 MiB with it imported under `_importing`, 48-50 without (1.42x -> 1.21-1.24x the
pygls floor)."""


@contextmanager
def _importing() -> Iterator[None]:
    """No collection while the process's modules import; none of them ever again after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"]:
        try:
            with _importing():
                from .hosts.hook_command import hook_command
        except Exception as exc:  # a broken install must not cost the user their prompt
            sys.stderr.write(
                f"metis-memory hook: the hook could not load ({exc!r}); nothing was added to "
                "the context. Reinstall metis-memory\n"
            )
            return 0
        return hook_command(args[1:])
    if args[:1] and args[0] in _COLLECTED:
        importlib.import_module(_COLLECTED[args[0]])
    with _importing():
        from .cli import main as cli_main

        if args[:1] and args[0] in _SERVERS:
            importlib.import_module(_SERVERS[args[0]])
    return cli_main(args)


def main_exit() -> None:
    """Console-script entry point."""
    sys.exit(main())
