"""The language server's features: each module registers its own handlers and keeps its
own state, and sees the server only as `lsp.context.ServerContext` (never `lsp.server`)."""
