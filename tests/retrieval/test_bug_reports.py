"""A short bug report (a paragraph of 21-40 terms) is read as a question, not as a pasted
issue: it wants the definition that misbehaves, where an issue text of forty terms and more
wants files (`query.LONG_QUERY_TERMS`). Through the real pipeline (real SQLite FTS5, hnswlib,
the `hash` embedder); the shape comes from a user pass over ozzo-validation, not an
evaluation set."""

from __future__ import annotations

from pathlib import Path

from codeqa_lsp.index.tokens import query_terms
from codeqa_lsp.retrieval.query import LONG_QUERY_TERMS
from tests.retrieval.searchers import hash_searcher

RULES = {
    "not_in.go": """package validation

// NotIn returns a validation rule that checks if a value is absent from the given list of values.
func NotIn(values ...interface{}) NotInRule {
	return NotInRule{elements: values}
}

// NotInRule is a validation rule that checks if a value is absent from the given list of values.
type NotInRule struct {
	elements []interface{}
}

// Validate checks if the given value is valid or not.
func (r NotInRule) Validate(value interface{}) error {
	value, isNil := Indirect(value)
	if isNil || IsEmpty(value) {
		return nil
	}
	for _, e := range r.elements {
		if e == value {
			return ErrNotInInvalid
		}
	}
	return nil
}
""",
    "in.go": """package validation

// In returns a validation rule that checks if a value can be found in the given list of values.
func In(values ...interface{}) InRule {
	return InRule{elements: values}
}

// InRule is a validation rule that validates if a value can be found in the given list of values.
type InRule struct {
	elements []interface{}
}

// Validate checks if the given value is valid or not.
func (r InRule) Validate(value interface{}) error {
	value, isNil := Indirect(value)
	if isNil || IsEmpty(value) {
		return nil
	}
	for _, e := range r.elements {
		if reflect.DeepEqual(e, value) {
			return nil
		}
	}
	return ErrInInvalid
}
""",
    "minmax.go": """package validation

// ThresholdRule checks a number against a threshold.
type ThresholdRule struct {
	threshold interface{}
	operator  int
}

// Validate checks the number against the threshold.
func (r ThresholdRule) Validate(value interface{}) error {
	value, isNil := Indirect(value)
	if isNil || IsEmpty(value) {
		return nil
	}
	rv := reflect.ValueOf(r.threshold)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v, err := ToInt(value)
		if err != nil {
			return err
		}
		if r.holdsFor(rv.Int(), v) {
			return nil
		}
	}
	return ErrThreshold
}

// holdsFor applies the operator to two signed integers.
func (r ThresholdRule) holdsFor(threshold, value int64) bool {
	switch r.operator {
	case greaterThan:
		return value > threshold
	default:
		return value <= threshold
	}
}
""",
}

REPORT = (
    'Using validation.NotIn with a list of byte slices (e.g. NotIn([]byte("admin"), '
    '[]byte("root"))) on a []byte field panics with `runtime error: comparing uncomparable '
    "type []uint8`. The In rule works fine with the same values. NotIn should compare values "
    "the same way In does."
)


def test_a_short_bug_report_is_read_as_a_question() -> None:
    """More terms than a question (the bar was 20), far fewer than an issue text."""
    assert 20 < len(query_terms(REPORT)) <= LONG_QUERY_TERMS


def test_a_short_bug_report_finds_the_method_that_misbehaves(tmp_path: Path) -> None:
    """Read as a pasted issue (whole-file evidence, no preamble step) the rule's class and a
    file's preamble took the places of the method whose comparison panics."""
    with hash_searcher(tmp_path, RULES) as searcher:
        symbols = [h.chunk.symbol for h in searcher.search(REPORT, top_k=5).hits]
    assert "NotInRule.Validate" in symbols[:2], symbols
    assert "<module>" not in symbols, symbols
