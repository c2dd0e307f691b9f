"""What the test suites share: one workspace fixture (`tests/conftest.py`), one way to
write a memory file behind the store's back (`memory_files`), one LSP session harness
(`lsp_session`) and one raw JSON-RPC client for hostile input (`rpc_client`)."""
