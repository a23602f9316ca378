-- The answer window (a float that fills in while the answer streams) and the quickfix list.
local config = require('codeqa.config')
local markdown = require('codeqa.markdown')
local render = require('codeqa.render')

local api = vim.api
local M = {}

--- The answer window on screen, if any: { buf, win, origin_win, root, title, text,
--- citations, targets, on_close, done }.
M.current = nil

local function size(value, total)
  if value <= 1 then
    return math.max(1, math.floor(total * value))
  end
  return math.min(math.floor(value), total)
end

--- Float geometry: centred, `float.width` wide, and `float.height` high or, given the
--- answer's lines, just high enough for them (a two-line answer gets a small window).
local function window_config(content_lines)
  local opts = config.options.float
  local columns, lines = vim.o.columns, vim.o.lines - vim.o.cmdheight - 1
  local width = math.max(math.min(20, columns - 2), math.min(size(opts.width, columns - 4), opts.max_width))
  local height = math.max(3, size(opts.height, lines - 4))
  if content_lines then
    local needed = 0
    for _, line in ipairs(content_lines) do
      needed = needed + math.max(1, math.ceil(vim.fn.strdisplaywidth(line) / width))
    end
    height = math.max(3, math.min(height, needed))
  end
  local float = {
    relative = 'editor',
    width = width,
    height = height,
    row = math.max(0, math.floor((lines - height) / 2) - 1),
    col = math.max(0, math.floor((columns - width) / 2)),
    style = 'minimal',
    border = opts.border,
  }
  if vim.fn.has('nvim-0.9') == 1 and opts.border ~= 'none' then
    float.title = ' CodeQA '
    float.title_pos = 'center'
  end
  return float
end

--- `lines` are markdown; `literal` (1-based set) marks our own rows that are not.
local function set_lines(view, lines, literal)
  if not api.nvim_buf_is_valid(view.buf) then
    return
  end
  vim.bo[view.buf].modifiable = true
  markdown.set_lines(view.buf, view.win, lines, literal)
  vim.bo[view.buf].modifiable = false
end

local function is_open(view)
  return view and api.nvim_win_is_valid(view.win)
end
M.is_open = is_open

--- Close the answer window. `keep_request`: the request keeps running (its citations still
--- reach the quickfix list); otherwise `view.on_close` cancels it.
function M.close(view, keep_request)
  view = view or M.current
  if not view then
    return
  end
  if M.current == view then
    M.current = nil
  end
  local on_close = view.on_close
  view.on_close = nil
  if on_close and not keep_request then
    on_close(view)
  end
  local focused = api.nvim_get_current_win() == view.win
  if api.nvim_win_is_valid(view.win) then
    pcall(api.nvim_win_close, view.win, true)
  end
  if focused and view.origin_win and api.nvim_win_is_valid(view.origin_win) then
    pcall(api.nvim_set_current_win, view.origin_win)
  end
end

--- The line text of `file` at `lnum`: from its buffer when loaded (unsaved edits), else disk.
function M.line_of(file, lnum)
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) and api.nvim_buf_get_name(buf) == file then
      return api.nvim_buf_get_lines(buf, lnum - 1, lnum, false)[1]
    end
  end
  local ok, lines = pcall(vim.fn.readfile, file, '', lnum)
  return ok and lines[lnum] or nil
end

local function is_code_window(win)
  return win and api.nvim_win_is_valid(win) and api.nvim_win_get_config(win).relative == ''
    and vim.bo[api.nvim_win_get_buf(win)].buftype == ''
end

--- Where a citation opens: the window the question was asked from when it shows code, else
--- the first window that does (not the quickfix list or a help window).
local function code_window(preferred)
  if is_code_window(preferred) then
    return preferred
  end
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if is_code_window(win) then
      return win
    end
  end
  return nil
end

--- Open `file` at the citation's first line in the window the question was asked from.
function M.jump(citation, root, win)
  local file = render.citation_file(citation, root)
  if not file then
    return
  end
  local target = code_window(win)
  if target then
    api.nvim_set_current_win(target)
  end
  local first = render.line_span(citation)
  vim.cmd("normal! m'")
  local ok, err = pcall(vim.cmd, 'edit ' .. vim.fn.fnameescape(file))
  if not ok then
    vim.notify('CodeQA: cannot open ' .. file .. ': ' .. tostring(err):gsub('^Vim%(%a+%):', ''),
      vim.log.levels.ERROR)
    return
  end
  local last_line = api.nvim_buf_line_count(0)
  api.nvim_win_set_cursor(0, { math.min(math.max(first, 1), last_line), 0 })
  vim.cmd('normal! zz')
end

--- The citations of the turn shown at `row` (a thread shows several answers, each with its
--- own [1], [2], ...).
local function citations_at_row(view, row)
  for _, span in ipairs(view.spans or {}) do
    if row >= span.first and row <= span.last then
      return span.citations
    end
  end
  return view.citations
end

local function jump_from_float(view)
  local row, col = unpack(api.nvim_win_get_cursor(view.win))
  local citation = view.targets and view.targets[row]
  if not citation then
    local line = api.nvim_buf_get_lines(view.buf, row - 1, row, false)[1] or ''
    citation = render.citation_at(line, col, citations_at_row(view, row))
  end
  if not citation then
    vim.notify('CodeQA: no citation on this line', vim.log.levels.INFO)
    return
  end
  local root, origin = view.root, view.origin_win
  M.close(view)
  M.jump(citation, root, origin)
end

--- The earlier turns of the view's conversation, rendered one after the other: lines, the
--- source-line targets and each turn's span (for [n] lookups).
local function earlier_lines(view)
  local lines, targets, spans = {}, {}, {}
  for _, turn in ipairs(view.earlier or {}) do
    local turn_lines, turn_targets = render.answer_lines(turn.result, view.root, turn.question)
    local first = #lines + 1
    for row, citation in pairs(turn_targets) do
      targets[row + #lines] = citation
    end
    vim.list_extend(lines, turn_lines)
    table.insert(spans, { first = first, last = #lines,
      citations = type(turn.result.citations) == 'table' and turn.result.citations or {} })
    vim.list_extend(lines, { '', '---', '' })
  end
  return lines, targets, spans
end

--- Open an answer window titled `title` (shown until the first text arrives). `earlier`:
--- the conversation's previous turns `{ question, result }`, shown above the new answer.
function M.open(title, root, earlier)
  if M.current then
    M.close(M.current)
  end
  local origin = api.nvim_get_current_win()
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'wipe'
  -- Markdown with treesitter on 0.10+, rendered to highlighted plain text before (markdown.lua).
  vim.bo[buf].filetype = markdown.native() and 'markdown' or 'codeqa'
  local win = api.nvim_open_win(buf, true, window_config())
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  vim.wo[win].cursorline = true
  local view = { buf = buf, win = win, origin_win = origin, root = root, title = title, text = '',
    earlier = earlier or {} }
  M.current = view
  M.show_streaming(view)
  local map = { buffer = buf, nowait = true, silent = true }
  vim.keymap.set('n', 'q', function() M.close(view) end, map)
  vim.keymap.set('n', '<CR>', function() jump_from_float(view) end, map)
  -- A follow-up question in the same conversation (set by init.lua once the answer is in).
  vim.keymap.set('n', 'f', function()
    if view.on_follow_up then
      view.on_follow_up()
    end
  end, map)
  -- A float nobody looks at any more should not linger over the code.
  api.nvim_create_autocmd('WinLeave', {
    buffer = buf,
    once = true,
    callback = function()
      vim.schedule(function()
        if M.current == view then
          M.close(view, true)
        end
      end)
    end,
  })
  return view
end

--- The thread so far and the answer streaming in below it.
function M.show_streaming(view)
  local lines, targets = earlier_lines(view)
  local first = #lines + 1
  vim.list_extend(lines, render.streaming_lines(view.title, view.text))
  set_lines(view, lines, targets)
  if first > 1 then
    pcall(api.nvim_win_set_cursor, view.win, { math.min(first, #lines), 0 })
  end
end

--- Append a streamed piece; redraws are coalesced so a fast stream stays cheap.
function M.append(view, text)
  if not is_open(view) or view.done then
    return
  end
  view.text = view.text .. text
  if view.redraw_scheduled then
    return
  end
  view.redraw_scheduled = true
  vim.defer_fn(function()
    view.redraw_scheduled = false
    if is_open(view) and not view.done then
      M.show_streaming(view)
    end
  end, 30)
end

--- Replace the streamed text with the final answer and its sources.
function M.finish(view, result)
  if not is_open(view) then
    return
  end
  view.done = true
  view.on_close = nil
  view.citations = type(result.citations) == 'table' and result.citations or {}
  local lines, targets, spans = earlier_lines(view)
  local current_first = #lines + 1
  local turn_lines, turn_targets = render.answer_lines(result, view.root, view.title)
  for row, citation in pairs(turn_targets) do
    targets[row + #lines] = citation
  end
  vim.list_extend(lines, turn_lines)
  table.insert(spans, { first = current_first, last = #lines, citations = view.citations })
  view.targets, view.spans = targets, spans
  set_lines(view, lines, targets)
  pcall(api.nvim_win_set_config, view.win, window_config(lines))
  if current_first > 1 then
    -- A follow-up: the new answer, not the start of the thread, is what the user wants to read.
    pcall(api.nvim_win_set_cursor, view.win, { current_first, 0 })
    pcall(api.nvim_win_call, view.win, function() vim.cmd('normal! zt') end)
  end
end

--- Show a failure in the window (the request is over).
function M.fail(view, message)
  if not is_open(view) then
    return
  end
  view.done = true
  view.on_close = nil
  local lines = { '# ' .. view.title, '', '**CodeQA could not answer:** ' .. message }
  set_lines(view, lines)
  pcall(api.nvim_win_set_config, view.win, window_config(lines))
end

--- The answer's citations as the quickfix list (not opened: `:copen` shows it).
function M.set_citations_quickfix(result, root, title)
  local items = render.citation_items(result.citations or {}, root, M.line_of)
  vim.fn.setqflist({}, ' ', { title = 'CodeQA: ' .. title, items = items })
  return items
end

--- Search hits as the quickfix list, or `win`'s location list.
function M.set_search_list(results, root, title, loclist_win)
  local items = render.search_items(results, root)
  local what = { title = 'CodeQA search: ' .. title, items = items }
  if loclist_win then
    vim.fn.setloclist(loclist_win, {}, ' ', what)
  else
    vim.fn.setqflist({}, ' ', what)
  end
  return items
end

return M
