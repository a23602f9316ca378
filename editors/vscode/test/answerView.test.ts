import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { applyDelta, applyError, applyResult, renderAnswer, splitExtractiveNote, startAnswer } from "../src/answerView";
import { pushHistory } from "../src/history";
import type { AnswerResult } from "../src/protocol";

const result: AnswerResult = {
  requestId: "r-1",
  answer: "Discounts are applied in `apply_discount` [1](file:///w/shop/cart.py#L20-L31).",
  citations: [
    {
      number: 1,
      uri: "file:///w/shop/cart.py",
      range: { start: { line: 19, character: 0 }, end: { line: 31, character: 0 } },
      symbol: "apply_discount",
      path: "shop/cart.py",
      startLine: 20,
      endLine: 31,
      stale: false,
    },
    {
      number: 2,
      uri: "file:///w/shop/<x>.py",
      range: { start: { line: 0, character: 0 }, end: { line: 3, character: 0 } },
      symbol: "<script>",
      path: "shop/<x>.py",
      startLine: 1,
      endLine: 3,
      stale: true,
    },
  ],
  confident: true,
  provider: "extractive",
  model: null,
  error: null,
};

describe("answer state", () => {
  it("appends deltas of its own request and ignores others", () => {
    let state = startAnswer("How?", "r-1");
    state = applyDelta(state, "r-1", "Disc");
    state = applyDelta(state, "other", "XXX");
    state = applyDelta(state, "r-1", "ounts");
    assert.equal(state.text, "Discounts");
    assert.equal(state.phase, "streaming");
  });

  it("adopts the server's request id when it started the answer (code lens)", () => {
    let state = startAnswer("Explain", undefined);
    state = applyDelta(state, "srv-9", "a");
    state = applyDelta(state, "srv-10", "b");
    assert.equal(state.requestId, "srv-9");
    assert.equal(state.text, "a");
    assert.equal(applyResult(state, { ...result, requestId: "srv-9" }).phase, "done");
  });

  it("replaces the streamed text by the final answer and ignores late deltas", () => {
    let state = applyDelta(startAnswer("How?", "r-1"), "r-1", "partial");
    state = applyResult(state, result);
    assert.equal(state.text, result.answer);
    assert.equal(applyDelta(state, "r-1", "late"), state);
  });

  it("ignores a result for another request", () => {
    const state = startAnswer("How?", "r-2");
    assert.equal(applyResult(state, result), state);
  });

  it("shows errors from the result or the transport", () => {
    const fromResult = applyResult(startAnswer("How?", "r-1"), { ...result, error: "model timed out" });
    assert.equal(fromResult.phase, "error");
    assert.match(renderAnswer(fromResult), /role="alert">model timed out</);
    assert.equal(applyError(startAnswer("q", "r"), "server gone").error, "server gone");
  });
});

describe("answer rendering", () => {
  it("renders the question, the answer with citation links and an escaped Sources list", () => {
    const html = renderAnswer(applyResult(startAnswer("How are <discounts> applied?", "r-1"), result));
    assert.match(html, /<h1 class="question">How are &lt;discounts&gt; applied\?<\/h1>/);
    assert.match(html, /<code>apply_discount<\/code> <a href="#" class="cite" data-citation="1"/);
    assert.match(html, /<h2>Sources<\/h2>/);
    assert.match(html, /data-citation="1"><span class="num">\[1\]<\/span> apply_discount — shop\/cart.py:20-31<\/a>/);
    assert.match(html, /<li class="source stale"><a [^>]*data-citation="2"><span class="num">\[2\]<\/span> &lt;script&gt; — shop\/&lt;x&gt;.py:1-3<\/a> <span class="badge stale"/);
    assert.ok(!html.includes("<script>"));
  });

  it("warns when the server is not confident", () => {
    const html = renderAnswer(applyResult(startAnswer("q", "r-1"), { ...result, confident: false }));
    assert.match(html, /Low confidence/);
  });

  it("shows progress while waiting and streaming", () => {
    assert.match(renderAnswer(startAnswer("q", "r")), /Searching the index/);
    assert.match(renderAnswer(applyDelta(startAnswer("q", "r"), "r", "**bold")), /Generating/);
  });
});

describe("question history", () => {
  it("keeps the most recent first, without duplicates, bounded", () => {
    assert.deepEqual(pushHistory(["b", "a"], "a"), ["a", "b"]);
    assert.deepEqual(pushHistory(["a"], "   "), ["a"]);
    assert.deepEqual(pushHistory(["c", "b", "a"], "d", 3), ["d", "c", "b"]);
  });
});

describe("the extractive notice", () => {
  // The server's note, verbatim (codeqa_lsp/answering/extractive.py NO_MODEL_NOTE).
  const note =
    "*No language model is configured, so this is an extractive answer: the code the index found most relevant, " +
    "quoted as is. To get written answers, set the `provider` setting to `anthropic` (with `ANTHROPIC_API_KEY`) or " +
    "`openai` (with `OPENAI_API_KEY`, or `baseUrl` pointing at a local OpenAI-compatible server such as Ollama).*";
  const extractive = { ...result, answer: `${note}\n\n**[1]** \`apply_discount\` in shop/cart.py` };

  it("is split from the answer body", () => {
    const { note: found, body } = splitExtractiveNote(extractive.answer);
    assert.equal(found, note);
    assert.equal(body, "**[1]** `apply_discount` in shop/cart.py");
    assert.deepEqual(splitExtractiveNote("plain *emphasis* answer"), { note: undefined, body: "plain *emphasis* answer" });
  });

  it("shows as one line on the first answer and not at all on the next", () => {
    const first = renderAnswer({ ...applyResult(startAnswer("Q", "r-1"), extractive), showExtractiveNotice: true });
    assert.equal(first.match(/No language model/g)?.length, 1);
    assert.match(first, /class="notice extractive"/);
    const next = renderAnswer({ ...applyResult(startAnswer("Q", "r-1"), extractive), showExtractiveNotice: false });
    assert.doesNotMatch(next, /No language model|ANTHROPIC_API_KEY/);
    assert.match(next, /apply_discount/);
  });
});
