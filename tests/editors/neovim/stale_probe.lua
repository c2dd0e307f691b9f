-- Run with -c once the memory file is loaded: wait for its stale-reference diagnostic,
-- then create and delete the file it names from outside the buffer (no keystroke), and
-- wait (bounded) each time for the diagnostic to follow; write the outcome as JSON, quit.
local buf = vim.api.nvim_get_current_buf()
local target = vim.env.METIS_TARGET
local out = { error = vim.NIL, steps = {} }

local function stale()
  local n = 0
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == "stale-reference" then
      n = n + 1
    end
  end
  return n
end

local function step(name, want, action)
  if out.error ~= vim.NIL then
    return
  end
  if action then
    action()
  end
  if vim.wait(20000, function() return stale() == want end, 20) then
    table.insert(out.steps, name)
  else
    out.error = "timed out after 20 s at '" .. name .. "': " .. stale() .. " stale diagnostics"
  end
end

step("stale on open", 1)
step("fresh once the file exists", 0, function()
  vim.fn.mkdir(vim.fn.fnamemodify(target, ":h"), "p")
  vim.fn.writefile({ "package ratelimit" }, target)
end)
step("stale once it is deleted", 1, function()
  os.remove(target)
end)
out.modified = vim.api.nvim_buf_get_option(buf, "modified")
vim.fn.writefile({ vim.fn.json_encode(out) }, vim.env.METIS_OUT)
vim.cmd("qa!")
