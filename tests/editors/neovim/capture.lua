-- Loaded with --cmd, before the config: keep the raw LSP diagnostics as they arrive.
_G.metis_raw = {}
local default = vim.lsp.handlers["textDocument/publishDiagnostics"]
vim.lsp.handlers["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
  _G.metis_raw[result.uri] = result.diagnostics
  return default(err, result, ctx, config)
end
