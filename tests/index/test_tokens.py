from codeqa_lsp.index.tokens import fts_match_expression, query_terms, token_stream, tokenize


def test_identifiers_yield_parts_and_whole() -> None:
    assert tokenize("parseArgs") == ["parseargs", "parse", "args"]
    assert tokenize("parse_args") == ["parseargs", "parse", "args"]
    assert tokenize("HTTPServerError") == ["httpservererror", "http", "server", "error"]
    assert tokenize("max-age") == ["maxage", "max", "age"]
    assert tokenize("Session.send")[:3] == ["sessionsend", "session", "send"]


def test_dotted_chain_keeps_segments_and_chain() -> None:
    tokens = tokenize("os.path.join(a, 404)")
    assert tokens[0] == "ospathjoin"
    assert {"os", "path", "join", "404"} <= set(tokens)


def test_noise_is_dropped_and_unicode_kept() -> None:
    assert tokenize("a = b + c") == []
    assert "x" * 60 not in tokenize("x" * 60)
    assert {"über", "straße"} <= set(tokenize("über_straße"))


def test_query_terms_drop_stopwords_but_never_everything() -> None:
    assert query_terms("where is parse_args defined?") == ["parseargs", "parse", "args"]
    assert query_terms("what is this") == ["what", "is", "this"]


def test_match_expression_quotes_terms() -> None:
    assert fts_match_expression(["and", "near"]) == '"and" OR "near"'
    assert fts_match_expression([]) is None
    assert token_stream("getUser") == "getuser get user"
