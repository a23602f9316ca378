-- Run by fresh_clone.sh inside a Neovim started with the README's init.lua: the plugin must
-- attach to the buffer, index the project and answer :CodeQAAsk with a citation.
local out = os.getenv('CODEQA_CHECK_RESULT')
local function finish(message)
  local file = io.open(out, 'w')
  file:write(message)
  file:close()
  vim.cmd(message == 'ok' and 'qall!' or 'cquit 1')
end
local watchdog = vim.loop.new_timer()
watchdog:start(150000, 0, vim.schedule_wrap(function() finish('timed out') end))

local ok, err = xpcall(function()
  vim.bo.filetype = 'python' -- as filetype detection would
  vim.cmd('doautocmd FileType')
  local lsp = require('codeqa.lsp')
  local root = vim.fn.getcwd()
  local client
  assert(vim.wait(60000, function()
    client = lsp.client_for_root(root)
    return client ~= nil and client.initialized and (lsp.states[client.id].indexed or 0) >= 1
  end, 100), 'the server did not start and index the project')
  vim.cmd('CodeQAAsk how is the cart total computed?')
  local ui = require('codeqa.ui')
  assert(vim.wait(60000, function() return ui.current and ui.current.done end, 100), 'no answer')
  local cited = false
  for _, c in ipairs(ui.current.citations or {}) do
    cited = cited or (c.path == 'shop/cart.py')
  end
  assert(cited, 'the answer does not cite shop/cart.py: ' .. vim.inspect(ui.current.citations))
end, debug.traceback)
finish(ok and 'ok' or tostring(err))
