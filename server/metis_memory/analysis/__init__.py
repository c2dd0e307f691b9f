"""Pure analysis of memory-file text: entries, findings, fixes and usage numbers.

Nothing here knows about LSP, files on disk or editors: text goes in, plain data
comes out, with offsets as Python string indices. The language server translates
these into protocol objects; tests exercise them directly. Every function is
linear in the size of the text, so a 1 MiB memory file stays fast.
"""
