"""The hosts `metis-memory import --from` knows, each a module reading that host's memory
(`claude.py`, `codex.py`, `gemini.py`, `qwen.py`, `copilot.py`, each citing where its host keeps
what), and the one way a `--from` value is read."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType

from ...store.errors import short_repr
from . import claude, codex, copilot, gemini, qwen
from .memories import Location, Memory
from .reading import Context, Reader


@dataclass(frozen=True)
class Host:
    name: str
    """As `--from` takes it: `claude`."""
    title: str
    """As a person reads it: `Claude Code`."""
    locations: Callable[[Context], list[Location]]
    read: Callable[[Context, Reader], list[Memory]]


def _host(module: ModuleType) -> Host:
    return Host(module.NAME, module.TITLE, module.locations, module.read)


HOSTS: dict[str, Host] = {
    module.NAME: _host(module) for module in (claude, codex, gemini, qwen, copilot)
}
NAMES: tuple[str, ...] = tuple(HOSTS)
ALL = "all"


class UnknownHost(ValueError):
    """A `--from` value naming no host we read."""


def parse_hosts(values: Iterable[str]) -> tuple[str, ...]:
    """The hosts named by `--from` values, in the order given, each once: `claude`,
    `claude,gemini`, `all` (every host), any case, spaces around commas ignored."""
    chosen: list[str] = []
    for value in values:
        for part in value.split(","):
            name = part.strip().casefold()
            if not name:
                continue
            if name == ALL:
                names: Sequence[str] = NAMES
            elif name in HOSTS:
                names = (name,)
            else:
                known = ", ".join(NAMES)
                raise UnknownHost(
                    f"no host {short_repr(part.strip())} to import from: name one or more of "
                    f"{known}, or {ALL}"
                )
            chosen += [n for n in names if n not in chosen]
    if not chosen:
        raise UnknownHost(f"name a host to import from: {', '.join(NAMES)}, or {ALL}")
    return tuple(chosen)
