"""TypeScript overload signatures are left out of what the embedder reads, never out of
the chunk text that citations point into."""

from __future__ import annotations

from codeqa_lsp.chunking.chunker import chunk_source
from codeqa_lsp.chunking.overloads import implementation_text

SOURCE = """\
/* tslint:disable:max-line-length */
export function switchTo<T, O extends ObservableInput<any>>(
  project: (value: T, index: number) => O
): OperatorFunction<T, ObservedValueOf<O>>;
/** @deprecated The `resultSelector` parameter will be removed in v8. */
export function switchTo<T, R, O extends ObservableInput<any>>(
  project: (value: T, index: number) => O,
  resultSelector: (outerValue: T, innerValue: ObservedValueOf<O>) => R
): OperatorFunction<T, R>;
/* tslint:enable:max-line-length */

/**
 * Maps each value to an inner stream and cancels the previous inner stream
 * whenever a new outer value arrives.
 */
export function switchTo<T, R, O extends ObservableInput<any>>(
  project: (value: T, index: number) => O,
  resultSelector?: (outerValue: T, innerValue: ObservedValueOf<O>, outerIndex: number) => R
): OperatorFunction<T, ObservedValueOf<O> | R> {
  return operate((source, subscriber) => {
    let innerSubscriber: Subscriber<ObservedValueOf<O>> | null = null;
    innerSubscriber?.unsubscribe();
  });
}
"""


def test_the_embedded_text_starts_at_the_implementations_doc_comment() -> None:
    [chunk] = [c for c in chunk_source("src/switchTo.ts", SOURCE) if c.symbol == "switchTo"]
    assert "@deprecated" in chunk.text and "): OperatorFunction<T, R>;" in chunk.text
    embedded = chunk.embed_text()
    body = embedded.split("\n", 1)[1]
    assert body.startswith("/**\n * Maps each value to an inner stream and cancels")
    assert "@deprecated" not in embedded and "OperatorFunction<T, R>;" not in embedded
    assert "innerSubscriber?.unsubscribe();" in embedded


def test_text_without_overloads_is_unchanged() -> None:
    plain = "/** Adds. */\nexport function add(a: number, b: number): number {\n  return a + b;\n}"
    assert implementation_text(plain) == plain
    # A method whose parameter type is an object literal is still the implementation.
    method = "handle(opts: { retry: number; delay: number }): void {\n  run(opts);\n}"
    assert implementation_text(method) == method


def test_overloads_of_a_method_with_object_types_and_arrows() -> None:
    text = (
        "subscribe(observer?: Partial<Observer<T>>): Subscription;\n"
        "subscribe(next: (value: T) => void): Subscription;\n"
        "subscribe(cb?: { next?: (value: T) => void } | ((value: T) => void)): Subscription {\n"
        "  return new Subscription(() => this.release(cb));\n"
        "}"
    )
    assert implementation_text(text).startswith("subscribe(cb?: { next?:")


def test_unreadable_text_is_left_as_it_is() -> None:
    # An unterminated string or comment stops the scan: nothing is dropped.
    broken = "f(a: 'x): void;\nf(a: string): void {\n  g(a);\n}"
    assert implementation_text(broken) == broken
    only_signatures = "f(a: string): void;\nf(a: number): void;"
    assert implementation_text(only_signatures) == only_signatures


def test_python_and_javascript_embed_their_text_whole() -> None:
    [chunk] = chunk_source("a.js", "function f(a) {\n  return a;\n}\n")
    assert chunk.embed_text().endswith(chunk.text)
