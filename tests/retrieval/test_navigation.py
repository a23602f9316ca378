"""Navigation to a name defined in many places (real SQLite FTS5, hnswlib, the `hash`
embedder): the fast path names the library's definitions when tests add the namesakes that
would push the name past its handful, and the definition the name spells whole comes first."""

from __future__ import annotations

from pathlib import Path

from tests.retrieval.searchers import hash_searcher

PROCESSORS = "\n\n".join(
    f"""export class {kind}Processor extends EventProcessor {{
  protected getPath(event: {kind}Event): string {{
    return event.{kind.lower()}Path
  }}
}}"""
    for kind in ("V1", "V2", "ALB", "Lattice")
)
TESTS = "\n\n".join(
    f"""describe('custom path {n}', () => {{
  const getPath = (req: Request) => new URL(req.url).pathname.slice({n})
  it('routes', () => expect(new Hono({{ getPath }}).getPath).toBe(getPath))
}})"""
    for n in range(4)
)
FILES = {
    "src/utils/url.ts": """
export const getPath = (request: Request): string => {
  const url = request.url
  const start = url.indexOf('/', url.indexOf(':') + 4)
  return url.slice(start, url.indexOf('?', start))
}
""",
    "src/adapter/handler.ts": PROCESSORS,
    "src/hono.test.ts": TESTS,
}


def test_a_name_that_tests_also_define_still_names_the_library_definitions(
    tmp_path: Path,
) -> None:
    with hash_searcher(tmp_path, FILES) as searcher:
        hits = searcher.search("where is getPath defined", top_k=6).hits
        named = [f"{h.chunk.path}:{h.chunk.symbol}" for h in hits if h.exact_symbol]
        # Nine definitions, four in tests: the five of the library lead, the function first.
        assert named[0] == "src/utils/url.ts:getPath"
        assert len(named) == 5 and not any("test" in name for name in named)


# A macro's helpers share its name's words and are longer; the macro is what was asked for.
MACROS = {
    "src/macros.rs": """
/// Construct a `Value` from a JSON literal.
#[macro_export]
macro_rules! json {
    ($($json:tt)+) => {
        json_internal!($($json)+)
    };
}

#[macro_export]
#[doc(hidden)]
macro_rules! json_internal {
    (null) => { $crate::Value::Null };
    ([]) => { $crate::Value::Array(json_internal_vec![]) };
    ({}) => { $crate::Value::Object($crate::Map::new()) };
    ($other:expr) => { $crate::to_value(&$other).unwrap() };
}

#[macro_export]
#[doc(hidden)]
macro_rules! json_unexpected {
    () => {};
}

#[macro_export]
#[doc(hidden)]
macro_rules! json_internal_vec {
    ($($content:tt)*) => { vec![$($content)*] };
}
""",
}


def test_a_rust_macro_written_with_its_bang_is_navigated_to(tmp_path: Path) -> None:
    with hash_searcher(tmp_path, MACROS) as searcher:
        hits = searcher.search("where is the json! macro defined", top_k=3).hits
        assert hits[0].chunk.symbol == "json" and hits[0].exact_symbol
