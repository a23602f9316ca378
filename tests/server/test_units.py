"""The server's pure translation helpers: ranges, links, identifiers, log redaction."""

from __future__ import annotations

import logging
from pathlib import Path

from codeqa_lsp.answering.model import Citation
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.server.__main__ import RedactingFilter, redact
from codeqa_lsp.server.convert import line_link, line_range, link_citations, range_json
from codeqa_lsp.server.hover import find_definitions, identifier_at, rank_definitions
from codeqa_lsp.server.protocol import describe_structure_error, strict_converter


def test_line_ranges_cover_whole_lines() -> None:
    assert range_json(10, 20) == {
        "start": {"line": 9, "character": 0},
        "end": {"line": 20, "character": 0},
    }
    one = line_range(1, 1)
    assert (one.start.line, one.end.line) == (0, 1)
    assert line_link("file:///a.py", 3) == "file:///a.py#L3"
    assert line_link("file:///a.py", 3, 9) == "file:///a.py#L3-L9"


def test_citation_markers_become_links_and_unknown_numbers_stay_text(tmp_path: Path) -> None:
    citations = [Citation(number=1, path="pkg/a.py", start_line=4, end_line=9, symbol="f")]
    text = "See [1] and [2]; already linked [1](http://x)."
    linked = link_citations(text, tmp_path, citations)
    uri = (tmp_path / "pkg" / "a.py").as_uri()
    assert linked == f"See [1]({uri}#L4-L9) and [2]; already linked [1](http://x)."
    # Code is code: an index in a span or a block is not a citation.
    code = "`argv[1]` is read [1]:\n```python\nname = argv[1]\n```\nthen `` a[1] + `b` `` [1]"
    assert link_citations(code, tmp_path, citations) == (
        f"`argv[1]` is read [1]({uri}#L4-L9):\n```python\nname = argv[1]\n```\n"
        f"then `` a[1] + `b` `` [1]({uri}#L4-L9)"
    )


def test_identifier_under_the_cursor_with_its_qualifier() -> None:
    line = "    self.settings = load_settings(config_path)"
    assert identifier_at(line, line.index("load_settings") + 4) == ("load_settings", None)
    assert identifier_at(line, line.index("settings =") + 2) == ("settings", "self")
    assert identifier_at("x = 42", 5) is None
    assert identifier_at("short", 99) is None
    # Ruby predicates and bang methods keep their suffix (the hover retries without it).
    ruby = "    halt unless request.empty? && response.save!(force)"
    assert identifier_at(ruby, ruby.index("empty?") + 2) == ("empty?", "request")
    assert identifier_at(ruby, ruby.index("empty?") + 5) == ("empty?", "request")
    assert identifier_at(ruby, ruby.index("save!") + 1) == ("save!", "response")
    assert identifier_at("if a!=b", 3) == ("a!", None)
    # `$` belongs to JavaScript names: `$ZodType` is not `ZodType`.
    ts = "export const $ZodType = core.$constructor('$ZodType', init);"
    assert identifier_at(ts, ts.index("ZodType") + 2) == ("$ZodType", None)
    assert identifier_at(ts, ts.index("$constructor") + 4) == ("$constructor", "core")
    assert identifier_at("const s = source$.pipe()", 12) == ("source$", None)
    # `::` qualifies like `.`; a single `:` does not.
    rust = "    let e = anyhow::Error::new(msg);"
    assert identifier_at(rust, rust.index("new") + 1) == ("new", "Error")
    assert identifier_at("x = a[1:b]", 8) == ("b", None)
    assert identifier_at("d = {key:value}", 11) == ("value", None)


def _chunk(path: str, symbol: str, line: int, part: int = 0) -> Chunk:
    return Chunk(
        path=path,
        symbol=symbol,
        kind="method",
        language="python",
        start_line=line,
        end_line=line + 2,
        start_byte=0,
        end_byte=10,
        text="def x(): pass",
        part=part,
        parts=2 if part else 1,
    )


def test_definitions_rank_qualified_then_current_file_and_drop_split_parts() -> None:
    chunks = [
        _chunk("z.py", "Other.send", 1),
        _chunk("b.py", "send", 5),
        _chunk("a.py", "Session.send", 9),
        _chunk("a.py", "Session.send", 20, part=1),
        _chunk("c.py", "sender", 3),
    ]
    ranked = rank_definitions(chunks, "send", "Session", current="b.py")
    assert [(c.path, c.symbol) for c in ranked] == [
        ("a.py", "Session.send"),
        ("b.py", "send"),
        ("z.py", "Other.send"),
    ]


def test_api_keys_are_redacted_in_every_shape() -> None:
    samples = [
        "{'apiKey': 'sk-ant-api03-abcdefABCDEF0123456789'}",
        '{"apiKey": "plainsecretvalue"}',
        "api_key=hunter2hunter2",
        "Authorization: Bearer sk-proj-ABCDEFGHIJKLMNOPQRSTUV",
        "token ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123 and AKIAABCDEFGHIJKLMNOP",
        "{'authorization': 'Bearer opaque.token.value-0123'}",
    ]
    for sample in samples:
        out = redact(sample)
        for secret in (
            "abcdefABCDEF",
            "plainsecretvalue",
            "hunter2hunter2",
            "ABCDEFGHIJKLMNOPQRSTUV",
            "ghp_ABCD",
            "AKIAABCD",
            "opaque.token",
        ):
            assert secret not in out, (sample, out)
    assert redact("nothing to hide here") == "nothing to hide here"


def test_redacting_filter_rewrites_formatted_records() -> None:
    record = logging.LogRecord(
        "x", logging.DEBUG, __file__, 1, "params %s", ({"apiKey": "s3cr3t-value"},), None
    )
    assert RedactingFilter().filter(record)
    assert "s3cr3t-value" not in record.getMessage() and "***" in record.getMessage()


def test_strict_converter_rejects_non_strings_with_a_readable_reason() -> None:
    from lsprotocol import types

    converter = strict_converter()
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "textDocument/hover",
        "params": {"textDocument": {"uri": 4}, "position": {"line": 0, "character": 0}},
    }
    try:
        converter.structure(message, types.HoverRequest)
    except Exception as exc:
        assert "params.text_document.uri" in describe_structure_error(exc)
    else:
        raise AssertionError("a number was accepted as a URI")
    ok = converter.structure(
        {**message, "params": {**message["params"], "textDocument": {"uri": "file:///a"}}},
        types.HoverRequest,
    )
    assert ok.params.text_document.uri == "file:///a"


def test_a_ruby_suffix_is_kept_when_it_names_a_definition_and_dropped_otherwise() -> None:
    chunks = [_chunk("lib/a.rb", "A.empty?", 3), _chunk("lib/a.rb", "A.empty", 9)]
    by_name = {c.name: [c] for c in chunks}

    def lookup(name: str) -> list[Chunk]:
        return by_name.get(name, [])

    assert [c.symbol for c in find_definitions(lookup, "empty?", "a", None)] == ["A.empty?"]
    assert [c.symbol for c in find_definitions(lookup, "empty", "a", None)] == ["A.empty"]
    assert [c.symbol for c in find_definitions(lookup, "empty!", None, None)] == ["A.empty"]
    assert find_definitions(lookup, "!", None, None) == []
