-- Plugin logic that needs no server: option validation, root detection, rendering of answers,
-- quickfix items, the statusline and the setup() error paths.
local H = dofile(os.getenv('CODEQA_PLUGIN_DIR') .. '/tests/helpers.lua')

H.run(function()
  local config = require('codeqa.config')
  local project = require('codeqa.project')
  local render = require('codeqa.render')

  H.test('resolve() without options gives the defaults', function()
    local options, problems = config.resolve(nil)
    H.eq(problems, {})
    H.eq(options.cmd, { 'codeqa-lsp' })
    H.ok(vim.tbl_contains(options.filetypes, 'python'))
    H.ok(vim.tbl_contains(options.root_markers, '.git'))
    H.ok(vim.tbl_contains(options.root_markers, 'pyproject.toml'))
    H.ok(vim.tbl_contains(options.root_markers, 'package.json'))
  end)

  H.test('resolve() keeps valid options and merges float options', function()
    local options, problems = config.resolve({
      cmd = { 'python3', '-m', 'codeqa_lsp' },
      settings = { embedder = 'hash', topK = 4 },
      filetypes = { 'python' },
      float = { border = 'single' },
      hover_keymap = false,
    })
    H.eq(problems, {})
    H.eq(options.cmd, { 'python3', '-m', 'codeqa_lsp' })
    H.eq(options.settings, { embedder = 'hash', topK = 4 })
    H.eq(options.filetypes, { 'python' })
    H.eq(options.float.border, 'single')
    H.eq(options.float.width, config.defaults.float.width)
    H.eq(options.hover_keymap, false)
  end)

  H.test('resolve() reports bad values and unknown keys and uses the defaults', function()
    local options, problems = config.resolve({
      cmd = 'codeqa-lsp',
      filetype = { 'python' },
      autostart = 'yes',
      settings = { 'hash' },
      float = { width = -1 },
    })
    H.eq(options.cmd, config.defaults.cmd)
    H.eq(options.autostart, true)
    H.eq(options.settings, {})
    H.eq(options.float.width, config.defaults.float.width)
    local text = table.concat(problems, '\n')
    H.contains(text, "option 'cmd' must be a non-empty list of strings, got \"codeqa-lsp\"")
    H.contains(text, "unknown option 'filetype' ignored (did you mean 'filetypes'?)")
    H.contains(text, "option 'autostart' must be true or false")
    H.contains(text, "option 'settings' must be a table of server settings")
    H.contains(text, "option 'float.width' must be a positive number")
    H.eq(#problems, 5)
  end)

  H.test('resolve() rejects a non-table', function()
    local options, problems = config.resolve('python')
    H.eq(options.cmd, config.defaults.cmd)
    H.eq(#problems, 1)
    H.contains(problems[1], 'setup() expects a table of options')
  end)

  H.test('setup() with mistakes warns once, does not raise, and still defines the commands', function()
    H.clear_notifications()
    local codeqa = require('codeqa')
    local ok, result = pcall(codeqa.setup, { cmd = 42, filetypes = { 'python' }, colour = true })
    H.ok(ok, 'setup raised: ' .. tostring(result))
    H.eq(result, false)
    H.eq(#H.notifications, 1)
    H.eq(H.notifications[1].level, vim.log.levels.WARN)
    H.contains(H.notifications[1].message, "option 'cmd' must be a non-empty list of strings, got 42")
    H.contains(H.notifications[1].message, "unknown option 'colour' ignored")
    for _, name in ipairs({ 'CodeQAAsk', 'CodeQASearch', 'CodeQAExplain', 'CodeQAReindex', 'CodeQAStatus' }) do
      H.eq(vim.fn.exists(':' .. name), 2, name .. ' is defined')
    end
    H.ok(codeqa.setup({ filetypes = { 'python' } }), 'a valid setup returns true')
  end)

  H.test('empty questions and queries are user mistakes, not errors', function()
    H.clear_notifications()
    local ok, err = pcall(vim.cmd, 'CodeQASearch')
    H.ok(ok, tostring(err))
    H.eq(#H.notifications, 1)
    H.contains(H.notifications[1].message, 'the search query is empty')
    H.clear_notifications()
    require('codeqa').ask('   ')
    H.contains(H.notifications[1].message, 'the question is empty')
    H.eq(#H.floats(), 0)
  end)

  H.test('find_root() picks the nearest marker and nil outside any project', function()
    local root = H.workspace('roots', {
      ['pyproject.toml'] = '[project]\nname = "outer"',
      ['pkg/mod.py'] = 'x = 1',
      ['web/package.json'] = '{}',
      ['web/src/app.js'] = 'let x = 1',
    })
    local markers = config.defaults.root_markers
    H.eq(project.find_root(root .. '/pkg/mod.py', markers), root)
    H.eq(project.find_root(root .. '/web/src/app.js', markers), root .. '/web')
    H.eq(project.find_root(root .. '/web', markers), root .. '/web')
    H.eq(project.find_root(root .. '/pkg/mod.py', { 'no-such-marker' }), nil)
    H.eq(project.find_root('', markers), nil)
    H.ok(project.contains(root, root .. '/pkg/mod.py'))
    H.ok(not project.contains(root .. '/pk', root .. '/pkg/mod.py'))
  end)

  local result = {
    requestId = 'r-1',
    answer = 'The total is summed [1](file:///w/shop/cart.py#L4-L7) and discounted [2](file:///w/shop/cart.py#L10-L13).\n',
    citations = {
      { number = 1, uri = 'file:///w/shop/cart.py', path = 'shop/cart.py', symbol = 'cart_total',
        startLine = 4, endLine = 7,
        range = { start = { line = 3, character = 0 }, ['end'] = { line = 7, character = 0 } } },
      { number = 2, uri = 'file:///w/shop/cart.py', path = 'shop/cart.py', symbol = 'apply_coupon',
        startLine = 10, endLine = 13, stale = true,
        range = { start = { line = 9, character = 0 }, ['end'] = { line = 13, character = 0 } } },
    },
    confident = false,
    provider = 'extractive',
    model = vim.NIL,
    error = vim.NIL,
  }

  H.test('answer_lines() shortens links, lists sources and maps them to citations', function()
    local lines, targets = render.answer_lines(result, '/w')
    H.eq(lines[1], 'The total is summed [1] and discounted [2].')
    local sources = vim.fn.index(lines, '## Sources') + 1
    H.ok(sources > 0, 'has a Sources heading')
    H.eq(lines[sources + 1], '[1] shop/cart.py:4-7 cart_total')
    H.eq(lines[sources + 2], '[2] shop/cart.py:10-13 apply_coupon (changed since indexed)')
    H.eq(targets[sources + 1].symbol, 'cart_total')
    H.eq(targets[sources + 2].symbol, 'apply_coupon')
    H.eq(lines[#lines], '_extractive · low confidence_')
  end)

  H.test('answer_lines() puts the question on top and keeps sources mapped', function()
    local lines, targets = render.answer_lines(result, '/w', 'how is the\ntotal computed?')
    H.eq(lines[1], '# how is the total computed?')
    H.eq(lines[2], '')
    H.eq(lines[3], 'The total is summed [1] and discounted [2].')
    for line, citation in pairs(targets) do
      H.ok(lines[line]:find('[' .. citation.number .. '] shop/cart.py:', 1, true), lines[line])
    end
    H.eq(vim.tbl_count(targets), 2)
  end)

  H.test('streaming_lines() shows a placeholder, then the text so far', function()
    H.eq(render.streaming_lines('why?', ''), { '# why?', '', '_Searching the code…_' })
    H.eq(render.streaming_lines('why?', 'Because [1](file:///a.py#L1-L2)\nof'), { '# why?', '', 'Because [1]', 'of' })
  end)

  H.test('shorten_links() shortens citation links only, never a call in quoted code', function()
    H.eq(render.shorten_links('`handlers[0](req)` runs first [1](file:///a.js#L3-L9)'), '`handlers[0](req)` runs first [1]')
  end)

  H.test('answer_lines() shows provider errors and copes with an empty answer', function()
    local lines = render.answer_lines({ answer = '', citations = {}, error = 'timeout after 60 s', provider = 'openai', model = 'gpt-x', confident = true })
    H.eq(lines[1], '_No answer._')
    H.ok(vim.tbl_contains(lines, '> timeout after 60 s'))
    H.eq(lines[#lines], '_openai · gpt-x_')
  end)

  H.test('citation_at() finds the [n] under or nearest the cursor', function()
    local line = 'summed [1] and discounted [2].'
    H.eq(render.citation_at(line, 8, result.citations).number, 1)
    H.eq(render.citation_at(line, 28, result.citations).number, 2)
    H.eq(render.citation_at(line, 24, result.citations).number, 2)
    H.eq(render.citation_at('no markers here', 3, result.citations), nil)
    H.eq(render.citation_at('[9] unknown', 1, result.citations), nil)
  end)

  H.test('citation_items() builds path:line: symbol — first line', function()
    local asked = {}
    local items = render.citation_items(result.citations, '/w', function(file, lnum)
      table.insert(asked, file .. ':' .. lnum)
      return '    def cart_total(prices):  '
    end)
    H.eq(asked, { '/w/shop/cart.py:4', '/w/shop/cart.py:10' })
    H.eq(items[1], { filename = '/w/shop/cart.py', lnum = 4, end_lnum = 7, col = 1,
      text = '[1] cart_total — def cart_total(prices):' })
    H.eq(items[2].lnum, 10)
  end)

  H.test('citation_items() falls back to the path and the range', function()
    local items = render.citation_items({
      { number = 3, path = 'a/b.py', symbol = 'f', range = { start = { line = 41, character = 0 } } },
    }, '/root', function() return nil end)
    H.eq(items, { { filename = '/root/a/b.py', lnum = 42, end_lnum = 42, col = 1, text = '[3] f' } })
  end)

  H.test('search_items() puts the score first', function()
    local items = render.search_items({
      { uri = 'file:///w/ship.py', path = 'ship.py', symbol = 'shipping_cost', kind = 'function',
        score = 0.8312, startLine = 3, endLine = 9, preview = 'def shipping_cost(weight):' },
      { uri = 'file:///w/util.py', path = 'util.py', symbol = vim.NIL, kind = vim.NIL, score = 0.1,
        startLine = 1, endLine = 2, preview = vim.NIL },
    }, '/w')
    H.eq(items[1], { filename = '/w/ship.py', lnum = 3, end_lnum = 9, col = 1,
      text = '[0.83] shipping_cost (function) — def shipping_cost(weight):' })
    H.eq(items[2].text, '[0.10]')
    local use = render.search_items({
      { uri = 'file:///w/tree.go', path = 'tree.go', symbol = 'node.FindRoute', kind = 'method',
        score = 0.9, startLine = 383, endLine = 406, preview = 'rn := n.findRoute(rctx, method, path)',
        useLines = { 390 } },
    }, '/w')
    H.eq({ use[1].lnum, use[1].end_lnum }, { 390, 390 })
  end)

  H.test('status_message() summarises codeqa.status', function()
    local text = render.status_message({ folders = { '/w' }, files = 3, chunks = 12, embedded = 12,
      coverage = 1, embedder = 'hash', provider = 'extractive', model = vim.NIL, indexing = false,
      lastIndexed = 1700000000, skipped = { binary = 2 } })
    H.eq(text, 'CodeQA: 3 files, 12 chunks, coverage 100%, embedder hash, provider extractive (skipped: 2 binary)')
    local busy = render.status_message({ files = 1, chunks = 2, coverage = 0.5, embedder = 'local',
      provider = 'openai', model = 'gpt-4o-mini', indexing = true, skipped = vim.empty_dict() })
    H.eq(busy, 'CodeQA: 1 files, 2 chunks, coverage 50%, embedder local, provider openai (gpt-4o-mini) — indexing…')
    local embedding = render.status_message({ files = 1, chunks = 2, coverage = 0.5, embedder = 'local',
      provider = 'extractive', indexing = true, progress = { phase = 'embed', done = 1000, total = 4000,
        percentage = 40, etaSeconds = 30, message = 'embedding chunks 1000/4000, about 30 s left' } })
    H.eq(embedding, 'CodeQA: 1 files, 2 chunks, coverage 50%, embedder local, provider extractive'
      .. ' — indexing 40%: embedding chunks 1000/4000, about 30 s left')
  end)

  H.test('the answer window fits a short answer and <CR> on [n] in the text jumps there', function()
    local ui = require('codeqa.ui')
    local dir = H.workspace('jump', { ['lib/mod.py'] = 'import os\n\n\ndef target():\n    return os.sep\n' })
    local file = dir .. '/lib/mod.py'
    local origin = vim.api.nvim_get_current_win()
    local view = ui.open('where is target?', dir)
    H.eq(vim.api.nvim_get_current_win(), view.win, 'the float has the focus')
    local placeholder = require('codeqa.markdown').native() and '# where is target?\n\n_Searching the code…_'
      or 'where is target?\n\nSearching the code…'
    H.eq(H.buffer_text(view.buf), placeholder)
    ui.append(view, 'It is defined ')
    ui.append(view, 'in [1](file://' .. file .. '#L4-L5).')
    H.wait_for('the streamed text', function()
      return H.buffer_text(view.buf):find('It is defined in [1].', 1, true)
    end)
    ui.finish(view, { answer = 'It is defined in [1](file://' .. file .. '#L4-L5).', provider = 'extractive',
      confident = true, citations = { { number = 1, uri = vim.uri_from_fname(file), path = 'lib/mod.py',
        symbol = 'target', startLine = 4, endLine = 5 } } })
    local lines = vim.api.nvim_buf_get_lines(view.buf, 0, -1, false)
    H.eq(vim.api.nvim_win_get_height(view.win), #lines, 'as high as the answer')
    H.eq(vim.bo[view.buf].modifiable, false)
    vim.api.nvim_win_set_cursor(view.win, { 3, #'It is defined in [' })
    H.press('<CR>')
    H.eq(#H.floats(), 0, 'the float closed')
    H.eq(vim.api.nvim_get_current_win(), origin, 'back in the window it was opened from')
    H.eq(vim.api.nvim_buf_get_name(0), file)
    H.eq(vim.api.nvim_win_get_cursor(0), { 4, 0 })
  end)

  H.test('a citation opened from an answer asked in the quickfix window opens in a code window', function()
    local ui = require('codeqa.ui')
    local dir = H.tmp .. '/jump'
    local file = dir .. '/lib/mod.py'
    vim.cmd('only')
    vim.cmd('enew')
    vim.fn.setqflist({ { filename = file, lnum = 1, text = 'import os' } })
    vim.cmd('copen')
    H.eq(vim.bo.buftype, 'quickfix')
    local view = ui.open('asked from the quickfix list', dir)
    ui.finish(view, { answer = 'See [1].', provider = 'extractive', citations = { { number = 1,
      uri = vim.uri_from_fname(file), path = 'lib/mod.py', symbol = 'target', startLine = 4, endLine = 5 } } })
    vim.api.nvim_win_set_cursor(view.win, { 3, 5 })
    H.press('<CR>')
    H.eq(vim.bo.buftype, '', 'a code window, not the quickfix list')
    H.eq(vim.api.nvim_buf_get_name(0), file)
    H.eq(vim.api.nvim_win_get_cursor(0)[1], 4)
    H.ok(vim.fn.getqflist({ winid = 1 }).winid ~= 0, 'the quickfix window is still open')
    vim.cmd('cclose')
  end)

  H.test('statusline() follows the indexing phases', function()
    H.eq(render.statusline(nil), '')
    H.eq(render.statusline({ phase = 'starting' }), 'CodeQA starting')
    H.eq(render.statusline({ phase = 'indexing', percentage = 40, message = '2/5 files' }), 'CodeQA indexing 40% (2/5 files)')
    H.eq(render.statusline({ phase = 'ready' }), 'CodeQA')
    H.eq(require('codeqa').status(), '', 'no client: empty statusline')
  end)

  H.test('markdown.to_display() shows what rendered markdown shows (Neovim < 0.10)', function()
    local markdown = require('codeqa.markdown')
    -- The hover the server sends (codeqa_lsp/server/hover.py definition_markdown).
    local lines, hls = markdown.to_display(table.concat({
      '```python', 'def make_method(name, spec):', '```',
      '`make_method` (function) defined in [`cls/__init__.py:12`](file:///w/cls/__init__.py#L12)',
    }, '\n'))
    H.eq(lines, { '', '  def make_method(name, spec):', '', 'make_method (function) defined in cls/__init__.py:12' })
    local groups = {}
    for _, hl in ipairs(hls) do
      groups[#groups + 1] = string.format('%d:%s:%d-%d', hl[1], hl[2], hl[3], hl[4])
    end
    H.eq(groups, { '1:CodeQACode:0--1', '3:CodeQACode:0-11', '3:CodeQALink:34-52', '3:CodeQACode:34-52' })
    -- An answer: citations stay [n] (<CR> jumps), emphasis and code lose their markers.
    local answer = markdown.to_display({ '# where is it?', '**[1]** `apply_discount` normalises the code [2](file:///w/a.py#L3-L9).',
      '', '_extractive_', '- a *list* item', '> quoted', 'snake_case_name and 2 * 3 * 4' })
    H.eq(answer, { 'where is it?', '[1] apply_discount normalises the code [2].', '', 'extractive', '• a list item',
      '│ quoted', 'snake_case_name and 2 * 3 * 4' })
    -- Our own rows (Sources) are shown as they are.
    H.eq(markdown.to_display({ '[1] pkg/__init__.py:3 init' }, { [1] = true }), { '[1] pkg/__init__.py:3 init' })
  end)

  H.test('the answer float shows rendered text on 0.7 and treesitter markdown on 0.10+', function()
    local ui = require('codeqa.ui')
    local view = ui.open('how?', '/w')
    ui.finish(view, { answer = '**[1]** `f` is _here_ [1](file:///w/a.py#L1-L2).', provider = 'extractive',
      citations = { { number = 1, uri = 'file:///w/a.py', path = 'a.py', symbol = 'f', startLine = 1, endLine = 2 } } })
    local text = H.buffer_text(view.buf)
    if vim.fn.has('nvim-0.10') == 1 then
      H.eq(vim.bo[view.buf].filetype, 'markdown')
      H.ok(vim.treesitter.highlighter.active[view.buf] ~= nil, 'treesitter highlights the float')
      H.eq(vim.wo[view.win].conceallevel, 2)
    else
      H.eq(text, 'how?\n\n[1] f is here [1].\n\nSources\n[1] a.py:1-2 f\n\nextractive')
    end
    ui.close(view)
  end)
end)
