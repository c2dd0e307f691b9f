"""Read-only classes for the modules a hook process imports: what `dataclass(frozen=True)`
gives (fields that refuse assignment; for `Value`, equality, hash and repr from them),
without `dataclasses`. That module imports `inspect` (and with it `ast`, `dis` and
`tokenize`) and writes each class's methods with `exec`: more than half of what a hook cost
beyond starting Python (issue 42).

A subclass lists its fields in `__slots__` (a class that caches properties has none, and
keeps them in its `__dict__`), declares their types, and sets each once in `__init__` with
`init_field`, as a frozen dataclass's `__init__` does; any later assignment raises
AttributeError, and mypy refuses it as it refuses one to a frozen dataclass's field
(`dataclass_transform`, for the type checker only)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    from typing_extensions import dataclass_transform

    T = TypeVar("T")
else:

    def dataclass_transform(**_: object) -> Callable[[T], T]:
        return lambda cls: cls


init_field = object.__setattr__
"""`init_field(self, name, value)`: how `__init__` sets a field of a `Frozen`."""


@dataclass_transform(frozen_default=True)
class Frozen:
    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(
            f"cannot assign to field {name!r}: a {type(self).__name__} is read-only"
        )

    def __getstate__(self) -> object:
        """What pickling and copying keep: `(the __dict__ or None, the slots' values)`, as
        Python 3.11 gives by default (every pickle protocol, every version)."""
        slots = {
            name: getattr(self, name)
            for cls in type(self).__mro__
            for name in cls.__dict__.get("__slots__", ())
            if hasattr(self, name)
        }
        return (getattr(self, "__dict__", None) or None, slots)

    def __setstate__(self, state: object) -> None:
        """Unpickled or copied: the fields set as `__init__` sets them (by default, each
        would be assigned, and refused)."""
        parts = state if isinstance(state, tuple) else (state,)
        for part in parts:
            if isinstance(part, dict):
                for name, value in part.items():
                    init_field(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: a {type(self).__name__} is read-only")


class Value(Frozen):
    """A `Frozen` compared, hashed and shown by its fields (its `__slots__`)."""

    __slots__ = ()

    def _names(self) -> tuple[str, ...]:
        names: tuple[str, ...] = self.__slots__
        return names

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._names())

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Value)
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._names())
        return f"{type(self).__name__}({shown})"
