"""End-to-end harness: the real server (`python -m metis_memory lsp`) over stdio,
driven by pytest-lsp's client, on real files under tmp_path.

`MetisClient` records every notification the server sends (diagnostics by URI,
`metis/*` payloads in order) and lets a test wait, with a bounded timeout, until
a condition over them holds: no sleeps. Edits are applied with a position
converter written independently of the server's.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Union

from cattrs import Converter
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCNotification, default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from support.forked_server import ForkedServerConfig, forked_command
from support.lsp_values import file_uri
from support.waits import WAIT_S, Deadline

SERVER_COMMAND = [sys.executable, "-m", "metis_memory", "lsp"]
"""The server as editors start it; `SERVER_CONFIG` forks it from a pre-imported process."""
SERVER_CACHE = Path(tempfile.mkdtemp(prefix="metis-lsp-cache-"))
"""The servers' user cache (proposals): never the developer's own."""
atexit.register(shutil.rmtree, SERVER_CACHE, True)
SERVER_HOME = Path(tempfile.mkdtemp(prefix="metis-lsp-home-"))
"""The servers' home: other agents' files there (~/.claude, ~/.hermes) are the tests' own."""
atexit.register(shutil.rmtree, SERVER_HOME, True)
SERVER_ENV = {
    **os.environ,
    "METIS_MEMORY_CACHE_DIR": str(SERVER_CACHE),
    "HOME": str(SERVER_HOME),
}
METIS_NOTIFICATIONS = (
    "metis/usageChanged",
    "metis/memoryUpdated",
    "metis/memoryEviction",
    "metis/proposalUsage",
    "metis/historyChanged",
    "metis/reviewChanged",
)
CLIENT_COMMANDS = {"clientCommands": ["metis.openConsolidation", "metis.replaceEntryPrompt"]}
"""The initializationOptions of a client that implements both client-side commands (as
the VS Code extension and the Neovim configuration do)."""
"""Upper bound for waits on a loaded machine; a pass normally takes milliseconds."""


class MetisClient(LanguageClient):
    """A pytest-lsp client with recording and bounded waiting."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.notes: dict[str, list[Any]] = {m: [] for m in METIS_NOTIFICATIONS}
        self.registrations: list[types.Registration] = []
        self.live_registrations: dict[str, types.Registration] = {}
        """By id: registered and not unregistered since."""
        """What the server registered dynamically (`client/registerCapability`)."""
        self.registration_gate: asyncio.Event | None = None
        """When set, `client/registerCapability` is answered only once the event is set (a
        slow editor, whose watchers start a while after the server asked)."""
        self.published_versions: dict[str, int | None] = {}
        self.versions_published: dict[str, list[int]] = {}
        """Every buffer version each URI's diagnostics were published for, in order."""
        self._pulse: asyncio.Event | None = None
        self.encoding = "utf-16"
        self.initialize_result: types.InitializeResult | None = None
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.applied_edits: list[types.ApplyWorkspaceEditParams] = []
        """Every `workspace/applyEdit` the server sent (the client accepts each)."""
        self.shown_documents: list[types.ShowDocumentParams] = []
        """Every `window/showDocument` the server sent (the client shows each)."""
        self.lens_refreshes = 0
        """How many `workspace/codeLens/refresh` requests the server sent (answered, as
        VS Code answers them)."""

    # ---- recording -----------------------------------------------------------
    def pulse(self) -> None:
        if self._pulse is not None:
            self._pulse.set()

    async def wait_until(
        self, predicate: Callable[[], bool], what: str, timeout: float = WAIT_S
    ) -> None:
        """Wait until `predicate()` holds, re-checking after each notification."""
        if self._pulse is None:
            self._pulse = asyncio.Event()
        deadline = Deadline(timeout, what)
        while True:
            self._pulse.clear()
            if predicate():
                return
            remaining = deadline.remaining()
            if remaining <= 0:
                codes = {u: [d.code for d in ds] for u, ds in self.diagnostics.items()}
                raise deadline.expired(f"diagnostics: {codes}")
            try:
                await asyncio.wait_for(self._pulse.wait(), remaining)
            except asyncio.TimeoutError:
                continue

    def codes(self, path: Path) -> list[str]:
        return sorted(str(d.code) for d in self.diagnostics.get(file_uri(path), []))

    def diagnostic(self, path: Path, code: str) -> types.Diagnostic:
        found = [d for d in self.diagnostics.get(file_uri(path), []) if d.code == code]
        assert len(found) == 1, f"expected one {code} on {path.name}, got {found}"
        return found[0]

    async def wait_for_codes(
        self, path: Path, codes: Sequence[str], timeout: float = WAIT_S
    ) -> None:
        wanted = sorted(codes)
        await self.wait_until(
            lambda: self.codes(path) == wanted, f"{wanted} on {path}", timeout=timeout
        )

    async def wait_for_note(
        self, method: str, predicate: Callable[[Any], bool], timeout: float = WAIT_S
    ) -> Any:
        found: list[Any] = []

        def check() -> bool:
            found[:] = [p for p in self.notes[method] if predicate(p)]
            return bool(found)

        await self.wait_until(check, f"a matching {method}", timeout=timeout)
        return found[-1]

    # ---- session ---------------------------------------------------------------
    async def start_session(
        self,
        folders: Sequence[Path],
        *,
        client: str = "visual-studio-code",
        capabilities: types.ClientCapabilities | None = None,
        options: Any = None,
    ) -> types.InitializeResult:
        """Initialize as `client` (a capability set pytest-lsp ships), or with `capabilities`,
        sending `options` as initializationOptions."""
        capabilities = capabilities or client_capabilities(client)
        result = await self.initialize_session(
            types.InitializeParams(
                capabilities=capabilities,
                initialization_options=options,
                root_uri=file_uri(folders[0]) if folders else None,
                workspace_folders=[
                    types.WorkspaceFolder(uri=file_uri(f), name=f.name) for f in folders
                ],
            )
        )
        self.initialize_result = result
        self.encoding = str(result.capabilities.position_encoding or "utf-16")
        return result

    def open(self, path: Path, text: str | None = None) -> str:
        uri = file_uri(path)
        if text is None:
            text = path.read_text(encoding="utf-8") if path.exists() else ""
        self.texts[uri] = text
        self.versions[uri] = 1
        self.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=text)
            )
        )
        return uri

    def replace_all(self, path: Path, text: str) -> None:
        """Type: replace the whole buffer (a ranged change, as editors send)."""
        uri = file_uri(path)
        old = self.texts[uri]
        end = position_of(old, len(old), self.encoding)
        self.edit(path, [types.TextEdit(types.Range(types.Position(0, 0), end), text)])

    def edit(self, path: Path, edits: Sequence[types.TextEdit]) -> None:
        uri = file_uri(path)
        self.versions[uri] += 1
        self.texts[uri] = apply_text_edits(self.texts[uri], edits, self.encoding)
        changes: list[types.TextDocumentContentChangeEvent] = [
            types.TextDocumentContentChangePartial(range=e.range, text=e.new_text)
            for e in sorted(edits, key=lambda e: _key(e.range.start), reverse=True)
        ]
        self.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                changes,
            )
        )

    def save(self, path: Path) -> None:
        """Write the buffer to disk and tell the server, as an editor's save does."""
        uri = file_uri(path)
        path.write_text(self.texts[uri], encoding="utf-8")
        self.text_document_did_save(
            types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
        )

    def close(self, path: Path) -> None:
        uri = file_uri(path)
        self.texts.pop(uri, None)
        self.text_document_did_close(
            types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
        )

    async def command(self, name: str, *arguments: Any) -> Any:
        return await asyncio.wait_for(
            self.workspace_execute_command_async(
                types.ExecuteCommandParams(command=name, arguments=list(arguments))
            ),
            WAIT_S,
        )

    async def command_error(self, name: str, *arguments: Any) -> JsonRpcException:
        try:
            result = await self.command(name, *arguments)
        except JsonRpcException as exc:
            return exc
        raise AssertionError(f"{name} succeeded with {result!r}; expected an error")

    async def actions(
        self, path: Path, start: tuple[int, int], end: tuple[int, int] | None = None
    ) -> list[types.CodeAction]:
        uri = file_uri(path)
        end = end or start
        rng = types.Range(types.Position(*start), types.Position(*end))
        result = await asyncio.wait_for(
            self.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=rng,
                    context=types.CodeActionContext(
                        diagnostics=list(self.diagnostics.get(uri, []))
                    ),
                )
            ),
            WAIT_S,
        )
        return [a for a in result or [] if isinstance(a, types.CodeAction)]


async def lenses(client: MetisClient, path: Path) -> list[types.CodeLens]:
    result = await asyncio.wait_for(
        client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=file_uri(path)))
        ),
        WAIT_S,
    )
    return list(result or [])


async def hover(client: MetisClient, path: Path, line: int, character: int) -> types.Hover | None:
    return await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=file_uri(path)),
                position=types.Position(line, character),
            )
        ),
        WAIT_S,
    )


def _key(p: types.Position) -> tuple[int, int]:
    return (p.line, p.character)


# ---- an independent position converter, for applying edits in tests -----------------
def _units(ch: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(ch.encode("utf-8"))
    if encoding == "utf-32":
        return 1
    return len(ch.encode("utf-16-le")) // 2


def _line_starts(text: str) -> list[int]:
    starts = [0]
    i = 0
    while i < len(text):
        if text[i] == "\r" and i + 1 < len(text) and text[i + 1] == "\n":
            starts.append(i + 2)
            i += 2
            continue
        if text[i] in "\r\n":
            starts.append(i + 1)
        i += 1
    return starts


def index_of(text: str, pos: types.Position, encoding: str) -> int:
    starts = _line_starts(text)
    if pos.line >= len(starts):
        return len(text)
    i = starts[pos.line]
    units = 0
    while units < pos.character and i < len(text) and text[i] not in "\r\n":
        units += _units(text[i], encoding)
        i += 1
    assert units == pos.character, f"position {pos} is not on a character boundary"
    return i


def position_of(text: str, index: int, encoding: str) -> types.Position:
    starts = _line_starts(text)
    line = max(n for n, s in enumerate(starts) if s <= index)
    chars = sum(_units(c, encoding) for c in text[starts[line] : index])
    return types.Position(line, chars)


def apply_text_edits(text: str, edits: Sequence[types.TextEdit], encoding: str) -> str:
    spans = [
        (index_of(text, e.range.start, encoding), index_of(text, e.range.end, encoding), e.new_text)
        for e in edits
    ]
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def apply_workspace_edit(
    edit: types.WorkspaceEdit, read: Callable[[str], str], encoding: str
) -> dict[str, str]:
    """The new text of every document the edit touches (`read(uri)` gives the old)."""
    result: dict[str, str] = {}
    if edit.changes:
        for uri, edits in edit.changes.items():
            result[uri] = apply_text_edits(read(uri), edits, encoding)
    for change in edit.document_changes or []:
        if isinstance(change, types.CreateFile):
            result.setdefault(change.uri, "")
        elif isinstance(change, types.TextDocumentEdit):
            uri = change.text_document.uri
            old = result[uri] if uri in result else read(uri)
            plain = [e for e in change.edits if isinstance(e, types.TextEdit)]
            result[uri] = apply_text_edits(old, plain, encoding)
        else:  # pragma: no cover
            raise AssertionError(f"unexpected resource operation {change!r}")
    return result


# ---- the fixture -------------------------------------------------------------------------
def _converter() -> Any:
    """pygls turns a notification's params into namedtuples (renaming keys such as
    "MEMORY.md"); keep `metis/*` payloads as the plain JSON the server sent."""
    # pygls leaves default_converter unannotated; it returns a cattrs Converter.
    converter: Converter = default_converter()  # type: ignore[no-untyped-call]
    converter.register_structure_hook(JsonRPCNotification, lambda obj, cls: cls(**obj))

    # lsprotocol takes any object with a "command" key for a Command, so a CodeAction
    # that runs a command would arrive as a bare Command; tell them apart by its type.
    def command_or_action(obj: Any, _: type) -> types.Command | types.CodeAction:
        if isinstance(obj.get("command"), str):
            return converter.structure(obj, types.Command)
        return converter.structure(obj, types.CodeAction)

    # typing.Union, not `|`: the hook table is keyed by the very type lsprotocol used.
    command_or_action_type = Union[types.Command, types.CodeAction]  # noqa: UP007
    converter.register_structure_hook(command_or_action_type, command_or_action)
    return converter


def make_client() -> MetisClient:
    client = MetisClient(converter_factory=_converter)
    features = dict(DEFAULT_CLIENT_FEATURES)

    def publish(ls: MetisClient, params: types.PublishDiagnosticsParams) -> None:
        ls.diagnostics[params.uri] = params.diagnostics
        ls.published_versions[params.uri] = params.version
        if params.version is not None:
            ls.versions_published.setdefault(params.uri, []).append(params.version)
        ls.pulse()

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish

    def apply_edit(
        ls: MetisClient, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        ls.applied_edits.append(params)
        ls.pulse()
        return types.ApplyWorkspaceEditResult(applied=True)

    features[types.WORKSPACE_APPLY_EDIT] = apply_edit

    async def register_capability(ls: MetisClient, params: types.RegistrationParams) -> None:
        if ls.registration_gate is not None:
            await ls.registration_gate.wait()
        ls.registrations.extend(params.registrations)
        ls.live_registrations.update((r.id, r) for r in params.registrations)
        ls.pulse()

    features[types.CLIENT_REGISTER_CAPABILITY] = register_capability

    def unregister_capability(ls: MetisClient, params: types.UnregistrationParams) -> None:
        for gone in params.unregisterations:
            ls.live_registrations.pop(gone.id, None)
        ls.pulse()

    features[types.CLIENT_UNREGISTER_CAPABILITY] = unregister_capability

    def show_document(
        ls: MetisClient, params: types.ShowDocumentParams
    ) -> types.ShowDocumentResult:
        ls.shown_documents.append(params)
        ls.pulse()
        return types.ShowDocumentResult(success=True)

    features[types.WINDOW_SHOW_DOCUMENT] = show_document

    def refresh_lenses(ls: MetisClient, _params: None) -> None:
        ls.lens_refreshes += 1
        ls.pulse()

    features[types.WORKSPACE_CODE_LENS_REFRESH] = refresh_lenses
    register_lsp_features(client, features)
    for method in METIS_NOTIFICATIONS:

        def record(ls: MetisClient, params: Any, method: str = method) -> None:
            ls.notes[method].append(params)
            ls.pulse()

        client.feature(method)(record)
    return client


def forked_server(*args: str) -> list[str]:
    """`python -m metis_memory ARGS` forked from the LSP tests' zygote (the MCP tests' servers)."""
    return forked_command(list(args), SERVER_ENV)


SERVER_CONFIG = ForkedServerConfig(
    server_command=SERVER_COMMAND, client_factory=make_client, server_env=SERVER_ENV
)
"""The tests' server: forked (support/forked_server.py), with the tests' cache and home."""


async def end_session(client: MetisClient) -> None:
    """A `client` fixture's teardown: shut the server down unless the test already did."""
    if client.stopped:
        return  # the test ended the server itself
    if client.capabilities is None and client.error is None:
        # The test failed before initializing: `exit` still ends the server, so
        # pytest-lsp's stop() (which waits for the process) does not hang.
        client.exit(None)
        return
    await client.shutdown_session()
