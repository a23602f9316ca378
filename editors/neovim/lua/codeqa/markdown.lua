-- Markdown for display in a float, on every Neovim version.
--
-- Current Neovim (0.10+) renders markdown floats with treesitter and conceals the markup
-- (`vim.lsp.util`, the `markdown` and `markdown_inline` parsers it bundles): there the float
-- keeps the markdown and `M.attach` only switches treesitter on. Neovim 0.7-0.9 has only the
-- regex `syntax/markdown.vim`, which shows `**[1]**`, the fences and `_extractive_` as typed
-- and mangles `**make_method**` (the `_` opens an italic run). There `M.to_display` turns the
-- markdown into plain lines plus highlight ranges: the same text a reader of the rendered
-- markdown sees, with bold, italic, code and headings as highlights and links shown as their
-- text. Pure functions, unit-tested on 0.7.
local M = {}

M.namespace = vim.api.nvim_create_namespace('codeqa-markdown')

local defined = false
local function define_highlights()
  if defined then
    return
  end
  defined = true
  local set = vim.api.nvim_set_hl
  set(0, 'CodeQABold', { bold = true, default = true })
  set(0, 'CodeQAItalic', { italic = true, default = true })
  set(0, 'CodeQACode', { link = 'String', default = true })
  set(0, 'CodeQAHeading', { link = 'Title', default = true })
  set(0, 'CodeQALink', { link = 'Underlined', default = true })
  set(0, 'CodeQAQuote', { link = 'Comment', default = true })
end

--- True where Neovim renders markdown floats with treesitter (0.10+ bundles the parsers).
function M.native()
  return vim.fn.has('nvim-0.10') == 1
end

-- A delimiter opens emphasis only before a non-space and closes only after one; `_` also
-- needs a non-word character outside it, so `make_method` stays one word (CommonMark).
local function is_word(ch)
  return ch ~= '' and ch:match('[%w_]') ~= nil
end

--- One line of inline markdown → plain text and highlight ranges (0-based byte columns).
function M.inline(line)
  local out, hls = {}, {}
  local len = 0
  local function emit(text, group)
    if text == '' then
      return
    end
    table.insert(out, text)
    if group then
      table.insert(hls, { group, len, len + #text })
    end
    len = len + #text
  end
  local i = 1
  local n = #line
  while i <= n do
    local ch = line:sub(i, i)
    local handled = false
    if ch == '\\' and i < n and line:sub(i + 1, i + 1):match('%p') then
      emit(line:sub(i + 1, i + 1))
      i = i + 2
      handled = true
    elseif ch == '`' then
      local ticks = line:match('^`+', i)
      local close = line:find(ticks, i + #ticks, true)
      if close then
        local code = line:sub(i + #ticks, close - 1)
        if code:match('^ .* $') then
          code = code:sub(2, -2)
        end
        emit(code, 'CodeQACode')
        i = close + #ticks
        handled = true
      end
    elseif ch == '[' then
      local text, target, stop = line:match('^%[([^%]]*)%]%(([^)%s]*)%)()', i)
      if text then
        -- Citations stay `[n]` (<CR> on them jumps); other links show their text.
        if text:match('^%d+$') then
          emit('[' .. text .. ']', 'CodeQALink')
        else
          local inner, inner_hls = M.inline(text)
          local start = len
          emit(inner, 'CodeQALink')
          for _, hl in ipairs(inner_hls) do
            table.insert(hls, { hl[1], start + hl[2], start + hl[3] })
          end
        end
        i = stop
        handled = target ~= nil
      end
    elseif ch == '*' or ch == '_' then
      local delim = line:sub(i, i + 1) == ch .. ch and ch .. ch or ch
      local after = line:sub(i + #delim, i + #delim)
      local before = i > 1 and line:sub(i - 1, i - 1) or ''
      local opens = after ~= '' and not after:match('%s') and (ch == '*' or not is_word(before))
      if opens then
        local search = i + #delim
        while true do
          local close = line:find(delim, search, true)
          if not close then
            break
          end
          local inside_end = line:sub(close - 1, close - 1)
          local next_ch = line:sub(close + #delim, close + #delim)
          local closes = not inside_end:match('%s') and (ch == '*' or not is_word(next_ch))
            and (#delim == 2 or line:sub(close + 1, close + 1) ~= ch)
          if closes and close > i + #delim then
            local inner, inner_hls = M.inline(line:sub(i + #delim, close - 1))
            local start = len
            local group = #delim == 2 and 'CodeQABold' or 'CodeQAItalic'
            emit(inner, group)
            for _, hl in ipairs(inner_hls) do
              table.insert(hls, { hl[1], start + hl[2], start + hl[3] })
            end
            i = close + #delim
            handled = true
            break
          end
          search = close + 1
        end
      end
      if not handled then
        emit(delim)
        i = i + #delim
        handled = true
      end
    end
    if not handled then
      local stop = line:find('[\\`%[%*_]', i + 1) or (n + 1)
      emit(line:sub(i, stop - 1))
      i = stop
    end
  end
  return table.concat(out), hls
end

--- Markdown text (or lines) → display lines and highlights `{ line (0-based), group, col_start,
--- col_end }` (col_end -1: to the end of the line). One display line per source line (a fence
--- line shows empty), so line numbers still map to citations; `literal` lines (1-based set:
--- our own "Sources" rows, where `__init__.py` is a name, not emphasis) are shown as they are.
function M.to_display(markdown, literal)
  local source = type(markdown) == 'table' and markdown or vim.split(markdown or '', '\n', { plain = true })
  local lines, hls = {}, {}
  local fence
  for _, raw in ipairs(source) do
    local row = #lines
    local marker = raw:match('^%s*(```+)') or raw:match('^%s*(~~~+)')
    if fence then
      if marker and marker:sub(1, 1) == fence:sub(1, 1) and #marker >= #fence and raw:match('^%s*[`~]+%s*$') then
        fence = nil
        table.insert(lines, '')
      else
        table.insert(lines, '  ' .. raw)
        table.insert(hls, { row, 'CodeQACode', 0, -1 })
      end
    elseif marker then
      fence = marker -- the fence line itself shows empty
      table.insert(lines, '')
    elseif literal and literal[row + 1] then
      table.insert(lines, raw)
    else
      local heading, title = raw:match('^(#+)%s+(.*)$')
      local quote = raw:match('^>%s?(.*)$')
      local bullet, rest = raw:match('^(%s*)[-*+]%s+(.*)$')
      local prefix, body, whole = '', raw, nil
      if heading then
        body, whole = title, 'CodeQAHeading'
      elseif quote then
        prefix, body, whole = '│ ', quote, 'CodeQAQuote'
      elseif bullet then
        prefix, body = bullet .. '• ', rest
      end
      local text, inline = M.inline(body)
      table.insert(lines, prefix .. text)
      if whole then
        table.insert(hls, { row, whole, 0, -1 })
      end
      for _, hl in ipairs(inline) do
        table.insert(hls, { row, hl[1], #prefix + hl[2], #prefix + hl[3] })
      end
    end
  end
  return lines, hls
end

--- Put `markdown` (lines) into `buf` for display: as markdown with treesitter on current
--- Neovim, as plain text with highlights before 0.10. Returns the lines shown.
function M.set_lines(buf, win, markdown_lines, literal)
  local shown = markdown_lines
  local hls = {}
  if not M.native() then
    shown, hls = M.to_display(markdown_lines, literal)
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, shown)
  vim.api.nvim_buf_clear_namespace(buf, M.namespace, 0, -1)
  define_highlights()
  for _, hl in ipairs(hls) do
    vim.api.nvim_buf_add_highlight(buf, M.namespace, hl[2], hl[1], hl[3], hl[4])
  end
  M.attach(buf, win)
  return shown
end

--- Markdown presentation of a float: treesitter with concealed markup on 0.10+ (what
--- `vim.lsp.util.open_floating_preview` does), nothing on older versions (plain text).
function M.attach(buf, win)
  if not M.native() or vim.b[buf].codeqa_markdown then
    return
  end
  vim.b[buf].codeqa_markdown = true
  vim.bo[buf].filetype = 'markdown'
  pcall(vim.treesitter.start, buf, 'markdown')
  if win and vim.api.nvim_win_is_valid(win) then
    vim.wo[win].conceallevel = 2
    vim.wo[win].concealcursor = 'nc'
  end
end

--- The hover handler for the codeqa client on Neovim < 0.10 (later versions render hover
--- markdown themselves): the contents as display lines with highlights in a float.
function M.hover_handler(_, result, ctx, config)
  config = config or {}
  config.focus_id = ctx and ctx.method or 'textDocument/hover'
  if not (result and result.contents) then
    return
  end
  local contents = result.contents
  local text
  if type(contents) == 'string' then
    text = contents
  elseif type(contents) == 'table' and contents.value then
    text = contents.value
  else
    local parts = {}
    for _, part in ipairs(contents) do
      table.insert(parts, type(part) == 'string' and part or ('```' .. (part.language or '') .. '\n' .. (part.value or '') .. '\n```'))
    end
    text = table.concat(parts, '\n\n')
  end
  local lines, hls = M.to_display(text)
  while #lines > 0 and lines[#lines]:match('^%s*$') do
    table.remove(lines)
  end
  if #lines == 0 then
    return
  end
  local buf, win = vim.lsp.util.open_floating_preview(lines, 'plaintext', config)
  define_highlights()
  for _, hl in ipairs(hls) do
    if hl[1] < #lines then
      vim.api.nvim_buf_add_highlight(buf, M.namespace, hl[2], hl[1], hl[3], hl[4])
    end
  end
  return buf, win
end

return M
