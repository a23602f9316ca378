-- codeqa.nvim: ask questions about your codebase; answers cite the exact lines.
--
-- Public API: setup(), ask(), explain(), search(), reindex(), server_status(), status().
-- The commands (:CodeQAAsk, ...) are thin wrappers created by setup().
local config = require('codeqa.config')
local handlers = require('codeqa.handlers')
local lsp = require('codeqa.lsp')
local render = require('codeqa.render')
local ui = require('codeqa.ui')

local api = vim.api
local levels = vim.log.levels
local M = {}

local notify = handlers.notify
local request_counter = 0

local function new_request_id()
  request_counter = request_counter + 1
  return string.format('nvim-%d-%d', vim.fn.getpid(), request_counter)
end

local function trim(text)
  return (text or ''):gsub('^%s+', ''):gsub('%s+$', '')
end

--- Commands run from inside the answer float act on the code window it was opened from.
local function code_buffer()
  local view = ui.current
  if view and api.nvim_get_current_win() == view.win then
    ui.close(view, true)
  end
  return api.nvim_get_current_buf()
end

local function root_of(client)
  return client.config and client.config.root_dir or nil
end

--- `fn(client)` once the buffer's server is ready; when there is none, say why.
local function with_client(bufnr, fn)
  lsp.with_client(bufnr, function(client, err, level)
    if not client then
      notify(err, level)
      return
    end
    fn(client)
  end)
end

--- Show a finished AnswerResult: the float (reusing `view` when given) and the quickfix list.
local function show_answer(result, client, title, view)
  if type(result) ~= 'table' then
    notify('the server returned no answer', levels.ERROR)
    return
  end
  local root = root_of(client)
  local items = ui.set_citations_quickfix(result, root, title)
  if view == nil then
    view = ui.open(title, root)
  elseif not ui.is_open(view) then
    -- The user left the window while the answer was coming: don't pop it up again.
    notify(string.format('answer ready; %d citations in the quickfix list (:copen)', #items))
    return
  end
  ui.finish(view, result)
end

--- The conversation the last question belonged to: { id, turns = { { question, result } } }.
M.thread = nil

local follow_up_prompt

--- Send an answering command (codeqa.ask / codeqa.explain / codeqa.conversation.continue) and
--- stream it into a float. `earlier`: the conversation's previous turns, shown above it.
local function answer(bufnr, command, build_argument, title, earlier)
  with_client(bufnr, function(client)
    local request_id = new_request_id()
    local argument = build_argument(client)
    if not argument then
      return
    end
    argument.requestId = request_id
    local view = ui.open(title, root_of(client), earlier)
    handlers.listen(request_id, function(text)
      ui.append(view, text)
    end)
    local handle = lsp.execute(client, bufnr, command, argument, function(request_err, result)
      handlers.listen(request_id, nil)
      if request_err then
        if ui.is_open(view) then
          ui.fail(view, request_err)
        else
          notify(request_err, levels.ERROR)
        end
        return
      end
      if type(result) == 'table' and type(result.threadId) == 'string' then
        local turns = vim.deepcopy(earlier or {})
        table.insert(turns, { question = title, result = result })
        M.thread = { id = result.threadId, turns = turns, bufnr = bufnr }
        view.on_follow_up = follow_up_prompt
      end
      show_answer(result, client, title, view)
    end)
    view.request = handle
    view.on_close = function()
      handlers.listen(request_id, nil)
      lsp.cancel(handle)
    end
  end)
end

--- Ask a question about the project. opts: { path = glob, language = name }.
function M.ask(question, opts)
  opts = opts or {}
  question = type(question) == 'string' and trim(question) or ''
  if question == '' then
    notify('the question is empty; usage: :CodeQAAsk how are settings loaded?', levels.WARN)
    return
  end
  local bufnr = code_buffer()
  -- Every question starts a conversation; `f` in the answer (or :CodeQAFollowUp) continues it.
  answer(bufnr, 'codeqa.conversation.continue', function()
    return { question = question, path = opts.path, language = opts.language, newThread = true }
  end, question)
end

--- A follow-up in the current conversation (the last one asked or opened with :CodeQAChats);
--- without one, the server continues this editor's latest conversation.
function M.follow_up(question)
  question = type(question) == 'string' and trim(question) or ''
  if question == '' then
    notify('the question is empty; usage: :CodeQAFollowUp and where is it called from?', levels.WARN)
    return
  end
  local thread = M.thread
  local bufnr = code_buffer()
  if thread and thread.bufnr and api.nvim_buf_is_valid(thread.bufnr) then
    bufnr = thread.bufnr
  end
  answer(bufnr, 'codeqa.conversation.continue', function()
    return { question = question, threadId = thread and thread.id or nil }
  end, question, thread and thread.turns or {})
end

follow_up_prompt = function()
  vim.ui.input({ prompt = 'Follow-up: ' }, function(question)
    if question and trim(question) ~= '' then
      M.follow_up(question)
    end
  end)
end

--- Pick one of the project's conversations (vim.ui.select: telescope, fzf-lua or snacks take
--- over when installed) and show it; `f` in it asks a follow-up.
function M.chats()
  local bufnr = code_buffer()
  with_client(bufnr, function(client)
    lsp.execute(client, bufnr, 'codeqa.conversation.list', vim.empty_dict(), function(err, threads)
      if err then
        return notify(err, levels.ERROR)
      end
      if type(threads) ~= 'table' or #threads == 0 then
        return notify('no conversations yet: ask with :CodeQAAsk')
      end
      vim.ui.select(threads, {
        prompt = 'CodeQA conversations',
        format_item = function(t)
          return string.format('%s (%d turns)', tostring(t.title ~= '' and t.title or t.id), tonumber(t.turns) or 0)
        end,
      }, function(choice)
        if choice then
          M.open_chat(choice.id, bufnr)
        end
      end)
    end)
  end)
end

--- Show conversation `id` (its turns as they were answered) in the answer float.
function M.open_chat(id, bufnr)
  bufnr = bufnr or code_buffer()
  with_client(bufnr, function(client)
    lsp.execute(client, bufnr, 'codeqa.conversation.get', { threadId = id }, function(err, thread)
      if err or type(thread) ~= 'table' or type(thread.turns) ~= 'table' or #thread.turns == 0 then
        return notify(err or 'that conversation is empty', err and levels.ERROR or levels.INFO)
      end
      local turns = {}
      for _, turn in ipairs(thread.turns) do
        table.insert(turns, { question = turn.question, result = { answer = turn.answer,
          citations = turn.citations, provider = turn.provider, confident = true } })
      end
      M.thread = { id = thread.id, turns = turns, bufnr = bufnr }
      local last = table.remove(turns)
      local view = ui.open(last.question, root_of(client), turns)
      view.on_follow_up = follow_up_prompt
      ui.finish(view, last.result)
      M.thread.turns = vim.deepcopy(turns)
      table.insert(M.thread.turns, last)
    end)
  end)
end

--- Explain the function, method or class under the cursor.
function M.explain()
  local bufnr = code_buffer()
  local win = api.nvim_get_current_win()
  local file = api.nvim_buf_get_name(bufnr)
  if file == '' or vim.bo[bufnr].buftype ~= '' then
    notify('put the cursor in a function of a source file to explain it', levels.WARN)
    return
  end
  local cursor = api.nvim_win_get_cursor(win)
  local title = string.format('Explain %s:%d', vim.fn.fnamemodify(file, ':t'), cursor[1])
  answer(bufnr, 'codeqa.explain', function(client)
    local params
    if api.nvim_win_is_valid(win) and api.nvim_win_get_buf(win) == bufnr then
      params = vim.lsp.util.make_position_params(win, client.offset_encoding)
    else
      params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) },
        position = { line = cursor[1] - 1, character = cursor[2] } }
    end
    return { uri = params.textDocument.uri, position = params.position }
  end, title)
end

--- Search the index; hits go to the quickfix list (or the location list with `loclist`).
--- opts: { loclist = bool, top_k = n, path = glob, language = name, open = bool }.
function M.search(query, opts)
  opts = opts or {}
  query = type(query) == 'string' and trim(query) or ''
  if query == '' then
    notify('the search query is empty; usage: :CodeQASearch parse config', levels.WARN)
    return
  end
  local bufnr = code_buffer()
  local win = api.nvim_get_current_win()
  with_client(bufnr, function(client)
    local argument = { query = query, topK = opts.top_k, path = opts.path, language = opts.language }
    lsp.execute(client, bufnr, 'codeqa.search', argument, function(request_err, results)
      if request_err then
        notify(request_err, levels.ERROR)
        return
      end
      local loclist_win = opts.loclist and (api.nvim_win_is_valid(win) and win or 0) or nil
      local items = ui.set_search_list(type(results) == 'table' and results or {}, root_of(client), query, loclist_win)
      if #items == 0 then
        notify(string.format('no results for "%s"', query))
        return
      end
      local open = opts.open
      if open == nil then
        open = config.options.open_search_results
      end
      if open then
        if loclist_win then
          api.nvim_set_current_win(loclist_win)
          vim.cmd('lopen')
        else
          vim.cmd('copen')
        end
      end
    end)
  end)
end

--- Re-index every folder of the project (`force`: drop the index and rebuild it).
function M.reindex(force)
  local bufnr = code_buffer()
  with_client(bufnr, function(client)
    lsp.execute(client, bufnr, 'codeqa.reindex', { force = force and true or false }, function(request_err)
      if request_err then
        notify(request_err, levels.ERROR)
      else
        notify(force and 'rebuilding the index…' or 're-indexing…')
      end
    end)
  end)
end

--- Fetch codeqa.status; `callback(status)` (nil after an error, which is reported).
function M.server_status(callback)
  local bufnr = code_buffer()
  lsp.with_client(bufnr, function(client, err, level)
    if not client then
      notify(err, level)
      return callback and callback(nil)
    end
    lsp.execute(client, bufnr, 'codeqa.status', nil, function(request_err, status)
      if request_err or type(status) ~= 'table' then
        notify(request_err or 'the server returned no status', levels.ERROR)
        return callback and callback(nil)
      end
      if callback then
        callback(status)
      else
        api.nvim_echo({ { render.status_message(status) } }, true, {})
      end
    end)
  end)
end

--- Statusline component: indexing progress of the current buffer's project ('' when none).
function M.status(bufnr)
  local ok, state = pcall(lsp.state_for, bufnr or api.nvim_get_current_buf())
  return ok and render.statusline(state) or ''
end

-- Setup --------------------------------------------------------------------------------------

local function guarded(fn)
  return function(...)
    local ok, err = pcall(fn, ...)
    if not ok then
      notify('internal error: ' .. tostring(err), levels.ERROR)
    end
  end
end

local function create_commands()
  local command = api.nvim_create_user_command
  command('CodeQAAsk', guarded(function(args)
    if trim(args.args) ~= '' then
      return M.ask(args.args)
    end
    vim.ui.input({ prompt = 'Ask CodeQA: ' }, function(question)
      if question and trim(question) ~= '' then
        M.ask(question)
      end
    end)
  end), { nargs = '*', desc = 'Ask a question about this codebase' })
  command('CodeQAFollowUp', guarded(function(args)
    if trim(args.args) ~= '' then
      return M.follow_up(args.args)
    end
    follow_up_prompt()
  end), { nargs = '*', desc = 'Ask a follow-up in the current conversation' })
  command('CodeQAChats', guarded(function()
    M.chats()
  end), { nargs = 0, desc = 'Pick a conversation and show it' })
  command('CodeQASearch', guarded(function(args)
    M.search(args.args, { loclist = args.bang })
  end), { nargs = '*', bang = true, desc = 'Search the codebase (quickfix; ! = location list)' })
  command('CodeQAExplain', guarded(function()
    M.explain()
  end), { nargs = 0, desc = 'Explain the function under the cursor' })
  command('CodeQAReindex', guarded(function(args)
    M.reindex(args.bang)
  end), { nargs = 0, bang = true, desc = 'Re-index the project (! = rebuild from scratch)' })
  command('CodeQAStatus', guarded(function()
    M.server_status()
  end), { nargs = 0, desc = 'Show index and provider status' })
end

local function autostart(bufnr)
  if config.options.autostart and vim.tbl_contains(config.options.filetypes, vim.bo[bufnr].filetype) then
    lsp.attach(bufnr)
  end
end

--- Configure the plugin (see README). Returns true when every option was valid.
function M.setup(opts)
  local options, problems = config.resolve(opts)
  config.options = options
  if #problems > 0 then
    notify('setup: ' .. table.concat(problems, '; '), levels.WARN)
  end
  create_commands()
  handlers.on_answer = function(result, client)
    -- A code lens ran: the first citation is the function it explains.
    local first = type(result.citations) == 'table' and result.citations[1] or nil
    local symbol = first and type(first.symbol) == 'string' and first.symbol or nil
    show_answer(result, client, symbol and ('Explain ' .. symbol) or 'Explanation')
  end
  local group = api.nvim_create_augroup('codeqa_autostart', { clear = true })
  if #options.filetypes > 0 then
    api.nvim_create_autocmd('FileType', {
      group = group,
      pattern = options.filetypes,
      callback = guarded(function(event)
        autostart(event.buf)
      end),
    })
  end
  for _, bufnr in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(bufnr) then
      guarded(autostart)(bufnr)
    end
  end
  M.did_setup = true
  return #problems == 0
end

return M
