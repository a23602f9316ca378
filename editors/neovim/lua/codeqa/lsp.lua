-- Starting, reusing and talking to codeqa-lsp: one client per project root, the buffers it
-- serves, and `workspace/executeCommand` requests. What the server pushes is handled in
-- codeqa.handlers; what differs between Neovim versions lives in codeqa.compat, so the rest
-- of the plugin calls `M.execute` and never checks versions itself.
local compat = require('codeqa.compat')
local config = require('codeqa.config')
local handlers = require('codeqa.handlers')
local project = require('codeqa.project')

local M = {}

M.NAME = 'codeqa'

--- root directory -> client id
M.by_root = {}
--- client id -> state (see codeqa.handlers: the progress handler keeps it current)
M.states = handlers.states

local pending = {} -- client id -> callbacks waiting for `initialized`
local stopping = {} -- client ids we stop on purpose (their exit is not an error)
local reported_missing = {} -- executables already reported missing (autostart reports once)
local crashed_roots = {} -- roots whose server crashed: autostart leaves them until a command

local notify = handlers.notify
local redraw_status = handlers.redraw_status
local is_stopped = compat.is_stopped

function M.stop(client)
  stopping[client.id] = true
  compat.stop(client)
end

local function all_clients()
  return compat.clients_named(M.NAME)
end
M.all_clients = all_clients

--- The live client for `root`, if one is running or starting.
function M.client_for_root(root)
  local id = root and M.by_root[root]
  local client = id and vim.lsp.get_client_by_id(id)
  if client and not is_stopped(client) then
    return client
  end
  return nil
end

--- A codeqa client already attached to `bufnr`.
local function attached_client(bufnr)
  for _, client in ipairs(all_clients()) do
    if vim.lsp.buf_is_attached(bufnr, client.id) then
      return client
    end
  end
  return nil
end

-- Buffers -----------------------------------------------------------------------------------

local function refresh_codelens(bufnr, client)
  if not config.options.codelens or bufnr ~= vim.api.nvim_get_current_buf() then
    return
  end
  if not (client.initialized and vim.lsp.buf_is_attached(bufnr, client.id)) then
    return
  end
  -- Newer releases keep lenses fresh once enabled; older ones refresh on request
  -- (0.7 refreshes the current buffer and ignores the argument; 0.10+ takes { bufnr }).
  local codelens = vim.lsp.codelens
  if codelens.enable and pcall(codelens.enable, true, { bufnr = bufnr }) then
    return
  end
  pcall(codelens.refresh, { bufnr = bufnr })
end

local function setup_buffer(bufnr, client)
  if vim.b[bufnr].codeqa_attached then
    return
  end
  vim.b[bufnr].codeqa_attached = true
  local key = config.options.hover_keymap
  if key and not compat.has_0_10 and vim.fn.maparg(key, 'n') == '' then
    vim.keymap.set('n', key, vim.lsp.buf.hover, { buffer = bufnr, desc = 'Hover (LSP, codeqa)' })
  end
  local on_attach = config.options.on_attach
  if on_attach then
    local ok, err = pcall(on_attach, client, bufnr)
    if not ok then
      notify('your on_attach failed: ' .. tostring(err), vim.log.levels.ERROR)
    end
  end
  if config.options.codelens then
    local group = vim.api.nvim_create_augroup('codeqa_codelens_' .. bufnr, { clear = true })
    vim.api.nvim_create_autocmd({ 'BufEnter', 'BufWritePost' }, {
      group = group,
      buffer = bufnr,
      callback = function()
        local current = attached_client(bufnr) or client
        refresh_codelens(bufnr, current)
      end,
    })
  end
end

-- Starting ----------------------------------------------------------------------------------

function M.executable(cmd)
  cmd = cmd or config.options.cmd
  return vim.fn.executable(cmd[1]) == 1
end

function M.missing_message(cmd)
  cmd = cmd or config.options.cmd
  return string.format(
    "server executable '%s' not found%s. Install it from a clone of codeqa-lsp (pip install -e '.[local]', see "
      .. "editors/neovim/README.md) or point "
      .. "setup({ cmd = { '/path/to/codeqa-lsp' } }) at it; see :checkhealth codeqa",
    cmd[1], cmd[1]:find('/') and '' or ' on PATH'
  )
end

local function on_init(client)
  local state = M.states[client.id]
  if state and state.phase == 'starting' then
    state.phase = 'ready'
  end
  -- 0.7 sends didOpen for attached buffers only after on_init returns: run the waiting
  -- requests (and the first code-lens refresh) once that has happened.
  vim.schedule(function()
    local waiting = pending[client.id] or {}
    pending[client.id] = nil
    for _, callback in ipairs(waiting) do
      callback(client)
    end
    refresh_codelens(vim.api.nvim_get_current_buf(), client)
    redraw_status()
  end)
end

local function on_exit(code, signal, client_id)
  vim.schedule(function()
    local state = M.states[client_id]
    local deliberate = stopping[client_id]
    stopping[client_id] = nil
    if state then
      state.phase = (code == 0 or deliberate) and 'stopped' or 'failed'
      if state.phase == 'failed' then
        crashed_roots[state.root] = true
      end
      if M.by_root[state.root] == client_id then
        M.by_root[state.root] = nil
      end
    end
    local waiting = pending[client_id] or {}
    pending[client_id] = nil
    local reason = string.format('codeqa-lsp exited (code %s%s); its messages are in %s', tostring(code),
      signal and signal ~= 0 and (', signal ' .. signal) or '', vim.lsp.get_log_path())
    -- Requests waiting for this server report the exit themselves: say it once.
    for _, callback in ipairs(waiting) do
      callback(nil, reason, vim.log.levels.ERROR)
    end
    local exiting = vim.v.exiting ~= nil and vim.v.exiting ~= vim.NIL
    if not deliberate and code ~= 0 and not exiting and #waiting == 0 then
      notify(reason, vim.log.levels.ERROR)
    end
    redraw_status()
  end)
end

local function client_config(root)
  local options = config.options
  local settings = vim.deepcopy(options.settings)
  local init_options = vim.deepcopy(options.settings)
  init_options.clientFeatures = { answerNotification = true }
  -- The setup() table is the user's own configuration: the server trusts endpoints and keys
  -- only under `userSettings` (PROTOCOL.md "Trust"; top-level keys count as workspace-scoped).
  init_options.userSettings = next(settings) and vim.deepcopy(settings) or vim.empty_dict()
  return {
    name = M.NAME,
    cmd = options.cmd,
    cmd_env = options.cmd_env,
    cmd_cwd = root,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ':t') } },
    init_options = init_options,
    -- Answers the server's workspace/configuration pull for section `codeqa`.
    settings = { codeqa = next(settings) and settings or vim.empty_dict() },
    handlers = handlers.handlers,
    on_init = on_init,
    on_exit = on_exit,
    flags = { debounce_text_changes = 300 },
  }
end

local function wants_attach(bufnr)
  return project.buffer_file(bufnr) ~= nil
    and vim.tbl_contains(config.options.filetypes, vim.bo[bufnr].filetype)
end

--- Start (or reuse) the client for `root`; attach `bufnr` when it is a project file.
--- @param quiet boolean autostart: report failures itself (a missing executable only once);
---   otherwise the caller reports the returned error
--- @return table|nil client, string|nil error
function M.start(root, bufnr, quiet)
  local attach = bufnr and wants_attach(bufnr)
  local client = M.client_for_root(root)
  if client then
    if attach and not vim.lsp.buf_is_attached(bufnr, client.id) then
      vim.lsp.buf_attach_client(bufnr, client.id)
      setup_buffer(bufnr, client)
      refresh_codelens(bufnr, client)
    end
    return client
  end
  if quiet and crashed_roots[root] then
    return nil, 'the server of ' .. root .. ' crashed; run a :CodeQA command to restart it'
  end
  crashed_roots[root] = nil
  local cmd = config.options.cmd
  if not M.executable(cmd) then
    local message = M.missing_message(cmd)
    if quiet and not reported_missing[cmd[1]] then
      reported_missing[cmd[1]] = true
      notify(message, vim.log.levels.ERROR)
    end
    return nil, message
  end
  local client_config_table = client_config(root)
  local ok, id = compat.start_client(client_config_table, bufnr, attach)
  if not ok or not id then
    local message = 'could not start ' .. table.concat(cmd, ' ') .. ': ' .. tostring(id)
    if quiet then
      notify(message, vim.log.levels.ERROR)
    end
    return nil, message
  end
  M.by_root[root] = id
  if not M.states[id] then
    M.states[id] = { root = root, phase = 'starting' }
  end
  client = vim.lsp.get_client_by_id(id)
  if attach and client then
    setup_buffer(bufnr, client)
  end
  return client
end

--- Autostart entry point (FileType autocmd): attach a project file buffer, quietly skip others.
function M.attach(bufnr)
  local file = project.buffer_file(bufnr)
  if not file then
    return nil
  end
  local root = project.find_root(file, config.options.root_markers)
  if not root then
    return nil
  end
  return M.start(root, bufnr, true)
end

--- The project root for a buffer: its file's root, else the working directory's.
function M.root_for(bufnr)
  local file = project.buffer_file(bufnr)
  local markers = config.options.root_markers
  local root = file and project.find_root(file, markers) or project.find_root(vim.fn.getcwd(), markers)
  if root then
    return root
  end
  return nil, string.format('no project found above %s (looked for %s); open a file inside a project',
    file and vim.fn.fnamemodify(file, ':~:h') or vim.fn.fnamemodify(vim.fn.getcwd(), ':~'),
    table.concat(markers, ', '))
end

--- The client serving `bufnr`, started if needed (explicit commands).
function M.client_for(bufnr)
  local client = attached_client(bufnr)
  if client then
    return client
  end
  local root, err = M.root_for(bufnr)
  if not root then
    return nil, err, vim.log.levels.WARN -- where the user is, not what is installed
  end
  return M.start(root, bufnr, false)
end

--- Call `callback(client)` once the client for `bufnr` is initialized, or
--- `callback(nil, reason, level)` when there is none (level: how to report it).
function M.with_client(bufnr, callback)
  local client, err, level = M.client_for(bufnr)
  if not client then
    return callback(nil, err, level or vim.log.levels.ERROR)
  end
  if client.initialized then
    return callback(client)
  end
  pending[client.id] = pending[client.id] or {}
  table.insert(pending[client.id], callback)
end

local function rpc_error_message(err)
  if type(err) == 'table' then
    return tostring(err.message or vim.inspect(err))
  end
  return tostring(err)
end

--- Run a `workspace/executeCommand` on `client`; `callback(err_message, result)`.
--- @return table handle for M.cancel
function M.execute(client, bufnr, command, argument, callback)
  local handle = { client = client }
  local params = { command = command, arguments = argument ~= nil and { argument } or {} }
  local ok, request_id = compat.request(client, 'workspace/executeCommand', params, function(err, result)
    if handle.cancelled then
      return -- the user closed the window: neither the answer nor "cancelled" is news
    end
    handle.done = true
    if err then
      callback(rpc_error_message(err), nil)
    else
      callback(nil, result)
    end
  end, bufnr)
  if not ok then
    handle.done = true
    callback('codeqa-lsp is not running', nil)
  end
  handle.id = request_id
  return handle
end

--- Stop a running request (the server stops generating on $/cancelRequest).
function M.cancel(handle)
  if handle and handle.id and not handle.done and not is_stopped(handle.client) then
    handle.done = true
    handle.cancelled = true
    compat.cancel_request(handle.client, handle.id)
  end
end

--- Statusline state for `bufnr`'s client (or the only client when the buffer has none).
--- Cheap on purpose: statuslines are evaluated on every redraw.
function M.state_for(bufnr)
  local client = attached_client(bufnr)
  if not client then
    local clients = all_clients()
    client = #clients == 1 and clients[1] or nil
  end
  return client and M.states[client.id] or nil, client
end

return M
