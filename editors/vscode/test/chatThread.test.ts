import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { askInThread, copyText, emptyThread, renderThread, threadDelta, threadFromStored, threadResult } from "../src/chatThread";
import type { AnswerResult } from "../src/protocol";

const note = "*No language model is configured, so this is an extractive answer: the code the index found most relevant, quoted as is.*";

function result(requestId: string, answer: string, symbol: string): AnswerResult & { threadId: string } {
  return {
    requestId, answer, confident: true, provider: "extractive", model: null, error: null, threadId: "t1",
    citations: [{ number: 1, uri: "file:///w/shop/cart.py", path: "shop/cart.py", startLine: 3, endLine: 9, symbol,
      range: { start: { line: 2, character: 0 }, end: { line: 9, character: 0 } }, stale: false }],
  };
}

describe("chat thread", () => {
  it("streams into the last turn only and keeps the thread id from the server", () => {
    let thread = askInThread(emptyThread, "how is the total computed?", "r1");
    thread = threadDelta(thread, "r1", "It sums ");
    thread = threadDelta(thread, "other", "ignored");
    assert.equal(thread.turns[0].text, "It sums ");
    thread = threadResult(thread, result("r1", `${note}\n\n**[1]** \`cart_total\``, "cart_total"));
    assert.equal(thread.threadId, "t1");
    thread = askInThread(thread, "and where is it called from?", "r2");
    thread = threadDelta(thread, "r1", "late piece of the first answer");
    assert.equal(thread.turns[1].text, "");
    thread = threadResult(thread, result("r2", `${note}\n\n**[1]** \`Cart.total\``, "Cart.total"));
    const html = renderThread(thread);
    assert.equal(html.match(/<section class="turn" data-turn="\d">/g)?.length, 2);
    assert.equal(html.match(/class="notice extractive"/g)?.length, 1, "the notice shows once per thread");
    assert.match(html, /and where is it called from\?/);
    assert.equal(html.match(/data-copy="\d"/g)?.length, 2);
    assert.equal(copyText(thread.turns[1]), "**[1]** `Cart.total`");
  });

  it("rebuilds a stored thread (after a reload) with clickable citations", () => {
    const thread = threadFromStored({
      id: "t9", title: "q", root: "/w s",
      turns: [{ question: "where?", answer: "In `f` [1].", provider: "extractive",
        citations: [{ number: 1, path: "a b.py", startLine: 4, endLine: 6, symbol: "f" }] }],
    });
    assert.equal(thread.threadId, "t9");
    const citation = thread.turns[0].result?.citations[0];
    assert.equal(citation?.uri, "file:///w%20s/a%20b.py");
    assert.deepEqual(citation?.range, { start: { line: 3, character: 0 }, end: { line: 6, character: 0 } });
    assert.match(renderThread(thread), /data-citation="1"/);
  });

  it("invites a first question when empty", () => {
    assert.match(renderThread(emptyThread), /Ask a question about your code/);
  });
});
