"""The floor: the least a pygls server can do for the same job.

On every open/change it computes the document's UTF-8 size and publishes one
diagnostic. No memory server can do this for less, so its figures are the
reference the real server is compared with.
"""

from __future__ import annotations

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("metis-floor", "0")


def _publish(ls: LanguageServer, uri: str, version: int | None) -> None:
    doc = ls.workspace.get_text_document(uri)
    size = len(doc.source.encode("utf-8"))
    diagnostic = types.Diagnostic(
        range=types.Range(types.Position(0, 0), types.Position(0, 1)),
        message=f"{size:,} B",
        severity=types.DiagnosticSeverity.Warning,
        source="floor",
    )
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=[diagnostic])
    )


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    _publish(ls, params.text_document.uri, params.text_document.version)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    _publish(ls, params.text_document.uri, params.text_document.version)


@server.command("floor.noop")
def noop(ls: LanguageServer, *args: object) -> None:
    return None


if __name__ == "__main__":
    server.start_io()
