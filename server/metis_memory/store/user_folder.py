"""Where the user memory lives: the platform's user config folder, as platformdirs names it
(`user_config_dir`). On Linux and the BSDs that is `$XDG_CONFIG_HOME/metis-memory/`, or
`~/.config/metis-memory/` when the variable is unset or not absolute; macOS's
`~/Library/Application Support/metis-memory/` (or an absolute XDG_CONFIG_HOME's), Windows'
`%LOCALAPPDATA%\\metis-memory\\` (not the roaming profile)."""

from __future__ import annotations

import errno
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

USER_FOLDER = "metis-memory"
"""The user memory's folder in the user config folder (platformdirs' `appname`)."""


def user_config_home(env: Mapping[str, str] | None = None) -> str:
    """The platform's user config folder (platformdirs' `user_config_dir` without `appname`).

    On Linux and the BSDs this is computed here by platformdirs' XDG rule (an absolute
    `XDG_CONFIG_HOME`, else `~/.config` under an absolute `HOME`, else the account's home),
    and pinned equal to it by tests: importing platformdirs costs a hook ~19 ms (it loads
    `pathlib` and `typing`), more than half of what the whole hook may. Elsewhere
    platformdirs decides. Raises FileNotFoundError when no home folder can be found."""
    environ = os.environ if env is None else env
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        xdg = environ.get("XDG_CONFIG_HOME", "")
        if xdg.startswith("/"):
            return xdg
        return os.path.join(_home(environ), ".config")
    import platformdirs  # pragma: no cover - macOS and Windows

    return platformdirs.user_config_dir(appauthor=False)  # pragma: no cover


def user_memory_dir(env: Mapping[str, str] | None = None) -> str:
    """The folder holding the user memory's USER.md (and its lock, log and inbox)."""
    return os.path.join(user_config_home(env), USER_FOLDER)


def _home(environ: Mapping[str, str]) -> str:
    """`expanduser("~")`, a relative `HOME` taken as unset (as platformdirs takes it)."""
    home = environ.get("HOME")
    if home is not None and home.startswith("/"):
        return home.rstrip("/") or "/"
    import pwd

    try:
        home = pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        home = ""
    if not home.startswith("/"):
        raise FileNotFoundError(
            errno.ENOENT,
            f"no home folder: HOME is unset or relative, and uid {os.getuid()} has no account "
            "entry with an absolute home",
        )
    return home.rstrip("/") or "/"
