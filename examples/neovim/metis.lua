-- Metis Memory for Neovim (0.7 or newer): the language server on .metis/MEMORY.md and
-- .metis/USER.md, one client per workspace. Put this file in your config and `require` or
-- `luafile` it. The command defaults to `metis-memory lsp` (pip install metis-memory);
-- set vim.g.metis_memory_cmd to override it, e.g. { "/path/to/python", "-m", "metis_memory", "lsp" }.
local clients = {}

local function workspace_of(file)
  -- <workspace>/.metis/MEMORY.md -> <workspace>
  return vim.fn.fnamemodify(file, ":p:h:h")
end

local function attach(args)
  local root = workspace_of(vim.api.nvim_buf_get_name(args.buf))
  local id = clients[root]
  if id == nil or vim.lsp.get_client_by_id(id) == nil then
    id = vim.lsp.start_client({
      name = "metis-memory",
      cmd = vim.g.metis_memory_cmd or { "metis-memory", "lsp" },
      root_dir = root,
      workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ":t") } },
    })
    clients[root] = id
  end
  if id ~= nil then
    vim.lsp.buf_attach_client(args.buf, id)
  end
end

vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
  group = vim.api.nvim_create_augroup("metis-memory", { clear = true }),
  pattern = { "*/.metis/MEMORY.md", "*/.metis/USER.md" },
  callback = attach,
})
