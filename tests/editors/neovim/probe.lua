-- Run with -c once the memory file is loaded: wait (bounded) for diagnostics, ask for the
-- code actions over the whole buffer, write what Neovim holds as JSON, quit.
local buf = vim.api.nvim_get_current_buf()
local uri = vim.uri_from_bufnr(buf)
local want = tonumber(vim.env.METIS_EXPECT_DIAGNOSTICS)
local out = { error = vim.NIL }
local ok = vim.wait(20000, function()
  return #vim.diagnostic.get(buf) >= want and _G.metis_raw[uri] ~= nil
end, 20)
if not ok then
  out.error = "timed out after 20 s waiting for " .. want .. " diagnostics; got " .. #vim.diagnostic.get(buf)
else
  out.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(out.diagnostics, {
      code = d.code, lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
      severity = d.severity, source = d.source, message = d.message,
    })
  end
  out.raw = _G.metis_raw[uri]
  local last = vim.api.nvim_buf_line_count(buf)
  local params = {
    textDocument = { uri = uri },
    range = { start = { line = 0, character = 0 }, ["end"] = { line = last, character = 0 } },
    context = { diagnostics = out.raw },
  }
  local responses = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", params, 20000)
  out.actions = {}
  for _, response in pairs(responses or {}) do
    for _, action in ipairs(response.result or {}) do
      table.insert(out.actions, action.title)
    end
  end
end
vim.fn.writefile({ vim.fn.json_encode(out) }, vim.env.METIS_OUT)
vim.cmd("qa!")
