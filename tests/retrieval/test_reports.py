"""A short bug report names the API that misbehaves; the helper it calls in its file is
lifted (`reports.py`): the rule on hand-built rankings, and through the real pipeline (real
SQLite FTS5, hnswlib, the `hash` embedder). The shape comes from a user pass over
stleary/JSON-java and apache/commons-csv, not an evaluation set."""

from __future__ import annotations

from pathlib import Path

from codeqa_lsp.chunking.chunker import chunk_source
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.tokens import query_terms
from codeqa_lsp.retrieval.query import LONG_QUERY_TERMS, REPORT_TERMS, is_report
from codeqa_lsp.retrieval.reports import CALLEE_BOOST, callees_of_named_lifted
from tests.retrieval.searchers import hash_searcher

RECORD = """
public final class CSVRecord {
    /** Returns a Map of this record's values keyed by header name. */
    public Map<String, String> toMap() {
        final Map<String, String> map = new LinkedHashMap<>();
        return putIn(map);
    }

    /** Puts the columns of a record into a Map (for toMap): one entry per header column. */
    <M extends Map<String, String>> M putIn(final M map) {
        for (final Entry<String, Integer> entry : headerMap.entrySet()) {
            map.put(entry.getKey(), values[entry.getValue()]);
        }
        return map;
    }

    /** Checks whether this record has a value for a mapped column: shorter rows may not. */
    public boolean isSet(final String name) {
        return headerMap.containsKey(name) && headerMap.get(name) < values.length;
    }

    /** Returns a value by header name: the column must be mapped and the row long enough. */
    public String get(final String name) {
        final Integer index = headerMap.get(name);
        if (index == null) {
            throw new IllegalArgumentException("Mapping for " + name + " not found");
        }
        return values[index.intValue()];
    }

    /** The comment before this record, if any. */
    public String getComment() {
        return comment;
    }

    /** The position of this record in the input, counted from one. */
    public long getRecordNumber() {
        return recordNumber;
    }

    /** How many values this record holds. */
    public int size() {
        return values.length;
    }
}
"""

REPORT = (
    "I parse a file with a header line, and some rows are shorter than the header (trailing "
    "columns missing). When I convert such a record to a Map with toMap(), the missing columns "
    "should simply be absent, but instead I get an ArrayIndexOutOfBoundsException."
)


def _chunks() -> dict[str, Chunk]:
    return {c.name: c for c in chunk_source("CSVRecord.java", RECORD) if c.kind == "method"}


def test_a_report_has_more_terms_than_a_question_and_fewer_than_an_issue() -> None:
    terms = len(query_terms(REPORT))
    assert REPORT_TERMS < terms <= LONG_QUERY_TERMS
    assert is_report(terms, long_query=False)
    assert not is_report(terms, long_query=True)  # a pasted issue wants files
    assert not is_report(len(query_terms("how does toMap handle short rows?")), False)


def test_the_helper_a_named_definition_calls_is_lifted() -> None:
    methods = _chunks()
    to_map, put_in, is_set = methods["toMap"], methods["putIn"], methods["isSet"]
    ranked = [(to_map, 1.0), (is_set, 0.9), (put_in, 0.5)]
    lifted = callees_of_named_lifted(ranked, {to_map.id})
    assert [c.name for c, _ in lifted] == ["putIn", "toMap", "isSet"]
    assert lifted[0][1] == 0.5 * (1.0 + CALLEE_BOOST)
    # Nothing named: nothing moves; a named definition is not its own callee.
    assert callees_of_named_lifted(ranked, set()) == ranked
    assert callees_of_named_lifted(ranked, {put_in.id}) == ranked
    # A callee in another file is someone else's code.
    elsewhere = chunk_source("Other.java", "class Other {\n  int putIn(int m) { return m; }\n}\n")
    other = next(c for c in elsewhere if c.name == "putIn")
    assert callees_of_named_lifted([(to_map, 1.0), (other, 0.5)], {to_map.id})[0][0] == to_map


def test_a_report_finds_the_helper_its_named_method_calls(tmp_path: Path) -> None:
    with hash_searcher(tmp_path, {"CSVRecord.java": RECORD}) as searcher:
        symbols = [h.chunk.symbol for h in searcher.search(REPORT, top_k=5).hits]
    assert symbols.index("CSVRecord.putIn") < symbols.index("CSVRecord.toMap"), symbols


def test_a_report_is_told_by_the_querys_own_terms_not_its_expansion(tmp_path: Path) -> None:
    """The code-vocabulary terms a question's phrases add (`expansion.py`: "api keys" ->
    secret, credential, token; "kept out" -> skip, exclude, ignore) are no words of the
    asker's: a question of 20 terms stays a question."""
    question = (
        "where are api keys and passwords kept out of the saved search index when the workspace "
        "scanner reads project configuration files under hidden folders during editor startup "
        "on windows machines?"
    )
    assert len(query_terms(question)) == REPORT_TERMS
    with hash_searcher(tmp_path, {"CSVRecord.java": RECORD}) as searcher:
        arms = searcher._run_arms(question, 50, None, "hybrid", 1.0)
    assert len(arms.terms) > REPORT_TERMS  # the expansion's terms were added
    assert not arms.report
    with hash_searcher(tmp_path / "report", {"CSVRecord.java": RECORD}) as searcher:
        assert searcher._run_arms(REPORT, 50, None, "hybrid", 1.0).report
