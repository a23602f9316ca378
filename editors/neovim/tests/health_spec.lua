-- :checkhealth codeqa before any buffer started a server: it starts one, reports what it
-- found, and stops it again.
local H = dofile(os.getenv('CODEQA_PLUGIN_DIR') .. '/tests/helpers.lua')

H.run(function()
  local codeqa = require('codeqa')
  local lsp = require('codeqa.lsp')
  local root = H.workspace('healthy', {
    ['pyproject.toml'] = '[project]\nname = "healthy"',
    ['pkg/core.py'] = 'def core():\n    """The core."""\n    return 1\n',
  })
  vim.cmd('cd ' .. vim.fn.fnameescape(root))

  H.test(':checkhealth codeqa starts the server for the working directory and reports', function()
    H.ok(codeqa.setup({ cmd = { H.server }, settings = { embedder = 'hash', indexDir = H.tmp .. '/index' } }))
    H.eq(#lsp.all_clients(), 0)
    vim.cmd('checkhealth codeqa')
    local text = H.buffer_text(0)
    H.contains(text, 'setup() called')
    H.contains(text, 'executable: ' .. H.server)
    H.ok(text:match('Python 3%.%d+%.%d+'), text)
    H.contains(text, 'the server starts (project ' .. root .. ')')
    H.contains(text, 'embedder: hash (configured: hash)')
    H.contains(text, 'provider: extractive (offline; no model configured)')
    H.ok(text:match('index: [^\n]*files'), text)
    H.ok(not text:find('ERROR'), text)
    vim.cmd('bwipeout!')
  end)

  H.test('the server started for the check is stopped afterwards', function()
    local state = select(2, next(lsp.states))
    H.wait_for('the health-check server to stop', function()
      return #lsp.all_clients() == 0 and state.phase ~= 'ready' and state.phase ~= 'indexing'
    end)
    H.eq(state.phase, 'stopped', 'a deliberate stop, not a failure')
    H.eq(H.notifications, {}, 'no crash report and no indexing chatter')
  end)
end)
