-- The server is not installed: one clear error, no Lua traces, and :checkhealth says why.
local H = dofile(os.getenv('CODEQA_PLUGIN_DIR') .. '/tests/helpers.lua')

H.run(function()
  local codeqa = require('codeqa')
  local missing = H.tmp .. '/nowhere/codeqa-lsp'
  local root = H.workspace('missing', {
    ['pyproject.toml'] = '[project]\nname = "missing"',
    ['a.py'] = 'def a():\n    return 1',
    ['b.py'] = 'def b():\n    return 2',
  })
  vim.cmd('cd ' .. vim.fn.fnameescape(root))

  H.test('opening project files reports the missing server exactly once', function()
    H.ok(codeqa.setup({ cmd = { missing }, settings = { embedder = 'hash' } }))
    H.clear_notifications()
    H.edit(root .. '/a.py', 'python')
    H.edit(root .. '/b.py', 'python')
    local errors = H.notifications_matching('not found', vim.log.levels.ERROR)
    H.eq(#H.notifications, 1, 'one notification in all')
    H.eq(#errors, 1, 'it is an error about the missing executable')
    H.contains(errors[1].message, "server executable '" .. missing .. "' not found")
    H.contains(errors[1].message, ':checkhealth codeqa')
    H.eq(#require('codeqa.lsp').all_clients(), 0, 'no client was started')
  end)

  H.test('commands report the missing server instead of failing', function()
    for _, command in ipairs({ 'CodeQAAsk where is a defined?', 'CodeQASearch a', 'CodeQAExplain',
      'CodeQAReindex', 'CodeQAStatus' }) do
      H.clear_notifications()
      local ok, err = pcall(vim.cmd, command)
      H.ok(ok, command .. ' raised: ' .. tostring(err))
      H.eq(#H.notifications, 1, command .. ' notifies once')
      H.eq(H.notifications[1].level, vim.log.levels.ERROR)
      H.contains(H.notifications[1].message, 'not found')
      H.eq(#H.floats(), 0, command .. ' opens no window')
    end
    H.eq(vim.v.errmsg, '', 'no Vim error message')
  end)

  H.test('the statusline stays empty', function()
    H.eq(codeqa.status(), '')
  end)

  H.test(':checkhealth codeqa explains that the executable is missing', function()
    vim.cmd('checkhealth codeqa')
    local text = H.buffer_text(0)
    H.contains(text, 'setup() called')
    H.contains(text, "server executable '" .. missing .. "' not found")
    H.contains(text, 'ERROR')
    H.contains(text, "pip install -e '.[local]'")
    vim.cmd('bwipeout!')
  end)
end)
