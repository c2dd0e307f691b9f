-- Metis Memory for Neovim (0.7 or newer): the language server on .metis/MEMORY.md and
-- .metis/USER.md, and on other agents' files (CLAUDE.md, AGENTS.md, rules) for their budgets,
-- one client per workspace. Put this file in your config and `require` or
-- `luafile` it. The command defaults to `metis-memory lsp` (pipx install metis-agent-memory);
-- set vim.g.metis_memory_cmd to override it, e.g. { "/path/to/python", "-m", "metis_memory", "lsp" }.
local clients = {}

local function workspace_of(file)
  local path = vim.fn.fnamemodify(file, ":p")
  if path:match("/%.metis/[^/]+$") then
    return vim.fn.fnamemodify(path, ":h:h") -- <workspace>/.metis/MEMORY.md -> <workspace>
  end
  -- Another agent's file: its git root (where Codex's AGENTS.md chain starts), else its folder.
  local dir = vim.fn.fnamemodify(path, ":h")
  local git = vim.fn.finddir(".git", dir .. ";")
  if git == "" then
    git = vim.fn.findfile(".git", dir .. ";")
  end
  return git ~= "" and vim.fn.fnamemodify(git, ":p:h:h") or dir
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
  pattern = {
    "*/.metis/MEMORY.md", "*/.metis/USER.md", "*/.metis/budgets.toml",
    "*/CLAUDE.md", "*/CLAUDE.local.md", "*/.claude/rules/*.md", "*/AGENTS.md", "*/AGENTS.override.md",
    "*/.cursor/rules/*.mdc", "*/.cursorrules", "*/.windsurf/rules/*.md", "*/.windsurfrules",
    "*/.github/instructions/*.instructions.md",
  },
  callback = attach,
})
