-- What differs between the Neovim versions we support (Debian's 0.7.2 up to the current
-- release): client methods became `client:method()` in 0.11 (the dot form warns there),
-- `vim.lsp.get_clients` replaced `get_active_clients` in 0.10, and `vim.lsp.start` (0.8+)
-- replaced `start_client` + `buf_attach_client`. Only this module checks versions.
local M = {}

M.has_0_10 = vim.fn.has('nvim-0.10') == 1
M.has_0_11 = vim.fn.has('nvim-0.11') == 1

function M.request(client, method, params, handler, bufnr)
  if M.has_0_11 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

function M.request_sync(client, method, params, timeout_ms, bufnr)
  if M.has_0_11 then
    return client:request_sync(method, params, timeout_ms, bufnr)
  end
  return client.request_sync(method, params, timeout_ms, bufnr)
end

function M.is_stopped(client)
  if M.has_0_11 then
    return client:is_stopped()
  end
  return client.is_stopped()
end

function M.stop(client)
  if M.has_0_11 then
    client:stop()
  else
    client.stop()
  end
end

function M.cancel_request(client, id)
  if M.has_0_11 then
    client:cancel_request(id)
  else
    client.cancel_request(id)
  end
end

--- Every running client called `name`.
function M.clients_named(name)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ name = name })
  end
  local found = {}
  for _, client in pairs(vim.lsp.get_active_clients()) do
    if client.name == name then
      table.insert(found, client)
    end
  end
  return found
end

--- Start a client from `client_config`, attached to `bufnr` when `attach`.
--- @return boolean ok, integer|string id or error
function M.start_client(client_config, bufnr, attach)
  if vim.lsp.start and attach then
    return pcall(vim.lsp.start, client_config, { bufnr = bufnr })
  elseif vim.lsp.start and M.has_0_11 then
    return pcall(vim.lsp.start, client_config, { attach = false })
  end
  local ok, id = pcall(vim.lsp.start_client, client_config)
  if ok and id and attach then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return ok, id
end

return M
