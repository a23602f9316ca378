"""Which words of a query are identifiers, and when a query is a navigation."""

from __future__ import annotations

import pytest

from codeqa_lsp.retrieval.query import analyze, looks_like_identifier, symbol_matches
from codeqa_lsp.retrieval.uses import with_subject


@pytest.mark.parametrize(
    "word", ["parse_args", "Session.send", "UsageError", "parseArgs", "send()", "_private", "$el"]
)
def test_identifier_shapes(word: str) -> None:
    assert looks_like_identifier(word)


@pytest.mark.parametrize("word", ["handle", "Where", "e.g", "router", "_", "HTTP", "x."])
def test_plain_words_are_not_identifiers(word: str) -> None:
    assert not looks_like_identifier(word)


def test_navigation_versus_question() -> None:
    assert analyze("where is parse_args").is_navigation
    assert analyze("Session.send").is_navigation
    assert analyze("where is `handle` defined?").identifiers == ("handle",)
    question = analyze(
        "How does UsageError.show print the usage line and the help hint before the error?"
    )
    assert question.identifiers == ("UsageError.show",)
    assert not question.is_navigation
    assert not analyze("how does the router handle errors").identifiers


def test_symbol_matching_rules() -> None:
    assert symbol_matches("Session.send", "send")
    assert symbol_matches("Session.send", "Session.send")
    assert symbol_matches("requests.Session.send", "Session.send")
    assert symbol_matches("Route.prototype.dispatch", "Route.dispatch")
    assert not symbol_matches("Session.send", "Adapter.send")
    assert not symbol_matches("Session.sender", "send")


@pytest.mark.parametrize(
    ("query", "identifiers"),
    [
        ("where is DirEntry::from_path used", ("DirEntry.from_path",)),  # Rust, C++
        ("who calls Rack::Utils.parse_query", ("Rack.Utils.parse_query",)),  # Ruby
        ("how does Command#parse work", ("Command.parse",)),  # Ruby and JS docs
        ("what does $app->run do", ("$app.run",)),  # PHP
        ("is issue #123 about C# code", ()),  # not a separator between two names
    ],
)
def test_other_languages_scope_separators_name_dotted_symbols(
    query: str, identifiers: tuple[str, ...]
) -> None:
    info = with_subject(analyze(query))
    assert info.identifiers == identifiers


@pytest.mark.parametrize("word", ["HTTPException", "IOError", "HTTPAdapter", "XMLParser"])
def test_an_acronym_then_a_word_is_an_identifier(word: str) -> None:
    assert looks_like_identifier(word)
    assert analyze(f"where is {word} defined").is_navigation


@pytest.mark.parametrize("word", ["APIs", "URLs", "IDs", "JSON", "CPUs"])
def test_plural_acronyms_are_words(word: str) -> None:
    assert not looks_like_identifier(word)


@pytest.mark.parametrize(
    ("query", "identifiers"),
    [
        ("where is the json! macro defined", ("json",)),
        ('how does json!({"a": 1}) build a Value', ("json",)),
        ("vec![1, 2]", ("vec",)),
        ("why does `println!` panic", ("println",)),
        # An exclamation mark in prose names nothing.
        ("wow! the parser broke", ()),
        ("it panics!", ()),
    ],
)
def test_a_rust_macro_as_written_is_an_identifier(query: str, identifiers: tuple[str, ...]) -> None:
    assert analyze(query).identifiers == identifiers


@pytest.mark.parametrize(
    ("query", "identifiers"),
    [
        ("where is the Typer class defined", ("Typer",)),
        ("class Command in cobra", ("Command",)),
        ("where is the Session object created", ("Session",)),
        # A question word is no name; a longer question's kind word describes the answer
        # (click-12: `Choice` itself boosted above `Choice.convert`).
        ("What type does parse return", ()),
        (
            "What error message does the Choice type produce for an invalid value, and how "
            "does case matching work?",
            (),
        ),
    ],
)
def test_a_capitalised_word_named_with_its_kind_is_an_identifier(
    query: str, identifiers: tuple[str, ...]
) -> None:
    info = analyze(query)
    assert info.identifiers == identifiers
    assert info.kinded == identifiers
    if identifiers:
        assert info.is_navigation
