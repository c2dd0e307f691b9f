"""The language server (pygls 2.x): protocol glue over the store and the analysis.

`server` wires the protocol; each feature lives in its own module and stays thin:
handlers translate between LSP and the domain (`metis_memory.analysis`, the store,
the tool dispatcher), which decide. The server never opens `.metis/` files itself:
closed files are read through `MemoryStore.snapshot`, writes go through the tool
dispatcher, and quick fixes are workspace edits the editor applies.
"""
