import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { IndexStatus } from "../src/protocol";
import { formatAge, formatPercent, statusBarView, statusSummary } from "../src/statusView";

const status: IndexStatus = {
  folders: ["/w"],
  files: 12,
  chunks: 345,
  embedded: 345,
  coverage: 1,
  embedder: "hash",
  provider: "extractive",
  model: null,
  indexing: false,
  lastIndexed: 1000,
  skipped: { secret: 1, binary: 0 },
};

describe("status bar", () => {
  it("shows indexing progress, then the chunk count", () => {
    assert.equal(
      statusBarView({ phase: "indexing", percentage: 42.4, message: "embedding chunks 1000/4000, about 30 s left" }).text,
      "$(sync~spin) CodeQA 42%: embedding chunks 1000/4000, about 30 s left",
    );
    assert.equal(statusBarView({ phase: "indexing" }).text, "$(sync~spin) CodeQA: indexing");
    assert.equal(statusBarView({ phase: "ready", status }).text, "$(database) CodeQA: 345 chunks");
  });
  it("shows partial coverage next to the count", () => {
    assert.equal(statusBarView({ phase: "ready", status: { ...status, coverage: 0.5 } }).text, "$(database) CodeQA: 345 chunks (50.0%)");
  });
  it("says when the server is not running", () => {
    assert.match(statusBarView({ phase: "failed", message: "cannot start" }).tooltip, /not running \(cannot start\)/);
  });
});

describe("status summary", () => {
  it("lists files, chunks, coverage, embedder, provider, age and skips", () => {
    assert.equal(
      statusSummary({ ...status, model: "m1" }, 1000 + 7200),
      "12 files, 345 chunks, 100% embedded, embedder hash, provider extractive (m1), indexed 2 h ago, skipped 1 secret",
    );
    assert.match(statusSummary({ ...status, indexing: true }), /indexing now/);
    const progress = { phase: "embed", done: 10, total: 40, percentage: 40, etaSeconds: 3, message: "embedding chunks 10/40, about 3 s left" } as const;
    assert.match(statusSummary({ ...status, indexing: true, progress }), /indexing now \(embedding chunks 10\/40, about 3 s left\)/);
  });
  it("formats percentages and ages", () => {
    assert.equal(formatPercent(0.9999), "100%");
    assert.equal(formatPercent(0.123), "12.3%");
    assert.equal(formatPercent(0), "0%");
    assert.equal(formatAge(30), "just now");
    assert.equal(formatAge(300), "5 min ago");
    assert.equal(formatAge(3 * 86400), "3 d ago");
  });
});
