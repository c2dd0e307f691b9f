"""Launch the Metis Memory language server from the libraries bundled in the VSIX.

Why a launcher: the compiled dependencies (pydantic-core, watchfiles) differ per CPython
version, so the VSIX carries one folder per version (libs/cp310 ... libs/cp313) plus the
pure-Python ones once (libs/common). This picks the folder for the running interpreter and
puts it first on sys.path; nothing is installed and nothing is downloaded.

`server.py --check` prints one JSON line describing whether this interpreter can run the
server (the extension calls it before starting, to give one clear message); without it, the
language server runs on stdio. Nothing else is ever printed to stdout: it is the protocol.
"""

from __future__ import annotations

import json
import os
import platform
import sys

MIN = (3, 10)
HERE = os.path.dirname(os.path.abspath(__file__))
LIBS = os.path.join(os.path.dirname(HERE), "libs")


def _available() -> list[str]:
    try:
        names = sorted(n for n in os.listdir(LIBS) if n.startswith("cp"))
    except OSError:
        return []
    return [f"{n[2]}.{n[3:]}" for n in names]


def _problem() -> str | None:
    """What stops this interpreter from running the bundled server, or None."""
    version = "{}.{}".format(*sys.version_info[:2])
    if sys.implementation.name != "cpython":
        return f"it is {platform.python_implementation()} {version}; the server needs CPython"
    if sys.version_info[:2] < MIN:
        return f"it is Python {version}; the server needs Python 3.10 or newer"
    tag = "cp{}{}".format(*sys.version_info[:2])
    if not os.path.isdir(os.path.join(LIBS, tag)):
        carried = ", ".join(_available()) or "none"
        return (
            f"it is Python {version}, and this package carries the server for Python {carried} "
            f"only; pick one of those"
        )
    sys.path[0:0] = [os.path.join(LIBS, tag), os.path.join(LIBS, "common")]
    try:
        import pydantic_core  # noqa: F401  (compiled: fails here on a wrong platform)
        import watchfiles  # noqa: F401  (compiled)

        from metis_memory.lsp import server  # noqa: F401
    except Exception as exc:  # any import failure means this interpreter cannot run it
        return (
            f"the bundled libraries do not load in Python {version} on "
            f"{platform.system()} {platform.machine()}: {type(exc).__name__}: {exc}"
        )
    return None


def main() -> int:
    problem = _problem()
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        report = {
            "ok": problem is None,
            "problem": problem,
            "version": platform.python_version(),
            "executable": sys.executable,
            "platform": f"{platform.system()}-{platform.machine()}",
        }
        sys.stdout.write(json.dumps(report) + "\n")
        return 0 if problem is None else 1
    if problem is not None:
        sys.stderr.write(f"metis-memory: cannot start the language server: {problem}\n")
        return 3
    from metis_memory.cli import main as cli_main

    return cli_main(["lsp"])


if __name__ == "__main__":
    sys.exit(main())
