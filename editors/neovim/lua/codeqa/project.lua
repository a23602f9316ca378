-- Project root detection: the nearest ancestor directory holding a root marker.
--
-- Written against vim.loop only (vim.fs.find is 0.8+), so it behaves the same on every
-- supported Neovim.
local M = {}

local uv = vim.uv or vim.loop

local function parent(dir)
  local up = vim.fn.fnamemodify(dir, ':h')
  if up == dir then
    return nil
  end
  return up
end

--- The directory of `path` (a file or a directory), absolute and without a trailing slash.
local function start_dir(path)
  local absolute = vim.fn.fnamemodify(path, ':p')
  local stat = uv.fs_stat(absolute)
  if stat and stat.type == 'directory' then
    absolute = absolute:gsub('/+$', '')
    return absolute ~= '' and absolute or '/'
  end
  return vim.fn.fnamemodify(absolute, ':h')
end

--- Nearest ancestor of `path` (inclusive) containing any of `markers`, or nil.
function M.find_root(path, markers)
  if type(path) ~= 'string' or path == '' then
    return nil
  end
  local dir = start_dir(path)
  while dir do
    for _, marker in ipairs(markers) do
      if uv.fs_stat(dir .. '/' .. marker) then
        return dir
      end
    end
    dir = parent(dir)
  end
  return nil
end

--- True when `path` is `root` or lies below it.
function M.contains(root, path)
  if not root or not path then
    return false
  end
  local prefix = root:sub(-1) == '/' and root or root .. '/'
  return path == root or path:sub(1, #prefix) == prefix
end

--- The file a buffer shows, or nil for scratch/unnamed/special buffers.
function M.buffer_file(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= '' then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return nil
  end
  return vim.fn.fnamemodify(name, ':p')
end

return M
