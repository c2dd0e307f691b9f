"""`metis-memory hook --host NAME`: the memory as context for an agent host's lifecycle hook.

It runs before every prompt the user sends, so it must never get in the way: whatever
goes wrong (bad input, no workspace, an unreadable file, a bug) becomes one line on stderr
and exit 0 with the host's no-op answer, and stdout holds only what the host's contract
allows. The stale-reference check, the one part whose cost the workspace decides, runs
against a deadline: past it the memory is sent without the check's note.

For a session the host names, one hook at a time (`SessionLog.locked`) reads the memory
and the session's record, decides, answers, and only then records what the session has:
a hook killed before its answer was written (a host's timeout) leaves the record as it
was, so the next prompt sends the memory rather than answering "unchanged" for a session
that never got it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping

from ..store.cache import UnsafeCacheDir
from ..store.errors import MemoryStoreError
from ..store.memory_store import MemoryStore
from ..store.values import Frozen, init_field
from .adapters import HookInput, HostContract, contract_for
from .context import MemoryContext, read_context, stale_note_for
from .hook_shared import MAX_INPUT_BYTES, HookProblem, find_workspace, middle_cut
from .sessions import SessionLog, decide, session_workspace

TYPE_CHECKING = False
if TYPE_CHECKING:  # (`typing` and `dataclasses` are not imported at run time: each costs a
    # hook process more than its work; see `store/values.py`)
    from typing import Any, TypeVar

    T = TypeVar("T")

STALE_BUDGET_S = 1.0
"""How long the hook waits for the stale-reference check. It takes ~40 ms on an ordinary
workspace (imports included), so a second is ample on a cold or busy machine; a hostile
repository (a huge `.gitignore`, a hung network mount) costs each prompt at most this,
far under the hosts' hook timeouts (10 s and up)."""
STALE_BUDGET_ENV = "METIS_MEMORY_HOOK_STALE_BUDGET_MS"
"""Overrides STALE_BUDGET_S, in milliseconds (tests; a slow disk). 0 skips the check."""

NOT_CHECKED_NOTE = (
    "Paths and targets named in memory were not checked against this workspace this time; "
    "some may no longer exist."
)
"""In place of the stale note when the check did not finish: without it, the model would
take the missing note for "every reference holds"."""

MAX_WARNING_CHARS = 1000


LOCK_SLACK_S = 2.0
"""How much longer than the stale budget a hook waits for another hook of the same session
to answer: the holder reads, redacts and prints within milliseconds besides its check."""


class HookOutcome(Frozen):
    """What the hook prints on stdout, the warning for stderr, and whether `stdout` was
    already handed to the `deliver` of `run_hook` (`delivered`: print nothing more)."""

    __slots__ = ("delivered", "stdout", "warning")
    stdout: str
    warning: str | None
    delivered: bool

    def __init__(self, stdout: str, warning: str | None = None, delivered: bool = False) -> None:
        init_field(self, "stdout", stdout)
        init_field(self, "warning", warning)
        init_field(self, "delivered", delivered)

    def __repr__(self) -> str:
        return f"HookOutcome({self.stdout!r}, {self.warning!r}, delivered={self.delivered})"


Deliver = Callable[[str], bool]
"""Writes the host's answer; True once it is written (flushed), False when it could not be
(the host stopped reading): the session is then not recorded as having the memory."""


def run_hook(
    host: HostContract,
    raw_input: bytes,
    *,
    workspace: str | None = None,
    env: Mapping[str, str] | None = None,
    sessions: SessionLog | None = None,
    cwd: str | None = None,
    deliver: Deliver | None = None,
) -> HookOutcome:
    """What to print for one hook call. Never raises (short of the interpreter's own exit):
    a host that gets no answer, or a traceback, may drop the user's prompt.

    With `deliver`, an answer that carries the memory is written through it before the
    session is recorded as having it (`HookOutcome.delivered`); without, it is recorded
    as soon as the answer is made, and the caller prints `stdout`. The user memory is the
    process's (`MemoryStore.user_memory`, from `os.environ` whatever `env` says), as the
    quick look in `hook_command` reads it: both must digest the same files."""
    env = os.environ if env is None else env
    named, host = host, contract_for(host, env)
    event = ""
    given: list[str] = []  # the answer with the memory, once handed to `deliver`

    def send(text: str) -> bool:
        stdout = host.render(event, text)
        given.append(stdout)
        return True if deliver is None else deliver(stdout)

    try:
        data = _parse(host, raw_input)
        host = contract_for(named, env, data)
        hook = host.parse(data)
        event = hook.event
        if event not in host.events:
            known = ", ".join(sorted(host.events))
            raise HookProblem(
                f"{host.title} sent event {event or '(none)'!r}, which this hook does not "
                f"handle (it handles {known}); nothing was added to the context"
            )
        folder, by_name = find_workspace(host, hook, workspace=workspace, env=env, cwd=cwd)
        budget = stale_budget(env)
        warning = _serve(host, hook, folder, not by_name, sessions or SessionLog(), budget, send)
        problem = warning
    except HookProblem as exc:
        problem = str(exc)
    except MemoryStoreError as exc:
        problem = f"{exc} (no memory was added to the context)"
    except Exception as exc:  # a bug, or a limit we did not foresee: never the user's turn
        problem = (
            f"unexpected error, no context added: {exc!r}. This is a bug in Metis Memory; "
            "please report it with this line"
        )
    if given:  # the memory's answer, made (and delivered) before any failure after it
        return HookOutcome(given[0], _one_line(problem), delivered=deliver is not None)
    # The host's "nothing to add" answer: `{}` for Gemini, `{"cancel":false}` for Cline.
    return HookOutcome(host.render(event, None), _one_line(problem))


def _one_line(text: str | None) -> str | None:
    """`text` as one stderr line: control characters escaped (a path or an exception can
    hold a newline), and cut in the middle past MAX_WARNING_CHARS (the end says what to do).
    """
    if text is None:
        return None
    line = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return middle_cut(line, MAX_WARNING_CHARS)


def stale_budget(env: Mapping[str, str]) -> float:
    """STALE_BUDGET_S, or `$METIS_MEMORY_HOOK_STALE_BUDGET_MS` when it is a whole number."""
    value = env.get(STALE_BUDGET_ENV, "").strip()
    if value.isdecimal() and len(value) <= 9:
        return int(value) / 1000
    return STALE_BUDGET_S


def _parse(host: HostContract, raw: bytes) -> dict[str, Any]:
    if len(raw) > MAX_INPUT_BYTES:
        raise HookProblem(
            f"the hook input is {len(raw):,} bytes, over the {MAX_INPUT_BYTES:,}-byte limit; "
            "nothing was added to the context"
        )
    try:
        data: Any = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise HookProblem(
            f"the hook input from {host.title} is not JSON ({exc}); is this command "
            f"configured as the hook of {host.title}? Nothing was added to the context"
        ) from exc
    except RecursionError:
        raise HookProblem(
            f"the hook input from {host.title} ({len(raw):,} bytes) nests arrays or objects "
            "too deeply to read, which no host sends; nothing was added to the context"
        ) from None
    except MemoryError:
        raise HookProblem(
            f"the hook input from {host.title} ({len(raw):,} bytes) needs more memory to "
            "read than this process has; nothing was added to the context"
        ) from None
    if not isinstance(data, dict):
        raise HookProblem(
            f"the hook input from {host.title} is a JSON {type(data).__name__}, not an "
            "object; nothing was added to the context"
        )
    return data


def _serve(
    host: HostContract,
    hook: HookInput,
    folder: str,
    discovered: bool,
    sessions: SessionLog,
    budget: float,
    send: Callable[[str], bool],
) -> str | None:
    """Send the memory through `send` when the session should get it; a warning for stderr.

    A session the host names is served under its lock, from reading the memory to
    recording what it got: a second hook file of the same prompt (Copilot CLI runs two)
    waits, then reads the memory and the record as the first left them, so that the
    record always names the newest memory sent. The record is written only once the
    answer is (`send` returned True)."""
    store = MemoryStore(folder, discovered=discovered)
    start = hook.event in host.session_start
    warnings: list[str] = []
    if hook.session is None:
        memory = read_context(store, stale=False)
        if start and host.start_sends and not memory.empty:
            send(_text(store, memory, False, host, budget, warnings))
        return "; ".join(warnings) or None
    session, workspace = hook.session, session_workspace(folder)
    with sessions.locked(workspace, session, wait_s=budget + LOCK_SLACK_S):
        memory = read_context(store, stale=False)
        record = sessions.read(workspace, session)
        if start and not host.start_sends:
            if hook.source == "clear":  # the context is gone: the next prompt sends it all
                _recorded(lambda: sessions.forget(workspace, session), sessions, warnings)
            return "; ".join(warnings) or None
        sends, new = decide(record, memory.digest, start=start, stamp=hook.stamp)
        if sends and not memory.empty:
            changed = not start and record is not None
            if not send(_text(store, memory, changed, host, budget, warnings)):
                return "; ".join(warnings) or None  # not written: not recorded either
        if new is not None:
            _recorded(lambda: sessions.write(workspace, session, new), sessions, warnings)
    return "; ".join(warnings) or None


def _text(
    store: MemoryStore,
    memory: MemoryContext,
    changed: bool,
    host: HostContract,
    budget: float,
    warnings: list[str],
) -> str:
    """The injection, with the stale check's note (or the note that it did not finish)."""
    memory, stale_warning = with_stale_note(store, memory, budget)
    if stale_warning:
        warnings.append(stale_warning)
    if memory.user_memory_problem is not None:  # (said to the model too, in its section)
        warnings.append(
            "your user memory was not read, and the rest of the memory was sent without it: "
            f"{memory.user_memory_problem}"
        )
    return memory.text(changed=changed, delimiters=host.delimiters)


def _recorded(write: Callable[[], None], sessions: SessionLog, warnings: list[str]) -> None:
    try:
        write()
    except UnsafeCacheDir as exc:
        warnings.append(f"{exc}; the memory was sent, and will be sent again next prompt")
    except OSError as exc:
        warnings.append(
            f"could not record what this session received in {sessions.directory} "
            f"({exc.strerror or exc}); the memory will be sent again next prompt. Set "
            "METIS_MEMORY_CACHE_DIR to a writable directory"
        )


# ---- the stale check, against a deadline -----------------------------------------------------
def with_stale_note(
    store: MemoryStore, memory: MemoryContext, budget: float
) -> tuple[MemoryContext, str | None]:
    """`memory` with its stale note; when the check failed or did not finish within
    `budget` seconds, with NOT_CHECKED_NOTE instead, and a warning for stderr."""
    if not any("`" in t or "](" in t for t in memory.on_disk.values()):
        return memory, None  # no code span and no link: no reference, no thread
    finished, result = within(budget, lambda: stale_note_for(store, memory.on_disk))
    if finished and not isinstance(result, BaseException):
        return memory.with_stale(result), None
    if finished:
        why = f"failed ({result!r})"
    elif budget > 0:
        why = f"did not finish within its {budget * 1000:,.0f} ms budget"
    else:
        why = f"was not run ({STALE_BUDGET_ENV} is 0)"
    import shlex  # (here: only a late check pays for it)

    warning = (
        f"the stale-reference check of {store.workspace_path} {why}; the memory was sent "
        "without its note. Run `metis-memory check --stale "
        f"{shlex.quote(str(store.workspace_path))}` to see them"
        f"{'' if finished else f' ({STALE_BUDGET_ENV} sets the budget)'}"
    )
    return memory.with_stale(NOT_CHECKED_NOTE), warning


def within(seconds: float, work: Callable[[], T]) -> tuple[bool, T | BaseException | None]:
    """(True, what `work` returned or raised) when it finished within `seconds`, else
    (False, None). It runs in a daemon thread, left behind when late: the interpreter does
    not wait for daemon threads at exit, so a check stuck in a hung `lstat` ends with the
    process instead of holding the user's prompt. (A C call that holds the GIL could still
    delay the answer: the check's regexes and globs on repository input are bounded for
    that reason, `globs.py` and `workspace_facts.py`.)"""
    if seconds <= 0:
        return False, None
    import threading  # (here: a memory without references never pays for it)

    box: list[T | BaseException] = []
    done = threading.Event()

    def run() -> None:
        try:
            box.append(work())
        except BaseException as exc:  # handed to the caller, which reports it
            box.append(exc)
        finally:
            done.set()

    try:
        threading.Thread(target=run, name="metis-hook-deadline", daemon=True).start()
    except RuntimeError as exc:  # no thread to be had (a process limit)
        return True, exc
    if not done.wait(seconds):
        return False, None
    return True, box[0]
