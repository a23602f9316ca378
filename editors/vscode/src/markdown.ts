/**
 * A deliberately small, safe markdown renderer for model output.
 *
 * Why not a markdown library: answers come from a language model that reads untrusted code, so
 * anything in them may be an injection attempt. This renderer never passes raw HTML through:
 * every character of the source is escaped, and only the tags it generates itself can appear
 * (paragraphs, headings, lists, block quotes, code, emphasis, links). Links are only emitted for
 * `file:` URIs and citation numbers, as `<a href="#">` with data attributes that the webview
 * script turns into messages; no URL from the model ever becomes an `href` or `src`.
 *
 * Pure module (no `vscode` import) so it is unit-tested under plain Node and bundled into both
 * the extension host and the webview.
 */

/** What the renderer needs to know about each citation number that may appear in the text. */
export interface CitationRef {
  readonly title: string;
  readonly stale: boolean;
}

export interface RenderOptions {
  /** Citation numbers known for this answer; `[n]` and `[n](file:...)` become citation links. */
  readonly citations?: ReadonlyMap<number, CitationRef>;
}

const HTML_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Escapes text for use in element content and in double- or single-quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch]);
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}>\s?/;
const LIST_ITEM = /^( *)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const BLANK = /^\s*$/;

/** Renders markdown `source` to safe HTML. Incomplete constructs (mid-stream) render as text. */
export function renderMarkdown(source: string, options: RenderOptions = {}): string {
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  return renderBlocks(lines, options);
}

function renderBlocks(lines: string[], options: RenderOptions): string {
  const out: string[] = [];
  let paragraph: string[] = [];
  const flushParagraph = (): void => {
    if (paragraph.length > 0) {
      out.push(`<p>${renderInline(paragraph.map((l) => l.trim()).join("\n"), options)}</p>`);
      paragraph = [];
    }
  };

  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      flushParagraph();
      const marker = fence[1];
      const body: string[] = [];
      i += 1;
      while (i < lines.length && !isClosingFence(lines[i], marker)) {
        body.push(lines[i]);
        i += 1;
      }
      i += 1; // skip the closing fence (or run past the end while streaming)
      out.push(renderCodeBlock(body.join("\n"), fence[2]));
      continue;
    }
    if (BLANK.test(line)) {
      flushParagraph();
      i += 1;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flushParagraph();
      const level = heading[1].length;
      out.push(`<h${level}>${renderInline(heading[2], options)}</h${level}>`);
      i += 1;
      continue;
    }
    if (RULE.test(line)) {
      flushParagraph();
      out.push("<hr>");
      i += 1;
      continue;
    }
    if (QUOTE.test(line)) {
      flushParagraph();
      const inner: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i])) {
        inner.push(lines[i].replace(QUOTE, ""));
        i += 1;
      }
      out.push(`<blockquote>${renderBlocks(inner, options)}</blockquote>`);
      continue;
    }
    const item = LIST_ITEM.exec(line);
    if (item && (paragraph.length === 0 || item[1].length === 0)) {
      flushParagraph();
      i = renderList(lines, i, options, out);
      continue;
    }
    paragraph.push(line);
    i += 1;
  }
  flushParagraph();
  return out.join("\n");
}

function isClosingFence(line: string, marker: string): boolean {
  const trimmed = line.trim();
  return trimmed.length >= marker.length && trimmed === marker[0].repeat(trimmed.length);
}

function renderCodeBlock(code: string, language: string): string {
  const lang = language.replace(/[^\w+#.-]/g, "");
  const cls = lang ? ` class="language-${escapeHtml(lang)}"` : "";
  return `<pre><code${cls}>${escapeHtml(code)}</code></pre>`;
}

/**
 * Renders the list starting at `start` and returns the index after it. Items continue with
 * lines indented deeper than the marker (nested lists, wrapped text); a blank line followed by
 * an unindented non-item line ends the list.
 */
function renderList(lines: string[], start: number, options: RenderOptions, out: string[]): number {
  const first = LIST_ITEM.exec(lines[start]);
  if (!first) return start + 1;
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const items: string[][] = [];
  let i = start;
  while (i < lines.length) {
    const line = lines[i];
    const item = LIST_ITEM.exec(line);
    if (item && item[1].length === indent && /\d/.test(item[2]) === ordered) {
      items.push([item[3]]);
      i += 1;
      continue;
    }
    if (BLANK.test(line)) {
      const next = lines[i + 1];
      if (next !== undefined && leadingSpaces(next) > indent) {
        items[items.length - 1].push("");
        i += 1;
        continue;
      }
      break;
    }
    const lineIndent = leadingSpaces(line);
    const current = items[items.length - 1];
    if (lineIndent > indent) {
      current.push(line.slice(Math.min(lineIndent, indent + 2 + (ordered ? 1 : 0))));
      i += 1;
      continue;
    }
    if (!item && !FENCE.test(line) && !HEADING.test(line) && !QUOTE.test(line)) {
      current.push(line); // lazy continuation of the item's paragraph
      i += 1;
      continue;
    }
    break;
  }
  const startAttr = ordered && parseInt(first[2], 10) !== 1 ? ` start="${parseInt(first[2], 10)}"` : "";
  const tag = ordered ? "ol" : "ul";
  const rendered = items.map((body) => `<li>${unwrapSingleParagraph(renderBlocks(body, options))}</li>`);
  out.push(`<${tag}${startAttr}>${rendered.join("")}</${tag}>`);
  return i;
}

function leadingSpaces(line: string): number {
  return line.length - line.trimStart().length;
}

function unwrapSingleParagraph(html: string): string {
  const match = /^<p>([\s\S]*?)<\/p>(\n?[\s\S]*)$/.exec(html);
  if (match && !match[1].includes("<p>")) return match[1] + match[2];
  return html;
}

/** Renders inline markdown: code spans, links, citations, emphasis, strike-through, escapes. */
export function renderInline(text: string, options: RenderOptions = {}): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === "\\" && i + 1 < text.length && /[!-/:-@[-`{-~]/.test(text[i + 1])) {
      out += escapeHtml(text[i + 1]);
      i += 2;
      continue;
    }
    if (ch === "`") {
      const span = codeSpan(text, i);
      if (span) {
        out += `<code>${escapeHtml(span.content)}</code>`;
        i = span.end;
        continue;
      }
      const run = /^`+/.exec(text.slice(i))![0];
      out += escapeHtml(run);
      i += run.length;
      continue;
    }
    if (ch === "[") {
      const link = linkAt(text, i, options);
      if (link) {
        out += link.html;
        i = link.end;
        continue;
      }
    }
    if (ch === "*" || ch === "_" || ch === "~") {
      const emphasis = emphasisAt(text, i, options);
      if (emphasis) {
        out += emphasis.html;
        i = emphasis.end;
        continue;
      }
      const run = new RegExp(`^\\${ch}+`).exec(text.slice(i))![0];
      out += escapeHtml(run);
      i += run.length;
      continue;
    }
    out += escapeHtml(ch);
    i += 1;
  }
  return out;
}

interface Span {
  readonly html: string;
  readonly end: number;
}

function codeSpan(text: string, start: number): { content: string; end: number } | undefined {
  const run = /^`+/.exec(text.slice(start))![0];
  let search = start + run.length;
  while (search < text.length) {
    const close = text.indexOf(run, search);
    if (close < 0) return undefined;
    const after = close + run.length;
    if (text[after] !== "`" && text[close - 1] !== "`") {
      let content = text.slice(start + run.length, close).replace(/\n/g, " ");
      if (/^ .*[^ ].* $/.test(content)) content = content.slice(1, -1);
      return { content, end: after };
    }
    search = after;
  }
  return undefined;
}

/** `[text](target)`, bare `[n]` / `[n, m]` citations. Other bracketed text is left alone. */
function linkAt(text: string, start: number, options: RenderOptions): Span | undefined {
  const close = matchingBracket(text, start);
  if (close < 0) return undefined;
  const label = text.slice(start + 1, close);
  if (text[close + 1] === "(") {
    const targetEnd = matchingParen(text, close + 1);
    if (targetEnd < 0) return undefined;
    const target = text.slice(close + 2, targetEnd).trim().replace(/^<(.*)>$/, "$1").split(/\s+/)[0] ?? "";
    return { html: renderLink(label, target, options), end: targetEnd + 1 };
  }
  const numbers = label.split(/\s*,\s*/);
  if (numbers.every((n) => /^\d+$/.test(n) && options.citations?.has(Number(n)))) {
    return { html: numbers.map((n) => citationLink(Number(n), options)).join(""), end: close + 1 };
  }
  return undefined;
}

function renderLink(label: string, target: string, options: RenderOptions): string {
  const number = /^\[?(\d+)\]?$/.exec(label.trim());
  if (number && options.citations?.has(Number(number[1]))) {
    return citationLink(Number(number[1]), options);
  }
  const inner = renderInline(label, { ...options, citations: undefined });
  if (/^file:\/\//i.test(target)) {
    const title = escapeHtml(displayFileTarget(target));
    return `<a href="#" class="file-link" data-uri="${escapeHtml(target)}" title="${title}">${inner}</a>`;
  }
  // Any other scheme is shown, never linked: the model does not get to choose where we navigate.
  if (!target || label.trim() === target) return inner;
  return `${inner} <span class="link-target">(${escapeHtml(target)})</span>`;
}

function citationLink(number: number, options: RenderOptions): string {
  const ref = options.citations?.get(number);
  const stale = ref?.stale ? " stale" : "";
  const title = ref ? ref.title + (ref.stale ? " (changed since indexed)" : "") : `source ${number}`;
  return `<a href="#" class="cite${stale}" data-citation="${number}" title="${escapeHtml(title)}">[${number}]</a>`;
}

function displayFileTarget(target: string): string {
  try {
    return decodeURIComponent(target.replace(/^file:\/\//i, ""));
  } catch {
    return target;
  }
}

function matchingBracket(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\") {
      i += 1;
    } else if (ch === "[") {
      depth += 1;
    } else if (ch === "]") {
      depth -= 1;
      if (depth === 0) return i;
    } else if (ch === "\n" && text[i + 1] === "\n") {
      return -1;
    }
  }
  return -1;
}

function matchingParen(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (ch === "(") depth += 1;
    else if (ch === ")") {
      depth -= 1;
      if (depth === 0) return i;
    } else if (ch === "\n") return -1;
  }
  return -1;
}

/**
 * Emphasis with `*`/`_` (1 = em, 2 = strong, 3 = both) and `~~` (strike). Underscores only count
 * at word boundaries so `load_settings_file` stays an identifier, as in CommonMark.
 */
function emphasisAt(text: string, start: number, options: RenderOptions): Span | undefined {
  const ch = text[start];
  const run = new RegExp(`^\\${ch}+`).exec(text.slice(start))![0];
  const size = Math.min(run.length, ch === "~" ? 2 : 3);
  if (ch === "~" && size !== 2) return undefined;
  const open = start + run.length;
  if (open >= text.length || /\s/.test(text[open])) return undefined;
  if (ch === "_" && start > 0 && /\w/.test(text[start - 1])) return undefined;
  const delimiter = ch.repeat(size);
  let search = open;
  while (search < text.length) {
    const close = text.indexOf(delimiter, search);
    if (close < 0) return undefined;
    const after = close + delimiter.length;
    const valid =
      close > open &&
      !/\s/.test(text[close - 1]) &&
      text[close - 1] !== ch &&
      text[after] !== ch &&
      (ch !== "_" || after >= text.length || !/\w/.test(text[after]));
    if (valid) {
      const extra = escapeHtml(ch.repeat(run.length - size));
      const inner = extra + renderInline(text.slice(open, close), options);
      return { html: wrapEmphasis(ch, size, inner), end: after };
    }
    search = close + 1;
  }
  return undefined;
}

function wrapEmphasis(ch: string, size: number, inner: string): string {
  if (ch === "~") return `<del>${inner}</del>`;
  if (size === 1) return `<em>${inner}</em>`;
  if (size === 2) return `<strong>${inner}</strong>`;
  return `<strong><em>${inner}</em></strong>`;
}
