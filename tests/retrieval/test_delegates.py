"""Delegates (top-level functions that only forward to the method of the same name) below
their targets: the detector on real tree-sitter chunks, and the ranking through a real index
(SQLite FTS5, hnswlib, the `hash` embedder) and the real searcher."""

from __future__ import annotations

from pathlib import Path

from codeqa_lsp.chunking.chunker import chunk_source
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.retrieval.delegates import forwards_to
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
