"""A pasted message matched against the format string that writes it (`formats.py`): alone,
in the placeholder syntaxes of several languages, and through the real pipeline (real SQLite
FTS5, hnswlib, the `hash` embedder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeqa_lsp.retrieval import literals
from codeqa_lsp.retrieval.formats import format_share
from tests.retrieval.searchers import hash_searcher

GO_MERGE = 'return fmt.Errorf("incorrect types at key %v, type %T != %T", key, b[key], val)'
PASTED_GO = "Error: incorrect types at key server.port, type float64 != string"


@pytest.mark.parametrize(
    ("code", "seen"),
    [
        (GO_MERGE, PASTED_GO),
        # Kotlin: `$name`, and `${...}` cut at its own quote (the literal ends in it).
        (
            'return "option $name cannot be used with ${others.joinToString(" or ")}"',
            "Error: option --json cannot be used with --xml or --yaml",
        ),
        (
            'raise ValueError("cannot parse %(field)s as %s here" % args)',
            ("ValueError: cannot parse start_date as a date here"),
        ),
        (
            'panic!("at least {} progress chars required, got {:?}", n, chars)',
            ("at least 2 progress chars required, got ['x']"),
        ),
        (
            'raise ArgumentError, "unknown locale #{locale} for key #{key}"',
            ("ArgumentError: unknown locale zh_TW for key greeting"),
        ),
        (
            "throw new Error(`cannot resolve ${name} from ${dir}`)",
            ("Error: cannot resolve ./util from /src/app"),
        ),
    ],
)
def test_a_format_string_matches_the_message_it_writes(code: str, seen: str) -> None:
    assert format_share(code, [seen]) >= 0.75


def test_no_match_no_share() -> None:
    assert format_share(GO_MERGE, ["incorrect number of arguments for key server.port"]) == 0.0
    # Too few fixed words to point at one writer.
    assert format_share('log.Printf("%s: %s", k, v)', ["server.port: float64"]) == 0.0
    assert format_share("no format here", [PASTED_GO]) == 0.0


def test_a_placeholder_covers_a_value_not_a_message_written_elsewhere() -> None:
    wrapper = 'return "Casting $target using $source failed; $message";'
    seen = (
        "Casting the property `age` using the record field `age` failed; Unable to cast "
        "the given data `abc` to a `int` because the value is not numeric."
    )
    assert 0.0 < format_share(wrapper, [seen]) < 0.75


GO_FILES = {
    "maps/maps.go": """
package maps

import "fmt"

// mergeStrict merges src into dest, failing when a key holds values of different types.
func mergeStrict(src, dest map[string]interface{}, fullKey string) error {
\tfor key, val := range src {
\t\tnewFullKey := key
\t\tif fullKey != "" {
\t\t\tnewFullKey = fmt.Sprintf("%v.%v", fullKey, key)
\t\t}
\t\tif _, ok := dest[key]; ok && fmt.Sprintf("%T", dest[key]) != fmt.Sprintf("%T", val) {
\t\t\treturn fmt.Errorf("incorrect types at key %v, type %T != %T", newFullKey, dest[key], val)
\t\t}
\t\tdest[key] = val
\t}
\treturn nil
}
""",
    "getters.go": """
package koanf

// Float64 returns the float64 value of a given key path or 0 if the path
// does not exist or if the value is not a valid float64.
func (ko *Koanf) Float64(path string) float64 {
\tif v := ko.Get(path); v != nil {
\t\tf, _ := toFloat64(v)
\t\treturn f
\t}
\treturn 0
}

// String returns the string value of a given key path or "" if the path
// does not exist or if the value is not a valid string.
func (ko *Koanf) String(path string) string {
\tif v := ko.Get(path); v != nil {
\t\tif s, ok := v.(string); ok {
\t\t\treturn s
\t\t}
\t}
\treturn ""
}
""",
}


def test_a_pasted_message_finds_the_format_string_writing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with hash_searcher(tmp_path, GO_FILES) as searcher:
        hits = searcher.search(PASTED_GO, top_k=3).hits
        monkeypatch.setattr(literals, "format_share", lambda text, messages: 0.0)
        by_words = searcher.search(PASTED_GO, top_k=3).hits
    assert hits[0].chunk.symbol == "mergeStrict"
    assert by_words[0].chunk.symbol != "mergeStrict"  # its word runs alone did not lead


def test_a_value_concatenated_onto_a_literal_is_a_placeholder() -> None:
    java = 'throw new IllegalArgumentException("illegal attribute format: " + attribute);'
    seen = "illegal attribute format: posix:owner:name"  # the message of the pasted line
    assert format_share(java, [seen]) == 1.0
    php = "throw new RuntimeException('Unable to open the stream ' . $path . ' for reading');"
    assert format_share(php, ["Unable to open the stream /tmp/x.csv for reading"]) > 0.75
    # A method called on a literal concatenates nothing.
    compared = 'if ("illegal attribute format".equals(kind)) { return; }'
    assert format_share(compared, [seen]) == 0.0


def test_a_literal_of_many_placeholders_against_a_near_match_is_answered() -> None:
    # A regular expression with a lazy group per placeholder backtracked without end here
    # (twenty groups, a message of the right words but not the last one). The pieces are now
    # found in order, one scan each.
    hostile = 'x = "' + " ".join(["a %s"] * 20) + ' zzz"'
    assert format_share(hostile, [" ".join(["a"] * 150)]) == 0.0
    near = 'x = "' + " ".join(["a %s"] * 20) + '"'
    assert format_share(near, [" ".join(["a"] * 41)]) > 0.0
