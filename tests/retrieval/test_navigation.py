"""Navigation to a name defined in many places (real SQLite FTS5, hnswlib, the `hash`
embedder): the fast path names the library's definitions when tests add the namesakes that
would push the name past its handful, and the definition the name spells whole comes first."""

from __future__ import annotations

from pathlib import Path

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.retrieval.named import named_definitions
from codeqa_lsp.retrieval.query import analyze
from tests.chunks import chunk_of
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


# zod: users write `z.object`, `z.lazy` (`import * as z from "zod"`); nothing defines `z`.
ZOD = {
    "src/classic/schemas.ts": """
export function object(shape, params) {
  const def = { type: "object", shape: shape ?? {}, ...normalizeParams(params) };
  return new ZodObject(def);
}

export function lazy(getter) {
  return new ZodLazy({ type: "lazy", getter });
}

export function string(params) {
  return createString(ZodString, params);
}
""",
    "src/mini/schemas.ts": """
export function object(shape, params) {
  return new ZodMiniObject({ type: "object", shape, ...normalizeParams(params) });
}

export function string(params) {
  return createString(ZodMiniString, params);
}
""",
    "src/regexes.ts": """
export const string = (params) => new RegExp(`^[\\\\s\\\\S]{${params?.minimum ?? 0},}$`);
""",
    "src/tests/recursive.test.ts": """
function lazy(getter) {
  return z.lazy(getter);
}
test("z.lazy builds recursive schemas; z.object and z.lazy nest", () => {
  const schema = z.object({ children: z.lazy(() => z.array(schema)) });
  expect(z.object({}).parse({})).toEqual({});
});
""",
    "src/core/registry.ts": """
// Every z.object schema and every z.lazy schema registers here: z.object, z.lazy, z.object.
export const registry = new Map();
""",
}


def test_an_import_alias_qualifier_names_the_top_level_definition(tmp_path: Path) -> None:
    with hash_searcher(tmp_path, ZOD) as searcher:
        hits = searcher.search("where is z.object defined", top_k=3).hits
        assert [(h.chunk.path, h.chunk.symbol) for h in hits[:2] if h.exact_symbol] == [
            ("src/classic/schemas.ts", "object"),
            ("src/mini/schemas.ts", "object"),
        ]
        # A question takes the alias's name when one library definition has it (the test's
        # namesake is not what `z` imports).
        hits = searcher.search("how are recursive schemas defined with z.lazy", top_k=3).hits
        assert (hits[0].chunk.path, hits[0].chunk.symbol) == ("src/classic/schemas.ts", "lazy")
        # Three library modules define `string`: an alias imports one, so none is assumed.
        hits = searcher.search("where is z.string defined", top_k=5).hits
        assert not any(h.exact_symbol for h in hits)


def test_the_uses_of_a_rust_macro_asked_with_its_bang_start_at_the_macro(tmp_path: Path) -> None:
    # The subject `json!` has no definition of that name: the macro is defined as `json`.
    with hash_searcher(tmp_path, MACROS) as searcher:
        hits = searcher.search("who calls json!", top_k=3).hits
        assert hits[0].chunk.symbol == "json" and hits[0].exact_symbol


def test_a_pasted_text_does_not_guess_through_import_aliases() -> None:
    # A traceback's `httpx.InvalidURL` would otherwise name the exception's class, which is
    # not where it was raised; a question may guess, a pasted text names dozens of names.
    lazy = chunk_of("export function lazy(getter) {}", path="src/schemas.ts", symbol="lazy")

    def definitions(name: str) -> list[Chunk]:
        return [lazy] if name == "lazy" else []

    info = analyze("how are recursive schemas defined with z.lazy")
    assert named_definitions(info, definitions, constants=lambda terms, limit: []) == [lazy]
    assert named_definitions(info, definitions) == []


def test_a_namespace_qualified_name_names_the_definition_without_its_namespace() -> None:
    # serilog: `Serilog.Core.Logger.Write`; symbols are spelled from the class down.
    write = chunk_of("public void Write() {}", path="src/Serilog/Core/Logger.cs")
    write = chunk_of(write.text, path=write.path, symbol="Logger.Write")
    other = chunk_of("void Write() {}", path="src/Serilog/Sinks/Console.cs", symbol="Console.Write")

    def definitions(name: str) -> list[Chunk]:
        return [write, other] if name == "Write" else []

    question = analyze("where is Serilog.Core.Logger.Write defined")
    assert named_definitions(question, definitions, constants=lambda terms, limit: []) == [write]
    # A pasted text names dozens of qualified names: no guessing there.
    assert named_definitions(question, definitions) == []


KOA = {
    "lib/context.js": """
const proto = module.exports = {
  throw (...args) {
    throw createError(...args)
  },

  onerror (err) {
    this.app.emit('error', err, this)
  }
}
""",
    "lib/application.js": """
module.exports = class Application extends Emitter {
  listen (...args) {
    const server = http.createServer(this.callback())
    return server.listen(...args)
  }
}
""",
    "__tests__/context/throw.test.js": """
describe('ctx.throw(msg)', () => {
  it('should set .status to 500', () => {
    const ctx = context()
    try { ctx.throw('boom') } catch (err) { assert.strictEqual(err.status, 500) }
  })
  it('ctx.throw with a status', () => {
    const ctx = context()
    try { ctx.throw(400, 'name required') } catch (err) { assert.strictEqual(err.status, 400) }
  })
})
""",
}


def test_an_objects_usual_name_qualifies_its_members(tmp_path: Path) -> None:
    # koa: `ctx` is the context object (`context.throw`), nothing defines `ctx`.
    with hash_searcher(tmp_path, KOA) as searcher:
        hits = searcher.search("where is ctx.throw defined", top_k=3).hits
        assert (hits[0].chunk.symbol, hits[0].exact_symbol) == ("context.throw", True)
        hits = searcher.search("where is app.listen defined", top_k=3).hits
        assert hits[0].chunk.symbol.endswith(".listen") and hits[0].exact_symbol


def test_the_word_a_where_is_defined_question_asks_for_is_a_name() -> None:
    # viper: Go's exported names are capitalised words (`Unmarshal`).
    assert analyze("where is Unmarshal defined").identifiers == ("Unmarshal",)
    assert analyze("Where is parse implemented?").identifiers == ("parse",)
    assert analyze("where are routes defined").identifiers == ()
    assert analyze("where is it defined").identifiers == ()


def test_naming_a_class_does_not_name_its_constructor() -> None:
    # retrofit: the constructor `OkHttpCall.OkHttpCall` was boosted with its class, above
    # `OkHttpCall.execute`, for "how does the OkHttpCall execute a request synchronously".
    cls = chunk_of(
        "final class OkHttpCall<T> implements Call<T> {}",
        path="OkHttpCall.java",
        symbol="OkHttpCall",
        kind="class",
        language="java",
    )
    ctor = chunk_of(
        "OkHttpCall(RequestFactory f) {}",
        path="OkHttpCall.java",
        symbol="OkHttpCall.OkHttpCall",
        kind="method",
        language="java",
    )

    def definitions(name: str) -> list[Chunk]:
        return [cls, ctor] if name == "OkHttpCall" else []

    info = analyze("how does the OkHttpCall execute a request synchronously")
    assert named_definitions(info, definitions) == [cls]
    # Asked for by its qualified name, the constructor is what is named.
    info = analyze("where is OkHttpCall.OkHttpCall defined")
    assert named_definitions(info, definitions) == [ctor]


BYTES_MUT = {
    "src/bytes_mut.rs": """
/// A unique reference to a contiguous slice of memory: BytesMut grows and is frozen into
/// Bytes, which share the storage. BytesMut converts into Bytes cheaply.
pub struct BytesMut {
    ptr: NonNull<u8>,
    len: usize,
    cap: usize,
    data: *mut Shared,
}

impl BytesMut {
    /// Converts `self` into an immutable `Bytes`: no copy, the storage is shared.
    pub fn freeze(self) -> Bytes {
        let bytes = ManuallyDrop::new(self);
        if bytes.kind() == KIND_VEC {
            let vec = rebuild_vec(bytes.ptr.as_ptr(), bytes.len, bytes.cap, off);
            return Bytes::from(vec);
        }
        unsafe { Bytes::with_vtable(bytes.ptr.as_ptr(), bytes.len, data, &SHARED_VTABLE) }
    }

    /// The number of bytes this BytesMut can hold without reallocating.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Reserves capacity for at least `additional` more bytes in this BytesMut.
    pub fn reserve(&mut self, additional: usize) {
        if self.capacity() - self.len() < additional {
            self.reserve_inner(additional, true);
        }
    }
}
""",
}


def test_a_named_types_member_named_by_a_word_stands_for_the_type(tmp_path: Path) -> None:
    """bytes: "how does freeze convert BytesMut into Bytes" ranked the struct `BytesMut`
    (named, boosted) first and `BytesMut.freeze` third; the question asks about `freeze`."""
    with hash_searcher(tmp_path, BYTES_MUT) as searcher:
        hits = searcher.search("how does freeze convert BytesMut into Bytes", top_k=3).hits
        assert hits[0].chunk.symbol == "BytesMut.freeze" and hits[0].exact_symbol
        # Naming the type alone still names the type, and a member's name used as a noun
        # elsewhere in the question names no member.
        hits = searcher.search("how does BytesMut share its storage with Bytes", top_k=3).hits
        assert hits[0].chunk.symbol == "BytesMut" and hits[0].exact_symbol
        question = "how does BytesMut grow its buffer when reserving more capacity"
        hits = searcher.search(question, top_k=3).hits
        assert hits[0].chunk.symbol != "BytesMut.capacity"
        assert not any(h.exact_symbol for h in hits if h.chunk.symbol == "BytesMut.capacity")


FLAG_SET = {
    "flag.go": """package pflag

// A FlagSet represents a set of defined flags: the flags it knows, whether it has parsed
// its arguments, and what it does with an unknown flag.
type FlagSet struct {
	Usage         func()
	name          string
	parsed        bool
	formal        map[string]*Flag
	args          []string
	errorHandling ErrorHandling
}

// Parsed reports whether f.Parse has been called.
func (f *FlagSet) Parsed() bool {
	return f.parsed
}

// Parse parses flag definitions from the argument list, which should not include the
// command name. Unknown flags are an error unless the set ignores them.
func (f *FlagSet) Parse(arguments []string) error {
	f.parsed = true
	f.args = make([]string, 0, len(arguments))
	if err := f.parseArgs(arguments); err != nil {
		return f.failf("parse: %v", err)
	}
	return nil
}

// Changed reports whether the flag was set during Parse.
func (f *FlagSet) Changed(name string) bool {
	return f.formal[name] != nil && f.formal[name].Changed
}
""",
}


def test_a_member_named_with_its_kind_and_owner_stands_for_the_owner(tmp_path: Path) -> None:
    """pflag: "where is the Parse method of FlagSet" ranked the struct `FlagSet` and
    `FlagSet.Parsed` above `FlagSet.Parse` (user pass, not an evaluation set). A member named
    with its kind and owner, or a lower-case word after the owner's name (Go capitalises
    exported methods), stands for the owner."""
    with hash_searcher(tmp_path, FLAG_SET) as searcher:
        for question in (
            "where is the Parse method of FlagSet",
            "where is FlagSet's Parse method",
            "how does the method Parse of the FlagSet fail on unknown flags",
            "how does FlagSet parse unknown flags",
        ):
            hits = searcher.search(question, top_k=3).hits
            assert hits[0].chunk.symbol == "FlagSet.Parse", question
        # The owner alone still names the owner.
        hits = searcher.search("how does FlagSet record that parsing happened", top_k=3).hits
        assert hits[0].chunk.symbol == "FlagSet"


VALIDATOR = {
    "baked_in.go": """package validator

var bakedInValidators = map[string]Func{
	"required":    hasValue,
	"required_if": requiredIf,
	"oneof":       isOneOf,
	"required_unless": requiredUnless,
	"required_with":   requiredWith,
}

// requiredUnless fails when the field is empty unless the other field equals the value:
// the field must be present only when the other field does not equal the value.
func requiredUnless(fl FieldLevel) bool {
	params := parseOneOfParam2(fl.Param())
	if requireCheckFieldValue(fl, params[0], params[1], false) {
		return true
	}
	return hasValue(fl)
}

// requiredWith fails when this field is empty while the other field is present.
func requiredWith(fl FieldLevel) bool {
	if !requireCheckFieldKind(fl, strings.TrimSpace(fl.Param()), true) {
		return hasValue(fl)
	}
	return true
}

// requiredIf is the validation function for the tag.
func requiredIf(fl FieldLevel) bool {
	params := parseOneOfParam2(fl.Param())
	for i := 0; i < len(params); i += 2 {
		if !requireCheckFieldValue(fl, params[i], params[i+1], false) {
			return true
		}
	}
	return hasValue(fl)
}

// hasValue is the validation function for validating if the current field's value is not
// the default static value.
func hasValue(fl FieldLevel) bool {
	field := fl.Field()
	return field.IsValid() && !field.IsZero()
}

// isOneOf checks that the field's value is one of the space-separated values given.
func isOneOf(fl FieldLevel) bool {
	vals := parseOneOfParam2(fl.Param())
	for _, v := range vals {
		if v == fl.Field().String() {
			return true
		}
	}
	return false
}
""",
}


def test_a_snake_case_key_names_the_function_spelled_in_camel_case(tmp_path: Path) -> None:
    """go-playground/validator (user pass): the `required_if` tag is handled by `requiredIf`,
    which ranked 7th: no definition is named `required_if`, and the tag table matched best."""
    question = "which code makes required_if fail only when the other field equals the value?"
    with hash_searcher(tmp_path, VALIDATOR) as searcher:
        assert searcher.search(question, top_k=3).hits[0].chunk.symbol == "requiredIf"
        # A constant's capitals are its own name, never a camel-case function's.
        chunks = [h.chunk.symbol for h in searcher.search("where is MAX_SIZE", top_k=3).hits]
    assert "maxSize" not in chunks
