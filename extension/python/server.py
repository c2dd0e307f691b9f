"""Launch the Metis Memory servers from the libraries bundled in the VSIX.

Why a launcher: the compiled dependencies (pydantic-core, watchfiles, cryptography, ...) differ
per CPython version, so the VSIX carries one folder per version (libs/cp310 ... libs/cp315,
and libs/cp314t for the free-threaded build),
folders shared by some versions (named for them: libs/cp311+cp312+cp313) and the libraries
every version shares once (libs/common). This puts the folders for the running interpreter
first on sys.path; nothing is installed and nothing is downloaded.

    server.py [lsp]              the language server on stdio (what the extension starts)
    server.py mcp [WORKSPACE]    the MCP server on stdio (what VS Code's MCP support starts)
    server.py hook --host NAME   an agent host's hook
    server.py cli ARGS...        any `metis-memory` command (what the `metis-memory` launcher
                                 the extension can add to the user's bin folder runs)
    server.py --check [lsp|mcp]  one JSON line: can this interpreter run that server?

The language server's first line on stderr is the same report, prefixed with LAUNCH_REPORT
and written once the server has imported (or failed to): the extension waits for it to tell
"this interpreter cannot run it" (one clear message) from a running server. One process both
checks and serves; a `--check` run before each start imported the whole server twice.
Nothing else is ever printed to stdout: it is the protocol channel.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import re
import sys
import sysconfig

MIN = (3, 10)
HERE = os.path.dirname(os.path.abspath(__file__))
LIBS = os.path.join(os.path.dirname(HERE), "libs")
# What each mode imports to prove the bundled libraries load (compiled ones fail here on a
# wrong platform or version).
PROBES = {
    "lsp": "metis_memory.lsp.server",
    "mcp": "metis_memory.mcp.server",
    "hook": "metis_memory.hosts.hook",
    "cli": "metis_memory.cli",
}
NAMES = {"lsp": "language server", "mcp": "MCP server", "hook": "agent hook", "cli": "command"}
# Read by extension/src/server/serverProcess.ts.
LAUNCH_REPORT = "metis-memory-launch: "


def _folders() -> list[str]:
    try:
        return sorted(os.listdir(LIBS))
    except OSError:
        return []


def _available() -> list[str]:
    tags = [n for n in _folders() if re.fullmatch(r"cp3\d+t?", n)]
    return sorted((f"{t[2]}.{t[3:]}" for t in tags), key=lambda v: (int(v[2:].rstrip("t")), v))


def _lib_path(tag: str) -> list[str]:
    """The running version's folder, the folders it shares with other versions, common/."""
    shared = [n for n in _folders() if "+" in n and tag in n.split("+")]
    return [os.path.join(LIBS, n) for n in [tag, *shared, "common"]]


def _problem(mode: str) -> str | None:
    """What stops this interpreter from running the bundled server in `mode`, or None."""
    version = "{}.{}".format(*sys.version_info[:2])
    if sys.implementation.name != "cpython":
        return f"it is {platform.python_implementation()} {version}; the server needs CPython"
    if sys.version_info[:2] < MIN:
        return f"it is Python {version}; the server needs Python 3.10 or newer"
    threads = "t" if sysconfig.get_config_var("Py_GIL_DISABLED") else ""
    tag = "cp{}{}{}".format(*sys.version_info[:2], threads)
    if not os.path.isdir(os.path.join(LIBS, tag)):
        carried = ", ".join(_available()) or "none"
        build = "the free-threaded build of " if threads else ""
        return (
            f"it is {build}Python {version}, and this package carries the server for Python "
            f"{carried} only (a t is a free-threaded build); pick one of those"
        )
    sys.path[0:0] = _lib_path(tag)
    gc.disable()  # as metis_memory.entry imports: the objects an import makes all live on
    try:
        __import__(PROBES[mode])
    except Exception as exc:  # any import failure means this interpreter cannot run it
        return (
            f"the bundled libraries do not load in Python {version} on "
            f"{platform.system()} {platform.machine()}: {type(exc).__name__}: {exc}"
        )
    finally:
        gc.enable()
    return None


def _report(problem: str | None) -> str:
    """One JSON line: whether this interpreter runs the server, and what it is."""
    return json.dumps(
        {
            "ok": problem is None,
            "problem": problem,
            "version": platform.python_version(),
            "executable": sys.executable,
            "platform": f"{platform.system()}-{platform.machine()}",
        }
    )


def main(argv: list[str]) -> int:
    if argv[:1] == ["--check"]:
        mode = argv[1] if len(argv) > 1 else "lsp"
        if mode not in PROBES:
            sys.stderr.write(f"server.py: --check takes lsp or mcp, not {mode!r}\n")
            return 2
        problem = _problem(mode)
        sys.stdout.write(_report(problem) + "\n")
        return 0 if problem is None else 1
    args = argv or ["lsp"]
    mode = args[0]
    if mode == "cli":  # the launcher: the rest is a metis-memory command line, as typed
        args = args[1:]
        mode = args[0] if args[:1] in (["hook"], ["mcp"]) else "cli"
    elif mode not in PROBES or (mode == "lsp" and len(args) > 1) or (mode == "mcp" and len(args) > 2):
        sys.stderr.write(
            "usage: server.py [lsp] | mcp [WORKSPACE] | hook --host NAME | cli ARGS... "
            "| --check [lsp|mcp]\n"
        )
        return 2
    problem = _problem(mode)
    if mode == "lsp":
        sys.stderr.write(LAUNCH_REPORT + _report(problem) + "\n")
        sys.stderr.flush()
    if problem is not None:
        sys.stderr.write(f"metis-memory: cannot start the {NAMES[mode]}: {problem}\n")
        return 0 if mode == "hook" else 3  # a hook's failure must never block the agent
    from metis_memory.entry import main as cli_main

    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
