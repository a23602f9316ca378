-- What the server pushes to us: `$/progress` (kept per client in `M.states` for the
-- statusline and :checkhealth), streamed answer pieces (`codeqa/answerDelta`, routed to the
-- request that asked), answers of code lenses (`codeqa/answer`), `window/showMessage`, and on
-- Neovim < 0.10 our own hover rendering. Each handler is isolated: an error in one is reported
-- and never breaks the client.
local config = require('codeqa.config')
local markdown = require('codeqa.markdown')

local M = {}

--- client id -> { root, phase = 'starting'|'indexing'|'ready'|'stopped'|'failed', percentage,
---   message, indexed (count of finished index runs), last_report, quiet (no progress
---   notifications: a server only :checkhealth started) }
M.states = {}

local listeners = {} -- requestId -> function(text) receiving codeqa/answerDelta pieces

--- Called with (result, client) when the server pushes `codeqa/answer` (a code lens ran).
M.on_answer = nil

function M.notify(message, level)
  vim.notify('CodeQA: ' .. message, level or vim.log.levels.INFO, { title = 'CodeQA' })
end
local notify = M.notify

function M.redraw_status()
  pcall(vim.cmd, 'redrawstatus')
end

--- Receive the streamed text of request `request_id` (nil stops listening).
function M.listen(request_id, fn)
  listeners[request_id] = fn
end

local function safe(fn)
  return function(...)
    local ok, err = pcall(fn, ...)
    if not ok then
      notify('internal error: ' .. tostring(err), vim.log.levels.ERROR)
    end
  end
end

local function on_progress(err, result, ctx, handler_config)
  local state = M.states[ctx.client_id]
  local value = type(result) == 'table' and result.value or nil
  if state and type(value) == 'table' then
    if value.kind == 'begin' then
      state.phase = 'indexing'
      state.title = value.title
      state.percentage = value.percentage
      state.message = value.message
      if config.options.notify_progress and not state.quiet then
        notify((value.title or 'Indexing') .. '…')
      end
    elseif value.kind == 'report' then
      state.phase = 'indexing'
      state.percentage = value.percentage or state.percentage
      state.message = value.message or state.message
      -- The last few phase messages ("chunking files 3/9", "embedding chunks 40/120, about
      -- 5 s left"): what the statusline showed, kept for :checkhealth and the tests.
      if type(value.message) == 'string' then
        state.messages = state.messages or {}
        table.insert(state.messages, value.message)
        if #state.messages > 20 then
          table.remove(state.messages, 1)
        end
      end
    elseif value.kind == 'end' then
      state.phase = 'ready'
      state.percentage = nil
      state.message = nil
      state.indexed = (state.indexed or 0) + 1
      state.last_report = value.message
      if config.options.notify_progress and not state.quiet then
        notify(value.message or 'indexing finished')
      end
    end
    M.redraw_status()
  end
  -- Keep Neovim's own progress bookkeeping (LspProgress, statusline plugins) working too.
  local default = vim.lsp.handlers['$/progress']
  if default then
    pcall(default, err, result, ctx, handler_config)
  end
end

local function on_answer_delta(_, params)
  if type(params) ~= 'table' then
    return
  end
  local listener = listeners[params.requestId]
  if listener and type(params.text) == 'string' then
    listener(params.text)
  end
end

local function on_answer(_, result, ctx)
  if type(result) ~= 'table' or listeners[result.requestId] then
    return -- one of our own requests: its response shows it
  end
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if M.on_answer and client then
    M.on_answer(result, client)
  end
end

-- The server reports bad settings and failures with window/showMessage; 0.7 would print
-- them raw to stdout, so route them through vim.notify like the rest of the plugin.
local message_levels = { [1] = vim.log.levels.ERROR, [2] = vim.log.levels.WARN, [3] = vim.log.levels.INFO,
  [4] = vim.log.levels.DEBUG }

local function on_show_message(_, params)
  if type(params) == 'table' and type(params.message) == 'string' then
    local message = params.message:gsub('^[Cc]ode[Qq][Aa]:%s*', '')
    notify(message, message_levels[params.type] or vim.log.levels.INFO)
  end
  return vim.NIL
end

M.handlers = {
  ['window/showMessage'] = safe(on_show_message),
  ['$/progress'] = safe(on_progress),
  ['codeqa/answerDelta'] = safe(on_answer_delta),
  ['codeqa/answer'] = safe(on_answer),
}
-- Before 0.10 hover markdown goes through the regex syntax, which mangles it (issue 14):
-- render it ourselves there; current versions use vim.lsp.util's treesitter markdown.
if not markdown.native() then
  M.handlers['textDocument/hover'] = safe(markdown.hover_handler)
end

return M
