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

A hook's process, once it has answered, ends without the interpreter's teardown
(`main_exit`): freeing every module it imported, one object at a time, is work no one waits
for but the host, before every prompt.
"""

from __future__ import annotations

import gc
import os
import sys

_SERVERS = {"lsp": "metis_memory.lsp.server", "mcp": "metis_memory.mcp.server"}
"""What a long-running command imports once it runs: imported here, with the rest."""
_COLLECTED = {"lsp": "lsprotocol.types"}
"""What a long-running command imports before the rest, with the collector on: its import
makes garbage in cycles (see the module's docstring). RSS after `make bench`'s keystroke
run: 59-61 MiB with it imported under `_Importing`, 48-50 without (1.42x -> 1.21-1.24x the
pygls floor)."""


class _Importing:
    """No collection while the process's modules import; none of them ever again after. (A
    class, not `contextlib.contextmanager`: the hook imports nothing it does not need.)"""

    def __enter__(self) -> None:
        self.enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        gc.freeze()
        if self.enabled:
            gc.enable()


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"]:
        try:
            with _Importing():
                from .hosts.hook_command import hook_command
        except Exception as exc:  # a broken install must not cost the user their prompt
            sys.stderr.write(
                f"metis-memory hook: the hook could not load ({exc!r}); nothing was added to "
                "the context. Reinstall metis-memory\n"
            )
            return 0
        return hook_command(args[1:])
    import importlib

    if args[:1] and args[0] in _COLLECTED:
        importlib.import_module(_COLLECTED[args[0]])
    with _Importing():
        from .cli import main as cli_main

        if args[:1] and args[0] in _SERVERS:
            importlib.import_module(_SERVERS[args[0]])
    return cli_main(args)


def main_exit() -> None:
    """Console-script entry point (and `python -m metis_memory`'s)."""
    args = sys.argv[1:]
    code = main(args)
    if args[:1] == ["hook"]:
        _end_now(code)
    sys.exit(code)


def _end_now(code: int) -> None:
    """End the process at once: its output flushed, the interpreter's teardown skipped
    (`os._exit`). Only for the hook, whose work is done when it returns: its answer is
    written and flushed, its session record renamed into place, its locks released, its
    files closed; what is left is the stale check's daemon thread when it ran late, which
    an ordinary exit would not wait for either."""
    import contextlib  # (the hook has imported it already)

    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):  # (a host that stopped reading)
                stream.flush()
    os._exit(code)
