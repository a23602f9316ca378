-- One server per project root, reused across its buffers; server messages reach vim.notify;
-- files outside any project are left alone; a server that dies is reported, not hidden.
local H = dofile(os.getenv('CODEQA_PLUGIN_DIR') .. '/tests/helpers.lua')

H.run(function()
  local codeqa = require('codeqa')
  local lsp = require('codeqa.lsp')

  local alpha = H.workspace('alpha', {
    ['pyproject.toml'] = '[project]\nname = "alpha"',
    ['alpha/one.py'] = 'def one():\n    return 1\n',
    ['alpha/two.py'] = 'def two():\n    return 2\n',
  })
  local beta = H.workspace('beta', {
    ['package.json'] = '{"name": "beta"}',
    ['src/three.py'] = 'def three():\n    return 3\n',
  })
  local loose = H.workspace('loose', { ['four.py'] = 'def four():\n    return 4\n' })

  local function wait_indexed(client)
    H.wait_for('indexing of ' .. client.config.root_dir, function()
      return (lsp.states[client.id].indexed or 0) >= 1
    end, 60000)
  end

  local first
  local attached = {}

  H.test('a bad server setting is reported through vim.notify as a warning', function()
    -- No indexDir: each root gets its own index under $XDG_CACHE_HOME (a temp dir here).
    H.ok(codeqa.setup({ cmd = { H.server }, settings = { embedder = 'hash', topK = 'many' }, filetypes = { 'python' },
      on_attach = function(client, bufnr)
        table.insert(attached, { client.name, vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':t') })
      end }))
    H.clear_notifications()
    H.edit(alpha .. '/alpha/one.py', 'python')
    first = H.wait_for('the alpha client', function()
      local c = lsp.client_for_root(alpha)
      return c and c.initialized and c
    end)
    local warning = H.wait_for('the settings warning', function()
      return H.notifications_matching('topK', vim.log.levels.WARN)[1]
    end)
    H.contains(warning.message, "'many'")
    H.eq(#H.notifications_matching('must be an object'), 0, 'workspace/configuration got an object')
    wait_indexed(first)
  end)

  H.test('buffers of the same root share one client', function()
    local two = H.edit(alpha .. '/alpha/two.py', 'python')
    H.ok(vim.lsp.buf_is_attached(two, first.id))
    H.eq(#lsp.all_clients(), 1)
    H.eq(attached, { { 'codeqa', 'one.py' }, { 'codeqa', 'two.py' } }, 'on_attach once per buffer')
  end)

  H.test('another root gets its own client', function()
    local three = H.edit(beta .. '/src/three.py', 'python')
    local second = H.wait_for('the beta client', function()
      local c = lsp.client_for_root(beta)
      return c and c.initialized and c
    end)
    H.ok(second.id ~= first.id)
    H.ok(vim.lsp.buf_is_attached(three, second.id))
    H.ok(not vim.lsp.buf_is_attached(three, first.id))
    H.eq(#lsp.all_clients(), 2)
    wait_indexed(second)
    H.eq(codeqa.status(three), 'CodeQA')
  end)

  H.test('searches go to the server of the current buffer', function()
    vim.fn.setqflist({}, 'r')
    vim.cmd('CodeQASearch three')
    local items = H.wait_for('results', function()
      local got = vim.fn.getqflist()
      return #got > 0 and got
    end)
    for _, item in ipairs(items) do
      local name = vim.api.nvim_buf_get_name(item.bufnr)
      H.eq(name:sub(1, #beta), beta, 'only beta files: ' .. name)
    end
    vim.cmd('cclose')
  end)

  H.test('a file outside any project is not attached and nothing is reported', function()
    H.clear_notifications()
    local four = H.edit(loose .. '/four.py', 'python')
    vim.wait(200)
    H.eq(#vim.lsp.buf_get_clients(four), 0)
    H.eq(#H.notifications, 0)
    H.eq(#lsp.all_clients(), 2)
  end)

  H.test('asking outside any project explains where to go, as a warning', function()
    local cwd = vim.fn.getcwd()
    vim.cmd('cd ' .. vim.fn.fnameescape(loose))
    H.clear_notifications()
    local ok, err = pcall(vim.cmd, 'CodeQAAsk what does four return?')
    vim.cmd('cd ' .. vim.fn.fnameescape(cwd))
    H.ok(ok, tostring(err))
    H.eq(#H.notifications, 1)
    H.eq(H.notifications[1].level, vim.log.levels.WARN)
    H.contains(H.notifications[1].message, 'no project found above')
    H.contains(H.notifications[1].message, 'pyproject.toml')
    H.eq(#H.floats(), 0)
  end)

  H.test('a server that exits at start is reported with its exit code', function()
    local dying = H.tmp .. '/dying-server'
    vim.fn.writefile({ '#!/bin/sh', 'echo "cannot start: broken install" >&2', 'exit 3' }, dying)
    vim.fn.setfperm(dying, 'rwxr-xr-x')
    local gamma = H.workspace('gamma', { ['pyproject.toml'] = '', ['g.py'] = 'def g():\n    return 5\n' })
    H.ok(codeqa.setup({ cmd = { dying }, settings = { embedder = 'hash' }, filetypes = { 'python' } }))
    H.clear_notifications()
    H.edit(gamma .. '/g.py', 'python')
    local ok, err = pcall(vim.cmd, 'CodeQAAsk what does g return?')
    H.ok(ok, tostring(err))
    local report = H.wait_for('the exit report', function()
      return H.notifications_matching('exited %(code 3%)', vim.log.levels.ERROR)[1]
    end)
    H.contains(report.message, 'codeqa-lsp exited (code 3); its messages are in ')
    vim.wait(300)
    -- (Neovim adds its own "Client N quit with exit code 3" warning.)
    H.eq(#H.notifications_matching('^CodeQA:'), 1, 'reported once: ' .. vim.inspect(H.notifications))
    H.eq(#H.floats(), 0, 'no answer window for a dead server')
    H.eq(codeqa.status(), '', 'no live client for this buffer')
  end)

  H.test('a crashed root is not restarted by every buffer, but is by a command', function()
    local gamma = H.tmp .. '/gamma'
    vim.fn.writefile({ 'def h():', '    return 6' }, gamma .. '/h.py')
    local before = #vim.tbl_keys(lsp.states)
    H.clear_notifications()
    H.edit(gamma .. '/h.py', 'python')
    vim.wait(300)
    H.eq(#vim.tbl_keys(lsp.states), before, 'no new server for another file of the root')
    H.eq(H.notifications, {})
    vim.cmd('CodeQAStatus')
    H.wait_for('the restarted server to exit again', function()
      return H.notifications_matching('exited %(code 3%)', vim.log.levels.ERROR)[1]
    end)
    H.eq(#vim.tbl_keys(lsp.states), before + 1, 'the command started a new server')
  end)
end)
