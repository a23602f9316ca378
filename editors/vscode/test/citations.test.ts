import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  citationRefs,
  parseFileTarget,
  questionPlaceholder,
  rangeForLines,
  searchItemView,
  hitRange,
  selectionForRange,
  selectionQuestionPrefix,
  sourceLabel,
  targetColumn,
} from "../src/citations";
import type { Citation } from "../src/protocol";

const citation: Citation = {
  number: 1,
  uri: "file:///w/shop/cart.py",
  range: { start: { line: 9, character: 0 }, end: { line: 20, character: 0 } },
  symbol: "Cart.total",
  path: "shop/cart.py",
  startLine: 10,
  endLine: 20,
  stale: true,
};

describe("source labels", () => {
  it("formats `symbol — path:start-end`", () => {
    assert.equal(sourceLabel(citation), "Cart.total — shop/cart.py:10-20");
  });
  it("drops the symbol when there is none and collapses one-line spans", () => {
    assert.equal(sourceLabel({ symbol: null, path: "a.js", startLine: 4, endLine: 4 }), "a.js:4");
  });
  it("maps citation numbers to titles and stale flags", () => {
    assert.deepEqual(citationRefs([citation]).get(1), { title: "Cart.total — shop/cart.py:10-20", stale: true });
  });
});

describe("file targets", () => {
  it("parses #Lstart-Lend, #Lline and no fragment", () => {
    assert.deepEqual(parseFileTarget("file:///a.py#L10-L20"), { uri: "file:///a.py", startLine: 10, endLine: 20 });
    assert.deepEqual(parseFileTarget("file:///a.py#L7"), { uri: "file:///a.py", startLine: 7, endLine: 7 });
    assert.deepEqual(parseFileTarget("file:///a.py"), { uri: "file:///a.py" });
    assert.deepEqual(parseFileTarget("file:///a.py#section"), { uri: "file:///a.py" });
  });
  it("converts 1-based inclusive lines to the protocol's LSP range", () => {
    assert.deepEqual(rangeForLines(10, 20), citation.range);
  });
});

describe("selection for a citation range", () => {
  const lengths = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26];
  const len = (line: number): number => lengths[line];

  it("selects the cited lines exactly, ending at the end of the last cited line", () => {
    assert.deepEqual(selectionForRange(citation.range, lengths.length, len), {
      start: { line: 9, character: 0 },
      end: { line: 19, character: len(19) },
    });
  });
  it("clamps a range past the end of a file that shrank", () => {
    const range = { start: { line: 2, character: 0 }, end: { line: 40, character: 0 } };
    assert.deepEqual(selectionForRange(range, 5, len), { start: { line: 2, character: 0 }, end: { line: 4, character: len(4) } });
  });
  it("keeps a range that does not end at column 0", () => {
    const range = { start: { line: 1, character: 2 }, end: { line: 1, character: 4 } };
    assert.deepEqual(selectionForRange(range, 5, len), range);
  });
  it("collapses to the start when the file is now shorter than the start", () => {
    const range = { start: { line: 10, character: 0 }, end: { line: 12, character: 0 } };
    assert.deepEqual(selectionForRange(range, 3, len), { start: { line: 2, character: 0 }, end: { line: 2, character: len(2) } });
  });
});

describe("search items and the selection question", () => {
  it("shows symbol with a kind icon, path:lines, score and preview", () => {
    const view = searchItemView({
      uri: "file:///w/util/slug.js",
      range: rangeForLines(3, 9),
      path: "util/slug.js",
      symbol: "slugify",
      kind: "function",
      score: 0.81234,
      startLine: 3,
      endLine: 9,
      preview: "  function slugify(text) {",
    });
    assert.deepEqual(view, { label: "$(symbol-function) slugify", description: "util/slug.js:3-9", detail: "0.812  function slugify(text) {" });
  });
  it("points a use at its call: the description's line and where the file opens", () => {
    const hit = {
      uri: "file:///w/tree.go",
      range: rangeForLines(383, 406),
      path: "tree.go",
      symbol: "node.FindRoute",
      kind: "method",
      score: 0.9,
      startLine: 383,
      endLine: 406,
      preview: "rn := n.findRoute(rctx, method, path)",
      useLines: [390],
    };
    assert.equal(searchItemView(hit).description, "tree.go:390");
    assert.deepEqual(hitRange(hit), rangeForLines(390, 390));
    assert.deepEqual(hitRange({ ...hit, useLines: [] }), rangeForLines(383, 406));
  });
  it("falls back to the file name and clips long previews", () => {
    const view = searchItemView({ uri: "file:///w/a/b.py", range: rangeForLines(1, 1), path: "a/b.py", score: 0.5, startLine: 1, endLine: 1, preview: "x".repeat(200) });
    assert.equal(view.label, "$(symbol-file) b.py");
    assert.equal(view.detail.length, "0.500  ".length + 120);
  });
  it("prefills the question with the selection's location", () => {
    assert.equal(selectionQuestionPrefix("shop/cart.py", 4, 12), "About shop/cart.py:4-12: ");
  });
});

describe("where a cited file opens", () => {
  it("never in the answer's group", () => {
    // Answer alone in group 1 (no editor open): the file opens in a new group 2 beside it.
    assert.equal(targetColumn(1, undefined, []), 2);
    assert.equal(targetColumn(1, 1, [1]), 2);
    // Code in group 1, answer in 2: back to the code's group.
    assert.equal(targetColumn(2, 1, [1]), 1);
    assert.equal(targetColumn(2, undefined, [1, 2]), 1);
    // No answer group (search results): the active group.
    assert.equal(targetColumn(undefined, 3, [3]), 3);
    assert.equal(targetColumn(undefined, undefined, []), 1);
  });
});

describe("the ask box's hint", () => {
  it("is about the user's project, not this tool", () => {
    assert.equal(questionPlaceholder("src/app.py"), "e.g. what calls the code in src/app.py? (Enter to ask)");
    assert.doesNotMatch(questionPlaceholder(undefined), /API key|index/);
  });
});
