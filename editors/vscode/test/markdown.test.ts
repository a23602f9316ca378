import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { escapeHtml, renderInline, renderMarkdown, type CitationRef } from "../src/markdown";

const cites = new Map<number, CitationRef>([
  [1, { title: "load_settings — src/config.py:10-20", stale: false }],
  [2, { title: "Cart.total — shop/cart.py:5-9", stale: true }],
]);

describe("escaping", () => {
  it("escapes every HTML-significant character", () => {
    assert.equal(escapeHtml(`<a href="x">'&'</a>`), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  });

  it("never passes raw HTML through, in text, emphasis, headings, lists or code", () => {
    const attack = [
      "<script>alert(1)</script>",
      "**<img src=x onerror=alert(1)>**",
      "# <iframe src=javascript:alert(1)>",
      "- <svg onload=alert(1)>",
      "`<b>code</b>`",
      "```html\n<script>bad()</script>\n```",
      "> <style>body{}</style>",
    ].join("\n\n");
    const html = renderMarkdown(attack);
    for (const tag of ["<script", "<img", "<iframe", "<svg", "<b>", "<style"]) {
      assert.ok(!html.includes(tag), `${tag} leaked into ${html}`);
    }
    assert.ok(html.includes("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert.ok(html.includes("<strong>&lt;img src=x onerror=alert(1)&gt;</strong>"));
  });

  it("does not let a link target break out of its attribute or choose a scheme", () => {
    const html = renderMarkdown('[x](javascript:alert(1)) [y](https://evil.example/"><script>) [z](file:///a.py"onclick="x)');
    assert.ok(!html.includes("href=\"javascript"));
    assert.ok(!html.includes("https://evil.example/\""));
    assert.ok(!/href="(?!#")/.test(html), `only href="#" may appear: ${html}`);
    assert.ok(html.includes('data-uri="file:///a.py&quot;onclick=&quot;x"'));
    assert.ok(!html.includes('onclick="'));
  });

  it("escapes the language of a fenced block", () => {
    const html = renderMarkdown('```"><script>\ncode\n```');
    assert.ok(!html.includes("<script>"));
  });
});

describe("blocks", () => {
  it("renders headings, paragraphs and rules", () => {
    assert.equal(renderMarkdown("## Title\n\nfirst line\nsecond line\n\n---"), "<h2>Title</h2>\n<p>first line\nsecond line</p>\n<hr>");
  });

  it("renders fenced code blocks verbatim with their language", () => {
    const html = renderMarkdown("```python\ndef f(a, b):\n    return a * b  # *not emphasis*\n```");
    assert.equal(html, '<pre><code class="language-python">def f(a, b):\n    return a * b  # *not emphasis*</code></pre>');
  });

  it("renders an unclosed fence (mid-stream) as code to the end", () => {
    assert.equal(renderMarkdown("Look:\n```js\nlet x = 1;"), '<p>Look:</p>\n<pre><code class="language-js">let x = 1;</code></pre>');
  });

  it("renders bullet and ordered lists, with nesting and a start number", () => {
    assert.equal(renderMarkdown("- one\n- two\n  - nested"), "<ul><li>one</li><li>two\n<ul><li>nested</li></ul></li></ul>");
    assert.equal(renderMarkdown("3. c\n4. d"), '<ol start="3"><li>c</li><li>d</li></ol>');
    assert.equal(renderMarkdown("1. first\n2. second"), "<ol><li>first</li><li>second</li></ol>");
  });

  it("keeps a list item's code block inside the item", () => {
    const html = renderMarkdown("- see:\n\n  ```py\n  x = 1\n  ```\n- next");
    assert.equal(html, '<ul><li>see:\n<pre><code class="language-py">x = 1</code></pre></li><li>next</li></ul>');
  });

  it("renders block quotes recursively", () => {
    assert.equal(renderMarkdown("> quoted *text*"), "<blockquote><p>quoted <em>text</em></p></blockquote>");
  });
});

describe("inline", () => {
  it("renders code spans without interpreting their content", () => {
    assert.equal(renderInline("call `a_b*c*` now"), "call <code>a_b*c*</code> now");
    assert.equal(renderInline("``has ` tick``"), "<code>has ` tick</code>");
  });

  it("renders emphasis, strong and strike-through", () => {
    assert.equal(renderInline("*a* **b** ***c*** _d_ __e__ ~~f~~"), "<em>a</em> <strong>b</strong> <strong><em>c</em></strong> <em>d</em> <strong>e</strong> <del>f</del>");
  });

  it("leaves snake_case identifiers and lone asterisks alone", () => {
    assert.equal(renderInline("load_settings_file and a_b_c"), "load_settings_file and a_b_c");
    assert.equal(renderInline("2 * 3 * 4"), "2 * 3 * 4");
    assert.equal(renderInline("*a **b** c*"), "<em>a <strong>b</strong> c</em>");
  });

  it("honours backslash escapes", () => {
    assert.equal(renderInline("\\*not em\\* \\[1\\]", { citations: cites }), "*not em* [1]");
  });

  it("turns [n](file:...) and bare [n] into citation links for known citations", () => {
    const html = renderInline("Loaded in [1](file:///src/config.py#L10-L20) and totals [2].", { citations: cites });
    assert.equal(
      html,
      'Loaded in <a href="#" class="cite" data-citation="1" title="load_settings — src/config.py:10-20">[1]</a> and totals ' +
        '<a href="#" class="cite stale" data-citation="2" title="Cart.total — shop/cart.py:5-9 (changed since indexed)">[2]</a>.',
    );
  });

  it("expands [1, 2] and leaves unknown numbers as text", () => {
    assert.equal(renderInline("[1, 2]", { citations: cites }).match(/data-citation/g)?.length, 2);
    assert.equal(renderInline("[7] and [x]", { citations: cites }), "[7] and [x]");
  });

  it("renders other file links as file links and shows non-file URLs as text", () => {
    assert.equal(
      renderInline("[config](file:///src/config.py#L3)"),
      '<a href="#" class="file-link" data-uri="file:///src/config.py#L3" title="/src/config.py#L3">config</a>',
    );
    assert.equal(renderInline("[docs](https://example.com)"), 'docs <span class="link-target">(https://example.com)</span>');
  });

  it("renders an incomplete link (mid-stream) as plain text", () => {
    assert.equal(renderInline("see [1](file:///src/con", { citations: cites }), "see [1](file:///src/con");
  });
});
