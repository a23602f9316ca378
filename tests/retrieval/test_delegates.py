"""Delegates (top-level functions that only forward to the method of the same name) below
their targets, and forwarders to another name giving their place to the definition they call:
the detectors on real tree-sitter chunks, and the ranking through a real index (SQLite FTS5,
hnswlib, the `hash` embedder) and the real searcher."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codeqa_lsp.chunking.chunker import chunk_source
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.retrieval.delegates import (
    forward_target,
    forwarded_call,
    forwards_to,
    targets_lead_forwarders,
)
from codeqa_lsp.retrieval.graph import delegates_below_targets
from tests.retrieval.searchers import hash_searcher

# viper's shape: a default instance, package functions forwarding to its methods.
VIPER = """package viper

var v *Viper

// AutomaticEnv makes Viper check if environment variables match any of the existing keys.
func AutomaticEnv() { v.AutomaticEnv() }

// AutomaticEnv makes Viper check if environment variables match any of the existing keys.
func (v *Viper) AutomaticEnv() {
	v.automaticEnvApplied = true
}

// SetEnvPrefix defines a prefix that environment variables will use.
func SetEnvPrefix(in string) {
	v.SetEnvPrefix(in)
}

// SetEnvPrefix defines a prefix that environment variables will use.
func (v *Viper) SetEnvPrefix(in string) {
	if in != "" {
		v.envPrefix = in
	}
}

// containsAny reports whether the field's value contains any of the param's characters.
func containsAny(fl FieldLevel) bool {
	return strings.ContainsAny(fl.Field().String(), fl.Param())
}

// Reset clears every setting and makes a new default instance.
func Reset() {
	v = New()
	SupportedExts = []string{"json", "toml"}
}

// Load reads the configuration of the default instance.
func Load() error { return v.ReadInConfig() }
"""

STRUCTLOG = '''
def get_logger(*args, **initial_values):
    """Only calls `structlog.get_logger`, but has the correct type hints."""
    return structlog.get_logger(*args, **initial_values)


def get_level(name):
    """The numeric level of a level name."""
    return levels.get_level(name) or DEFAULT
'''


def _chunks(path: str, text: str) -> dict[str, Chunk]:
    return {f"{c.kind}:{c.symbol}": c for c in chunk_source(path, text)}


def test_a_function_that_only_forwards_to_its_own_name_is_a_delegate() -> None:
    go = _chunks("viper.go", VIPER)
    assert forwards_to(go["function:AutomaticEnv"]) == "AutomaticEnv"  # on one line
    assert forwards_to(go["function:SetEnvPrefix"]) == "SetEnvPrefix"
    assert forwards_to(go["method:Viper.AutomaticEnv"]) is None  # the target itself
    assert forwards_to(go["function:containsAny"]) is None  # another name: it implements
    assert forwards_to(go["function:Reset"]) is None  # two statements
    assert forwards_to(go["function:Load"]) is None  # forwards to another name
    py = _chunks("stdlib.py", STRUCTLOG)
    assert forwards_to(py["function:get_logger"]) == "get_logger"  # its docstring aside
    assert forwards_to(py["function:get_level"]) is None  # does more than forward


def test_a_delegate_goes_below_its_target_only_when_the_target_is_a_candidate() -> None:
    go = _chunks("viper.go", VIPER)
    facade, method = go["function:AutomaticEnv"], go["method:Viper.AutomaticEnv"]
    other = go["function:Reset"]
    chunks = {c.id: c for c in (facade, method, other)}
    scores = {facade.id: 1.0, method.id: 0.9, other.id: 0.6}
    delegates_below_targets(scores, chunks)
    assert scores[method.id] == 0.9
    assert scores[facade.id] == 0.5  # half its own score, below the target and the others
    assert scores[other.id] == 0.6
    alone = {facade.id: 1.0, other.id: 0.6}  # the target is no candidate: nothing moves
    delegates_below_targets(alone, chunks)
    assert alone == {facade.id: 1.0, other.id: 0.6}


def test_the_method_that_does_the_work_leads_its_delegate(tmp_path: Path) -> None:
    """The one-line delegate is all doc comment and name, so it matches best on its own."""
    with hash_searcher(tmp_path, {"viper.go": VIPER}) as searcher:
        hits = searcher.search("check if environment variables match existing keys", top_k=4).hits
    symbols = [(h.chunk.kind, h.chunk.symbol) for h in hits]
    assert symbols[:2] == [("method", "Viper.AutomaticEnv"), ("function", "AutomaticEnv")]


# Forwarders to another name: rxjs's `switchAll`, commons-csv's `toMap`.
OPERATORS = {
    "src/operators/switchAll.ts": """
/** Flattens a stream of streams, switching to each new inner stream as it arrives. */
export function switchAll<O>(): OperatorFunction<O, ObservedValueOf<O>> {
  return switchMap(identity);
}
""",
    "src/operators/switchMap.ts": """
/**
 * Projects each source value to an inner stream, unsubscribing from the previous inner
 * stream when a new value arrives: only the latest inner stream is followed.
 */
export function switchMap<T, R>(project: (value: T) => R): OperatorFunction<T, R> {
  return operate((source, subscriber) => {
    let innerSubscriber = null;
    source.subscribe((value) => {
      innerSubscriber?.unsubscribe();
      innerSubscriber = project(value).subscribe(subscriber);
    });
  });
}
""",
}

RECORD = """
public final class CSVRecord {
    /** Copies this record into a new Map using its header names. */
    public Map<String, String> toMap() {
        return putIn(new LinkedHashMap<String, String>());
    }

    /** Puts all values of this record into the given Map, keyed by header name. */
    <M extends Map<String, String>> M putIn(final M map) {
        for (final Entry<String, Integer> entry : getHeaderMapRaw().entrySet()) {
            final int col = entry.getValue();
            if (col < values.length) {
                map.put(entry.getKey(), values[col]);
            }
        }
        return map;
    }

    /** Checks whether a column of this name has a value. */
    public boolean isSet(final String name) {
        return isMapped(name) && getHeaderMapRaw().get(name) < values.length;
    }

    @Override
    public String toString() {
        return "CSVRecord [values=" + Arrays.toString(values) + "]";
    }

    public String[] values() {
        return values;
    }

    public Iterator<String> iterator() {
        return toList().iterator();
    }
}
"""


def test_a_function_whose_body_is_one_call_to_another_name_is_a_forwarder() -> None:
    ts = _chunks("src/operators/switchAll.ts", OPERATORS["src/operators/switchAll.ts"])
    assert forwarded_call(ts["function:switchAll"]) == ("", "switchMap")
    java = _chunks("CSVRecord.java", RECORD)
    assert forwarded_call(java["method:CSVRecord.toMap"]) == ("", "putIn")
    assert forwarded_call(java["method:CSVRecord.putIn"]) is None  # it does the work
    assert forwarded_call(java["method:CSVRecord.isSet"]) is None  # decides something
    assert forwarded_call(java["method:CSVRecord.toString"]) is None  # builds a text
    assert forwarded_call(java["method:CSVRecord.iterator"]) == ("", "toList")  # chained
    go = _chunks("viper.go", VIPER)
    assert forwarded_call(go["function:Load"]) == ("v.", "ReadInConfig")
    assert forwarded_call(go["function:AutomaticEnv"]) is None  # its own name: a delegate
    assert forwarded_call(go["function:Reset"]) is None  # two statements
    py = _chunks("structlog/stdlib.py", STRUCTLOG)
    assert forwarded_call(py["function:get_logger"]) is None  # its own name
    assert forwarded_call(py["function:get_level"]) is None  # `or DEFAULT`: more than a call


def _definitions(*chunks: Chunk) -> Callable[[str], list[Chunk]]:
    return lambda name: [c for c in chunks if c.name == name]


def test_a_forwarders_target_is_in_its_file_or_the_one_definition_of_a_bare_call() -> None:
    ts = _chunks("src/operators/switchAll.ts", OPERATORS["src/operators/switchAll.ts"])
    impl = _chunks("src/operators/switchMap.ts", OPERATORS["src/operators/switchMap.ts"])
    forwarder, target = ts["function:switchAll"], impl["function:switchMap"]
    call = forwarded_call(forwarder)
    assert call is not None
    assert forward_target(forwarder, call, _definitions(target)) == target
    twin = _chunks("src/internal/switchMap.ts", OPERATORS["src/operators/switchMap.ts"])
    both = _definitions(target, twin["function:switchMap"])
    assert forward_target(forwarder, call, both) is None  # two places: which one is unknown
    # A name alone is no address: a function of that name in a module named otherwise.
    helpers = _chunks("src/util/helpers.ts", OPERATORS["src/operators/switchMap.ts"])
    assert forward_target(forwarder, call, _definitions(helpers["function:switchMap"])) is None
    # A call on a variable resolves in the forwarder's file only.
    go = _chunks("viper.go", VIPER)
    load = go["function:Load"]
    elsewhere = _chunks("other.go", "package x\n\nfunc ReadInConfig() error { return nil }\n")
    assert forward_target(load, ("v.", "ReadInConfig"), _definitions(*elsewhere.values())) is None
    # A call on a type reaches that type's member.
    aliases = _chunks(
        "lib/factory_bot/aliases.rb",
        "module FactoryBot\n  def self.aliases_for(attribute)\n    [attribute]\n  end\nend\n",
    )
    method = next(c for c in aliases.values() if c.name == "aliases_for")
    found = forward_target(load, ("FactoryBot.", "aliases_for"), _definitions(method))
    assert found == method


def test_the_target_takes_the_forwarders_place_unless_the_question_names_it() -> None:
    java = _chunks("CSVRecord.java", RECORD)
    to_map = java["method:CSVRecord.toMap"]
    others = [java[f"method:CSVRecord.{n}"] for n in ("isSet", "toString", "values", "iterator")]
    ranked = [(to_map, 1.0)] + [(c, 0.9 - 0.1 * i) for i, c in enumerate(others)]
    definitions = _definitions(*java.values())
    moved = [c.name for c, _ in targets_lead_forwarders(ranked, definitions, named=set())]
    # iterator() forwards to toList(), which this file does not define: it stays.
    assert moved == ["putIn", "isSet", "toString", "values", "iterator", "toMap"]
    named = [c.name for c, _ in targets_lead_forwarders(ranked, definitions, {to_map.id})]
    assert named == ["toMap", "putIn", "isSet", "toString", "values", "iterator"]


def test_the_operator_doing_the_work_leads_the_one_forwarding_to_it(tmp_path: Path) -> None:
    question = "which operator switches to each new inner stream as it arrives?"
    with hash_searcher(tmp_path, OPERATORS) as searcher:
        symbols = [h.chunk.symbol for h in searcher.search(question, top_k=5).hits]
    assert symbols[0] == "switchMap", symbols


def test_a_forwarder_holding_the_quoted_message_or_asked_about_as_a_use_stays() -> None:
    java = _chunks("CSVRecord.java", RECORD)
    to_map, is_set = java["method:CSVRecord.toMap"], java["method:CSVRecord.isSet"]
    ranked = [(to_map, 1.0), (is_set, 0.9)]
    held = targets_lead_forwarders(ranked, _definitions(*java.values()), set(), {to_map.id})
    assert held == ranked


def test_who_calls_a_helper_lists_the_forwarders_that_call_it(tmp_path: Path) -> None:
    """`toSortedMap` forwards to `sorted`, passing `putIn`'s result: a use of `putIn`, which a
    question about uses wants listed, not replaced by `sorted`."""
    record = RECORD.replace(
        "    /** Checks whether",
        "    /** A sorted copy. */\n"
        "    public Map<String, String> toSortedMap() {\n"
        "        return sorted(putIn(new TreeMap<String, String>()));\n"
        "    }\n\n"
        "    static <M> M sorted(final M map) {\n"
        "        return map;\n"
        "    }\n\n"
        "    /** Checks whether",
        1,
    )
    with hash_searcher(tmp_path, {"CSVRecord.java": record}) as searcher:
        symbols = [h.chunk.symbol for h in searcher.search("who calls putIn?", top_k=4).hits]
    assert {"CSVRecord.toMap", "CSVRecord.toSortedMap"} <= set(symbols[:3]), symbols
