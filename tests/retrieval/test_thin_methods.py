"""Thin methods (a body of a few lines that decides nothing: an accessor, a forward, a
setter) weigh less than the code doing the work: the test on real tree-sitter chunks, the
prior per question, and the ranking through a real index (SQLite FTS5, hnswlib, the `hash`
embedder) and the real searcher."""

from __future__ import annotations

from pathlib import Path

from codeqa_lsp.retrieval.priors import THIN_PRIOR, QueryPriors, is_thin
from tests.chunks import chunks_by_symbol
from tests.retrieval.searchers import hash_searcher

RETRY = """
package net;

public class RetryPolicy {
    private int maxAttempts;
    private Level level;

    /**
     * The maximum number of attempts before the call gives up retrying and rethrows the
     * last failure it saw. Set it with the builder; it is never below one.
     */
    public int getMaxAttempts() {
        return maxAttempts;
    }

    /** Whether a failure at this level is retried at all. */
    public boolean retries(Level failure) {
        return failure.compareTo(level) >= 0;
    }

    Response execute(Call call) throws IOException {
        int attempt = 0;
        while (true) {
            try {
                return call.run();
            } catch (IOException e) {
                attempt++;
                // The call gives up retrying once the attempts run out.
                if (attempt >= maxAttempts) {
                    throw e;
                }
                sleep(backoff(attempt));
            }
        }
    }
}
"""

SETTER = """
public class Builder {
    /** Sets the maximum number of attempts. */
    public Builder setMaxAttempts(int maxAttempts) {
        this.maxAttempts = maxAttempts;
        return this;
    }
}
"""

PYTHON = '''
class Session:
    @property
    def timeout(self):
        """Seconds to wait for the server before giving up."""
        return self._timeout


def default_timeout():
    """Seconds to wait for the server before giving up."""
    return 30
'''


def test_a_method_of_a_few_lines_deciding_nothing_is_thin() -> None:
    java = chunks_by_symbol("RetryPolicy.java", RETRY)
    assert is_thin(java["RetryPolicy.getMaxAttempts"])  # a getter, its long doc aside
    setter = chunks_by_symbol("Builder.java", SETTER)["Builder.setMaxAttempts"]
    assert is_thin(setter)  # a setter
    assert not is_thin(java["RetryPolicy.retries"])  # one line, but it compares: it decides
    assert not is_thin(java["RetryPolicy.execute"])
    assert is_thin(chunks_by_symbol("session.py", PYTHON)["Session.timeout"])  # docstring aside


def test_thin_methods_weigh_less_unless_the_question_asks_how_to() -> None:
    java = chunks_by_symbol("RetryPolicy.java", RETRY)
    getter, work = java["RetryPolicy.getMaxAttempts"], java["RetryPolicy.execute"]
    function = chunks_by_symbol("session.py", PYTHON)["default_timeout"]
    question = QueryPriors("when does the call give up retrying?")
    assert question.thin_factor(getter) == THIN_PRIOR
    assert question.thin_factor(work) == 1.0
    assert question.thin_factor(function) == 1.0  # a top-level function keeps its weight
    assert QueryPriors("how do I read the maximum attempts?").thin_factor(getter) == 1.0
    printed = QueryPriors("IOException: gave up retrying after 3 attempts", output=True)
    assert printed.thin_factor(getter) == 1.0  # the code writing a message, however thin
    uses = QueryPriors("who calls getMaxAttempts?", any_size=True)
    assert uses.thin_factor(getter) == 1.0  # callers, however thin
    pasted_issue = " ".join(["the call gives up retrying too early"] * 5)
    assert QueryPriors(pasted_issue, long_query=True).thin_factor(getter) == 1.0


def test_the_code_doing_the_work_leads_the_accessor_that_documents_it(tmp_path: Path) -> None:
    with hash_searcher(tmp_path, {"RetryPolicy.java": RETRY}) as searcher:
        works = searcher.search("when does the call give up retrying?", top_k=3).hits
        api = searcher.search("how do I read the maximum number of attempts?", top_k=3).hits
    assert works[0].chunk.symbol == "RetryPolicy.execute"
    assert api[0].chunk.symbol == "RetryPolicy.getMaxAttempts"
