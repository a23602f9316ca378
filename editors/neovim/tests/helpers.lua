-- A tiny test harness for headless Neovim 0.7+ (no plenary/busted on a clean machine).
--
-- Each *_spec.lua runs in its own `nvim --headless -u NONE` (see run.sh) and ends with
-- H.finish(), which writes "passed failed" to $CODEQA_RESULTS and quits with the outcome.
-- An uncaught error under `-c` would hang 0.7, so every test runs under xpcall and a
-- watchdog quits the editor if a spec gets stuck anyway.
local H = {}

local function env(name)
  local value = os.getenv(name)
  assert(value and value ~= '', name .. ' is not set: run the specs through tests/run.sh')
  return value
end

H.plugin_dir = env('CODEQA_PLUGIN_DIR')
H.tmp = env('CODEQA_TEST_TMP')
H.server = os.getenv('CODEQA_SERVER')
H.spec = os.getenv('CODEQA_SPEC') or 'spec'

vim.opt.runtimepath:prepend(H.plugin_dir)
vim.o.swapfile = false
vim.o.hidden = true
vim.o.columns = 120
vim.o.lines = 40

local passed, failed = 0, 0
local finished = false

-- Test lines go to stdout: headless Neovim writes its own messages (echo, :write) to
-- stderr without line ends, and run.sh keeps those apart.
local function out(text)
  io.stdout:write(text .. '\n')
  io.stdout:flush()
end
H.out = out

local function write_results()
  local path = os.getenv('CODEQA_RESULTS')
  if path and path ~= '' then
    local file = io.open(path, 'w')
    if file then
      file:write(string.format('%d %d\n', passed, failed))
      file:close()
    end
  end
end

function H.finish()
  if finished then
    return
  end
  finished = true
  write_results()
  out(string.format('%s: %d passed, %d failed', H.spec, passed, failed))
  if failed > 0 then
    vim.cmd('cquit 1')
  else
    vim.cmd('qall!')
  end
end

-- Quit even if a test waits forever on something that never comes.
local watchdog = vim.loop.new_timer()
local WATCHDOG_MS = tonumber(os.getenv('CODEQA_WATCHDOG_MS') or '') or 90000
watchdog:start(WATCHDOG_MS, 0, vim.schedule_wrap(function()
  out(string.format('not ok - %s: watchdog fired after %d ms', H.spec, WATCHDOG_MS))
  failed = failed + 1
  H.finish()
end))

-- Notifications are recorded (and echoed to stdout to make failures readable).
H.notifications = {}
vim.notify = function(message, level)
  table.insert(H.notifications, { message = tostring(message), level = level or vim.log.levels.INFO })
  out(string.format('  [notify %s] %s', tostring(level or vim.log.levels.INFO), tostring(message)))
end

function H.clear_notifications()
  H.notifications = {}
end

function H.notifications_matching(pattern, level)
  local found = {}
  for _, n in ipairs(H.notifications) do
    if n.message:find(pattern) and (level == nil or n.level == level) then
      table.insert(found, n)
    end
  end
  return found
end

-- Assertions ---------------------------------------------------------------------------------

local function fail(message, level)
  error(message, (level or 1) + 1)
end

function H.ok(value, message)
  if not value then
    fail('expected a true value: ' .. (message or ''), 2)
  end
  return value
end

function H.eq(actual, expected, message)
  if not vim.deep_equal(actual, expected) then
    fail(string.format('%s\n    expected: %s\n    actual:   %s', message or 'values differ',
      vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

function H.contains(haystack, needle, message)
  if type(haystack) == 'table' then
    haystack = table.concat(haystack, '\n')
  end
  if type(haystack) ~= 'string' or not haystack:find(needle, 1, true) then
    fail(string.format('%s\n    expected to find: %s\n    in: %s', message or 'text not found',
      vim.inspect(needle), vim.inspect(haystack)), 2)
  end
end

--- Wait until `condition()` is truthy; fail with `what` when it never happens.
function H.wait_for(what, condition, timeout_ms)
  local value
  local ok = vim.wait(timeout_ms or 20000, function()
    value = condition()
    return value
  end, 20)
  if not ok then
    fail('timed out waiting for ' .. what, 2)
  end
  return value
end

-- Running ------------------------------------------------------------------------------------

function H.test(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    passed = passed + 1
    out('ok - ' .. name)
  else
    failed = failed + 1
    out('not ok - ' .. name .. '\n' .. tostring(err):gsub('\n', '\n    '))
  end
end

--- Run a whole spec body safely, then quit.
function H.run(body)
  local ok, err = xpcall(body, debug.traceback)
  if not ok then
    failed = failed + 1
    out('not ok - ' .. H.spec .. ' crashed outside a test\n' .. tostring(err))
  end
  H.finish()
end

-- Fixtures -----------------------------------------------------------------------------------

--- Write `files` ({ ['rel/path'] = text }) into a fresh directory; returns its absolute path.
function H.workspace(name, files)
  local root = H.tmp .. '/' .. name
  vim.fn.delete(root, 'rf')
  vim.fn.mkdir(root, 'p')
  for rel, text in pairs(files) do
    local path = root .. '/' .. rel
    vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
    vim.fn.writefile(vim.split(text, '\n', { plain = true }), path)
  end
  return vim.fn.resolve(root)
end

--- 1-based line numbers of lines matching `pattern` in `path`.
function H.lines_matching(path, pattern)
  local found = {}
  for lnum, line in ipairs(vim.fn.readfile(path)) do
    if line:find(pattern) then
      table.insert(found, lnum)
    end
  end
  return found
end

--- Open `path` in the current window with its filetype set (-u NONE has no detection).
function H.edit(path, filetype)
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local bufnr = vim.api.nvim_get_current_buf()
  if filetype and vim.bo[bufnr].filetype ~= filetype then
    vim.bo[bufnr].filetype = filetype
  end
  return bufnr
end

--- Floating windows currently open.
function H.floats()
  local found = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      table.insert(found, win)
    end
  end
  return found
end

function H.buffer_text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n')
end

function H.press(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), 'x', false)
end

return H
