-- Pure rendering: server results (editors/PROTOCOL.md) to lines, quickfix items and messages.
--
-- Nothing here touches windows or the server, so every function is unit-tested directly.
local M = {}

local function split_lines(text)
  local lines = vim.split(text or '', '\n', { plain = true })
  for i, line in ipairs(lines) do
    lines[i] = line:gsub('\r$', '')
  end
  return lines
end
M.split_lines = split_lines

--- Answer markdown for display: `[1](file:///x.py#L3-L9)` becomes `[1]`, since the float
--- lists every source below the answer and <CR> on `[1]` jumps there. Only the server's
--- file links: `handlers[0](req)` in quoted code is a call, not a citation.
function M.shorten_links(text)
  return ((text or ''):gsub('%[(%d+)%]%(file:[^)%s]*%)', '[%1]'))
end

local function citation_file(citation, root)
  if type(citation.uri) == 'string' and citation.uri:match('^file:') then
    return vim.uri_to_fname(citation.uri)
  end
  if type(citation.path) == 'string' then
    if citation.path:sub(1, 1) == '/' or not root then
      return citation.path
    end
    return root .. '/' .. citation.path
  end
  return nil
end
M.citation_file = citation_file

--- 1-based first and last line of a citation or search result.
function M.line_span(item)
  local first = tonumber(item.startLine)
  local last = tonumber(item.endLine)
  if not first and type(item.range) == 'table' and item.range.start then
    first = item.range.start.line + 1
  end
  first = first or 1
  return first, last or first
end

local function display_path(citation, root)
  if type(citation.path) == 'string' and citation.path ~= '' then
    return citation.path
  end
  local file = citation_file(citation, root) or '?'
  return vim.fn.fnamemodify(file, ':~:.')
end

local function heading_lines(heading)
  if type(heading) ~= 'string' or heading == '' then
    return {}
  end
  return { '# ' .. heading:gsub('\n', ' '), '' }
end

--- Lines of the answer window (under `heading`, the question) and, per source line, the
--- citation it points at.
--- @return string[] lines, table<integer, table> targets (1-based line -> citation)
function M.answer_lines(result, root, heading)
  local body = split_lines(M.shorten_links(result.answer or ''))
  while #body > 0 and body[#body]:match('^%s*$') do
    table.remove(body)
  end
  if #body == 0 then
    body = { '_No answer._' }
  end
  local lines = heading_lines(heading)
  vim.list_extend(lines, body)
  local targets = {}
  if type(result.error) == 'string' and result.error ~= '' then
    table.insert(lines, '')
    table.insert(lines, '> ' .. result.error)
  end
  local citations = type(result.citations) == 'table' and result.citations or {}
  if #citations > 0 then
    table.insert(lines, '')
    table.insert(lines, '## Sources')
    for _, citation in ipairs(citations) do
      local first, last = M.line_span(citation)
      local span = last > first and string.format('%d-%d', first, last) or tostring(first)
      local line = string.format('[%s] %s:%s', tostring(citation.number or '?'), display_path(citation, root), span)
      if type(citation.symbol) == 'string' and citation.symbol ~= '' then
        line = line .. ' ' .. citation.symbol
      end
      if citation.stale then
        line = line .. ' (changed since indexed)'
      end
      table.insert(lines, line)
      targets[#lines] = citation
    end
  end
  local meta = { result.provider or 'codeqa' }
  if type(result.model) == 'string' and result.model ~= '' then
    table.insert(meta, result.model)
  end
  if result.confident == false then
    table.insert(meta, 'low confidence')
  end
  table.insert(lines, '')
  table.insert(lines, '_' .. table.concat(meta, ' · ') .. '_')
  return lines, targets
end

--- Lines shown while the answer streams in.
function M.streaming_lines(title, text)
  local lines = heading_lines(title)
  if text == '' then
    table.insert(lines, '_Searching the code…_')
  else
    vim.list_extend(lines, split_lines(M.shorten_links(text)))
  end
  return lines
end

--- The citation a `[n]` marker at (or nearest before/after) byte column `col` refers to.
function M.citation_at(line, col, citations)
  if type(citations) ~= 'table' or #citations == 0 then
    return nil
  end
  local best, best_distance
  local init = 1
  while true do
    local s, e, number = line:find('%[(%d+)%]', init)
    if not s then
      break
    end
    local distance = 0
    if col + 1 < s then
      distance = s - col - 1
    elseif col + 1 > e then
      distance = col + 1 - e
    end
    if not best_distance or distance < best_distance then
      best, best_distance = tonumber(number), distance
    end
    init = e + 1
  end
  if not best then
    return nil
  end
  for _, citation in ipairs(citations) do
    if tonumber(citation.number) == best then
      return citation
    end
  end
  return nil
end

local function trim(text)
  return (text or ''):gsub('^%s+', ''):gsub('%s+$', '')
end

--- Quickfix items for citations: `path:line: symbol — first line`.
--- `line_of(file, lnum)` returns the text of that line (the caller reads buffers or disk).
function M.citation_items(citations, root, line_of)
  local items = {}
  for _, citation in ipairs(citations or {}) do
    local file = citation_file(citation, root)
    if file then
      local first, last = M.line_span(citation)
      local text = trim(line_of and line_of(file, first) or '')
      local label = string.format('[%s] %s', tostring(citation.number or '?'), citation.symbol or '')
      table.insert(items, {
        filename = file,
        lnum = first,
        end_lnum = last,
        col = 1,
        text = text ~= '' and (trim(label) .. ' — ' .. text) or trim(label),
      })
    end
  end
  return items
end

--- Quickfix items for codeqa.search results, the score first so the list reads as a ranking.
function M.search_items(results, root)
  local items = {}
  for _, hit in ipairs(results or {}) do
    local file = citation_file(hit, root)
    if file then
      local first, last = M.line_span(hit)
      local score = tonumber(hit.score)
      local parts = { score and string.format('[%.2f]', score) or '[?]' }
      if type(hit.symbol) == 'string' and hit.symbol ~= '' then
        table.insert(parts, hit.symbol)
      end
      if type(hit.kind) == 'string' and hit.kind ~= '' then
        table.insert(parts, '(' .. hit.kind .. ')')
      end
      local text = table.concat(parts, ' ')
      local preview = trim(type(hit.preview) == 'string' and hit.preview or '')
      if preview ~= '' then
        text = text .. ' — ' .. preview
      end
      -- "who calls f?": the item goes to the call, not to the caller's first line.
      local call = type(hit.useLines) == 'table' and tonumber(hit.useLines[1]) or nil
      if call then
        first, last = call, call
      end
      table.insert(items, { filename = file, lnum = first, end_lnum = last, col = 1, text = text })
    end
  end
  return items
end

local function percent(value)
  return string.format('%d%%', math.floor((tonumber(value) or 0) * 100 + 0.5))
end

--- One line for :CodeQAStatus.
function M.status_message(status)
  local parts = {
    string.format('%s files', tostring(status.files or 0)),
    string.format('%s chunks', tostring(status.chunks or 0)),
    'coverage ' .. percent(status.coverage),
    'embedder ' .. tostring(status.embedder or '?'),
    'provider ' .. tostring(status.provider or '?'),
  }
  if type(status.model) == 'string' and status.model ~= '' then
    parts[#parts] = parts[#parts] .. ' (' .. status.model .. ')'
  end
  local text = 'CodeQA: ' .. table.concat(parts, ', ')
  if status.indexing then
    local progress = type(status.progress) == 'table' and status.progress or nil
    if progress and type(progress.message) == 'string' and progress.message ~= '' then
      text = text .. string.format(' — indexing %d%%: %s', tonumber(progress.percentage) or 0, progress.message)
    else
      text = text .. ' — indexing…'
    end
  end
  if type(status.skipped) == 'table' then
    local skipped = {}
    for reason, count in pairs(status.skipped) do
      table.insert(skipped, string.format('%s %s', tostring(count), tostring(reason)))
    end
    if #skipped > 0 then
      table.sort(skipped)
      text = text .. ' (skipped: ' .. table.concat(skipped, ', ') .. ')'
    end
  end
  return text
end

--- Statusline text for one client's state (see codeqa.lsp).
function M.statusline(state)
  if not state then
    return ''
  end
  if state.phase == 'indexing' then
    local text = 'CodeQA indexing'
    if state.percentage then
      text = text .. string.format(' %d%%', state.percentage)
    end
    if state.message and state.message ~= '' then
      text = text .. ' (' .. state.message .. ')'
    end
    return text
  end
  local words = { starting = 'CodeQA starting', ready = 'CodeQA', stopped = 'CodeQA stopped', failed = 'CodeQA failed' }
  return words[state.phase] or ''
end

return M
