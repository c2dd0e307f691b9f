"""Usage where the eye is: a code lens on the first line and a hover on the title
(the first non-blank line), both for the buffer as typed; and on each entry, a hover
saying who added it (the write log's blame)."""

from __future__ import annotations

import re

from lsprotocol import types

from ...analysis.entries import LineKind, Outline
from ..context import ServerContext
from ..usage_text import hover_markdown, hover_plaintext, lens_title
from . import budget_docs, history
from .budget_docs import BudgetDocuments


def title_line(outline: Outline) -> int:
    """The file's title: its first non-blank line (line 0 for an empty file)."""
    for line, kind in enumerate(outline.kinds):
        if kind is not LineKind.BLANK:
            return line
    return 0


async def hover(ls: ServerContext, params: types.HoverParams) -> types.Hover | None:
    """The usage on the title; on an entry, who added it (`history.blame_hover`)."""
    uri = params.text_document.uri
    analysis = ls.analysis_of_open(uri)
    if analysis is None:
        return budget_hover(ls, params)
    outline = analysis.outline
    line = params.position.line
    blamed = await history.blame_hover(ls, uri, outline, line)
    markdown = hover_kind(ls) is types.MarkupKind.Markdown
    if line == title_line(outline):
        user = analysis.view.user_memory
        usage = (
            hover_markdown(analysis.usage, user_memory=user)
            if markdown
            else hover_plaintext(analysis.usage, user_memory=user)
        )
        if blamed is not None:
            usage += "\n\n" + (markdown_escaped(blamed) if markdown else blamed)
        start, end = outline.line_starts[line], outline.line_ends[line]
    elif blamed is not None:
        usage = markdown_escaped(blamed) if markdown else blamed
        entry = outline.entries[outline.line_entry[line]]
        start, end = entry.start, entry.end
    else:
        return None
    kind = types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText
    return types.Hover(contents=types.MarkupContent(kind, usage), range=analysis.range(start, end))


def markdown_escaped(text: str) -> str:
    """`text` shown as written in Markdown: an agent names itself (an MCP client's name), and
    a name like `[x](https://…)` must not become a link in the editor's hover."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\g<0>", text)


_MARKDOWN_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")
"""ASCII punctuation, every character of which CommonMark lets a backslash escape."""


def hover_kind(ls: ServerContext) -> types.MarkupKind:
    """The client's most preferred format of the two the server writes. A client that
    declares none gets plain text, which every client can show."""
    return ls.capabilities.hover_kind


def budget_hover(ls: ServerContext, params: types.HoverParams) -> types.Hover | None:
    """Another agent's file: each budget's usage, on its first line."""
    uses = ls.state(BudgetDocuments).uses.get(params.text_document.uri)
    if not uses or params.position.line != 0:
        return None
    if hover_kind(ls) is types.MarkupKind.Markdown:
        contents = types.MarkupContent(types.MarkupKind.Markdown, budget_docs.hover_markdown(uses))
    else:
        contents = types.MarkupContent(
            types.MarkupKind.PlainText, budget_docs.hover_plaintext(uses)
        )
    return types.Hover(contents=contents)


def code_lens(ls: ServerContext, params: types.CodeLensParams) -> list[types.CodeLens] | None:
    analysis = ls.analysis_of_open(params.text_document.uri)
    if analysis is None:
        uses = ls.state(BudgetDocuments).uses.get(params.text_document.uri)
        if not uses:
            return None
        from ...budgets.evaluate import listed

        # The budgets worth a line (a far one beside a closer one is only in the hover).
        top = types.Range(types.Position(0, 0), types.Position(0, 0))
        return [
            types.CodeLens(range=top, command=types.Command(u.summary(), ""))
            for u, row in zip(uses, listed(uses), strict=True)
            if row
        ]
    # An empty command id: clients show the title as plain text (nothing to click).
    title = lens_title(analysis.usage, user_memory=analysis.view.user_memory)
    command = types.Command(title=title, command="")
    return [
        types.CodeLens(
            range=types.Range(types.Position(0, 0), types.Position(0, 0)), command=command
        )
    ]


def register(server: ServerContext) -> None:
    server.feature(types.TEXT_DOCUMENT_HOVER)(hover)
    server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))(
        code_lens
    )
