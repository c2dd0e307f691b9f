-- Drives the docs' Neovim snippet headlessly: open the memory file, wait for the
-- server's diagnostics, list the code actions, run "Replace entry…" (with the prompt
-- answered) and record everything as JSON in $METIS_PROBE_OUT.
local out = os.getenv("METIS_PROBE_OUT")
local result = { errors = {} }

local function finish()
  local fh = assert(io.open(out, "w"))
  fh:write(vim.json.encode(result))
  fh:close()
  vim.cmd("qall!")
end

local ok, err = pcall(function()
  vim.cmd.edit(os.getenv("METIS_PROBE_FILE"))
  local buf = vim.api.nvim_get_current_buf()
  assert(vim.wait(20000, function()
    return #vim.diagnostic.get(buf) >= 2
  end, 20), "no diagnostics from metis-memory")
  result.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(result.diagnostics, { code = d.code, source = d.source, lnum = d.lnum,
      col = d.col, end_lnum = d.end_lnum, end_col = d.end_col })
  end
  local client = vim.lsp.get_clients({ bufnr = buf, name = "metis-memory" })[1]
  result.encoding = client.offset_encoding
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = 3, character = 0 }, ["end"] = { line = 3, character = 0 } },
    context = { diagnostics = {} },
  }
  local responses = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", params, 10000)
  local actions = responses[client.id].result
  result.titles = {}
  local replace
  for _, action in ipairs(actions) do
    table.insert(result.titles, action.title)
    if action.title == "Replace entry “prefers tabs”…" then
      replace = action
    end
  end
  vim.ui.input = function(opts, on_confirm)
    result.prompt_default = opts.default
    on_confirm("- prefers spaces")
  end
  client:exec_cmd(replace.command, { bufnr = buf })
  assert(vim.wait(10000, function()
    return vim.api.nvim_buf_get_lines(buf, 3, 4, false)[1] == "- prefers spaces"
  end, 20), "the buffer was not reloaded with the replacement")
  result.line3 = vim.api.nvim_buf_get_lines(buf, 3, 4, false)[1]
  -- "Consolidate MEMORY.md…": the tidy proposal replaces the buffer (unsaved).
  local workspace = vim.uri_from_fname(vim.fs.dirname(vim.fs.dirname(vim.api.nvim_buf_get_name(buf))))
  client:exec_cmd({
    title = "Consolidate MEMORY.md…",
    command = "metis.openConsolidation",
    arguments = { { file = "MEMORY.md", workspace = workspace } },
  }, { bufnr = buf })
  assert(vim.wait(10000, function()
    return vim.api.nvim_buf_line_count(buf) == 4
  end, 20), "the tidy proposal did not reach the buffer")
  result.tidied = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end)
if not ok then
  table.insert(result.errors, tostring(err))
end
finish()
