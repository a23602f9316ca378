-- Options of require('codeqa').setup(): defaults and validation.
--
-- Validation never raises: a user's typo in their init.lua must not produce a Lua stack
-- trace on every start. Each bad option is reported once, in plain words, and its default
-- is used instead, so the rest of the configuration keeps working.
local M = {}

M.defaults = {
  -- How to start the server. Any LSP-launch list works, e.g. { 'python3', '-m', 'codeqa_lsp' }.
  cmd = { 'codeqa-lsp' },
  -- Extra environment for the server process (e.g. { OPENAI_API_KEY = '...' }).
  cmd_env = nil,
  -- Server settings, camelCase as in editors/PROTOCOL.md (embedder, provider, indexDir, ...).
  settings = {},
  -- Buffers of these filetypes are attached automatically.
  filetypes = {
    'python', 'javascript', 'javascriptreact', 'typescript', 'typescriptreact', 'go', 'rust',
    'java', 'c', 'cpp', 'cs', 'ruby', 'php', 'kotlin', 'scala', 'swift', 'lua', 'sh',
  },
  -- The project root is the nearest ancestor directory holding one of these.
  root_markers = {
    '.git', 'pyproject.toml', 'setup.py', 'setup.cfg', 'package.json', 'Cargo.toml', 'go.mod',
    'pom.xml', 'build.gradle', '.hg',
  },
  -- Start the server when a buffer of a listed filetype is opened inside a project.
  autostart = true,
  -- Show code lenses ("Explain this function") and refresh them on BufEnter/BufWritePost.
  codelens = true,
  -- Buffer-local hover mapping set on attach when the key is not mapped already
  -- (Neovim < 0.10 has no default LSP mapping for K). false: never map.
  hover_keymap = 'K',
  -- vim.notify() when indexing starts and ends.
  notify_progress = true,
  -- Open the quickfix window after :CodeQASearch.
  open_search_results = true,
  -- function(client, bufnr) called once per buffer attached to a codeqa server: the place
  -- for buffer-local mappings.
  on_attach = nil,
  -- Answer window: width/height are fractions of the editor (<= 1) or absolute cells (> 1).
  float = { border = 'rounded', width = 0.8, height = 0.7, max_width = 110 },
}

local function is_list_of_strings(value, allow_empty)
  if type(value) ~= 'table' or (not allow_empty and #value == 0) then
    return false
  end
  local count = 0
  for _ in pairs(value) do
    count = count + 1
  end
  if count ~= #value then
    return false
  end
  for _, item in ipairs(value) do
    if type(item) ~= 'string' or item == '' then
      return false
    end
  end
  return true
end

local function is_size(value)
  return type(value) == 'number' and value > 0
end

-- key -> { check(value) -> bool, what the value must be }
local checks = {
  cmd = { function(v) return is_list_of_strings(v, false) end, 'a non-empty list of strings' },
  cmd_env = { function(v) return v == nil or type(v) == 'table' end, 'a table of environment variables' },
  settings = {
    function(v) return type(v) == 'table' and (next(v) == nil or #v == 0) end,
    'a table of server settings keyed by name',
  },
  filetypes = { function(v) return is_list_of_strings(v, true) end, 'a list of filetype names' },
  root_markers = { function(v) return is_list_of_strings(v, false) end, 'a non-empty list of file names' },
  autostart = { function(v) return type(v) == 'boolean' end, 'true or false' },
  codelens = { function(v) return type(v) == 'boolean' end, 'true or false' },
  hover_keymap = { function(v) return v == false or (type(v) == 'string' and v ~= '') end, 'a key (string) or false' },
  notify_progress = { function(v) return type(v) == 'boolean' end, 'true or false' },
  open_search_results = { function(v) return type(v) == 'boolean' end, 'true or false' },
  float = { function(v) return type(v) == 'table' end, 'a table' },
  on_attach = { function(v) return type(v) == 'function' end, 'a function(client, bufnr)' },
}

local float_checks = {
  border = { function(v) return type(v) == 'string' or type(v) == 'table' end, "a border name such as 'rounded', or a list of characters" },
  width = { is_size, 'a positive number' },
  height = { is_size, 'a positive number' },
  max_width = { is_size, 'a positive number' },
}

local function describe(value)
  local text = type(value) == 'string' and string.format('%q', value) or vim.inspect(value)
  text = text:gsub('%s+', ' ')
  if #text > 40 then
    text = text:sub(1, 37) .. '...'
  end
  return text
end

-- The closest known key, to turn "unknown option 'filetype'" into a useful hint.
local function suggestion(key, known)
  local best, best_score
  for candidate in pairs(known) do
    local score = 0
    local shorter = math.min(#key, #candidate)
    for i = 1, shorter do
      if key:sub(i, i) == candidate:sub(i, i) then
        score = score + 1
      end
    end
    score = score - math.abs(#key - #candidate)
    if score >= 3 and (not best_score or score > best_score) then
      best, best_score = candidate, score
    end
  end
  return best
end

local function check_table(opts, rules, prefix, problems, out)
  for key, value in pairs(opts) do
    local rule = type(key) == 'string' and rules[key] or nil
    if not rule then
      local hint = type(key) == 'string' and suggestion(key, rules) or nil
      table.insert(problems, string.format("unknown option '%s%s' ignored%s", prefix, tostring(key),
        hint and string.format(" (did you mean '%s%s'?)", prefix, hint) or ''))
    elseif rule[1](value) then
      out[key] = value
    else
      table.insert(problems, string.format("option '%s%s' must be %s, got %s; using the default",
        prefix, key, rule[2], describe(value)))
    end
  end
end

--- Merge user options over the defaults.
--- @return table options, string[] problems (each a complete sentence fragment for the user)
function M.resolve(user)
  local options = vim.deepcopy(M.defaults)
  local problems = {}
  if user == nil then
    return options, problems
  end
  if type(user) ~= 'table' then
    table.insert(problems, string.format('setup() expects a table of options, got %s; using the defaults', describe(user)))
    return options, problems
  end
  local accepted = {}
  check_table(user, checks, '', problems, accepted)
  for key, value in pairs(accepted) do
    if key == 'float' then
      local float = {}
      check_table(value, float_checks, 'float.', problems, float)
      options.float = vim.tbl_extend('force', options.float, float)
    else
      options[key] = vim.deepcopy(value)
    end
  end
  return options, problems
end

--- The current options (defaults until setup() runs).
M.options = vim.deepcopy(M.defaults)

return M
