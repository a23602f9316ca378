"""A message bound to a name (`bound.py`): the code using the name is where the message comes
from, alone and through the real pipeline (real SQLite FTS5, hnswlib, the `hash` embedder)."""

from __future__ import annotations

from pathlib import Path

from codeqa_lsp.index.filters import SearchFilters
from codeqa_lsp.retrieval.bound import bound_names
from codeqa_lsp.retrieval.literals import find_literals
from tests.retrieval.searchers import hash_searcher


def test_the_names_messages_are_bound_to_in_each_languages_way() -> None:
    literals = find_literals("where does 'method is not allowed' come from?", [])
    assert bound_names('\tErrMethodMismatch = errors.New("method is not allowed")', literals) == [
        "ErrMethodMismatch"
    ]
    assert bound_names("  LIMIT_METHOD: 'Method is not allowed',", literals) == ["LIMIT_METHOD"]
    java = 'static final String METHOD_NOT_ALLOWED = "Method is not allowed";'
    assert bound_names(java, literals) == ["METHOD_NOT_ALLOWED"]
    assert bound_names('#define MSG_METHOD "method is not allowed"', literals) == ["MSG_METHOD"]
    rust = '    #[error("method is not allowed")]\n    MethodNotAllowed,\n'
    assert bound_names(rust, literals) == ["MethodNotAllowed"]
    # A match arm on a qualified variant (reqwest's `Kind::Decode => f.write_str("...")`).
    arm = '            Kind::Method => f.write_str("method is not allowed")?,'
    assert bound_names(arm, literals) == ["Kind::Method"]
    assert bound_names('    Kind.METHOD -> "method is not allowed"', literals) == ["Kind.METHOD"]
    # A plain word names too many things; a line without the message binds nothing of it;
    # a message written where it is raised is bound to no name.
    assert bound_names("    'method': 'Method is not allowed',", literals) == []
    assert bound_names('    self.message = "method is not allowed"', literals) == []
    assert bound_names('ErrNotFound = errors.New("no matching route")', literals) == []
    assert bound_names('return fmt.Errorf("method is not allowed")', literals) == []


FILES = {
    "mux.go": """package mux

import "errors"

var (
	// ErrMethodMismatch is returned when the method in the request does not match
	// the method defined against the route.
	ErrMethodMismatch = errors.New("method is not allowed")
	// ErrNotFound is returned when no route match is found.
	ErrNotFound = errors.New("no matching route was found")
)

// Router registers routes to be matched and dispatches a handler.
type Router struct {
	routes []*Route
}

// Match attempts to match the given request against the router's registered routes.
func (r *Router) Match(req *Request, match *RouteMatch) bool {
	for _, route := range r.routes {
		if route.Match(req, match) {
			return true
		}
	}
	if match.MatchErr == ErrMethodMismatch {
		match.Handler = methodNotAllowedHandler()
		return true
	}
	match.MatchErr = ErrNotFound
	return false
}

// Routes returns the routes a router holds, for listing them.
func (r *Router) Routes() []*Route {
	return r.routes
}
""",
    "docs.md": "# Errors\n\nA request whose method is not allowed gets a 405 response.\n",
}


def test_a_quoted_message_bound_to_a_name_finds_the_code_using_the_name(tmp_path: Path) -> None:
    """gorilla/mux (user pass): "where does 'method is not allowed' come from" ranked the
    variable block binding `ErrMethodMismatch` first; `Router.Match` returns it."""
    with hash_searcher(tmp_path, FILES) as searcher:
        hits = searcher.search("where does 'method is not allowed' come from?", top_k=3).hits
    assert hits[0].chunk.symbol == "Router.Match"


def test_a_bound_messages_users_keep_to_the_searchs_filters(tmp_path: Path) -> None:
    """The uses are looked up under the search's filters: a search restricted to the docs and
    the variable block's file lists no code from elsewhere."""
    files = {**FILES, "route.go": FILES["mux.go"].replace("package mux", "package route")}
    files["mux.go"] = FILES["mux.go"].split("// Router registers")[0]
    with hash_searcher(tmp_path, files) as searcher:
        question = "where does 'method is not allowed' come from?"
        hits = searcher.search(question, top_k=5).hits
        assert hits[0].chunk.path == "route.go" and hits[0].chunk.symbol == "Router.Match"
        only = SearchFilters(path_globs=("mux.go",))
        hits = searcher.search(question, top_k=5, filters=only).hits
    assert hits and {hit.chunk.path for hit in hits} == {"mux.go"}


# yaml-cpp's layout (not an evaluation set): every message is a constant in one header,
# `ParserException` is thrown in many places, and the pasted report names the type.
RAISERS = {
    f"src/scan_{name}.cpp": f"""#include "exceptions.h"

namespace YAML {{
void Scanner::Scan{name.title()}(Mark mark) {{
  if (!mark.{name}) {{
    throw ParserException(mark, ErrorMsg::{name.upper()}_FAILED);
  }}
}}
}}
"""
    for name in ("tag", "key", "value", "flow", "block")
}
ANCHORS = {
    "include/exceptions.h": """#pragma once

namespace YAML {
namespace ErrorMsg {
const char* const TAG_FAILED = "bad tag";
const char* const KEY_FAILED = "bad key";
const char* const UNKNOWN_ANCHOR = "the referenced anchor is not defined: ";
}

class ParserException : public Exception {
 public:
  ParserException(const Mark& mark, const std::string& msg) : Exception(mark, msg) {}
};
}
""",
    "src/singledocparser.cpp": """#include "exceptions.h"

namespace YAML {
anchor_t SingleDocParser::LookupAnchor(const Mark& mark, const std::string& name) const {
  auto it = m_anchors.find(name);
  if (it == m_anchors.end()) {
    std::stringstream ss;
    ss << ErrorMsg::UNKNOWN_ANCHOR << name;
    throw ParserException(mark, ss.str());
  }
  return it->second;
}
}
""",
}


def test_one_of_many_raisers_of_the_pasted_type_still_uses_the_messages_binding(
    tmp_path: Path,
) -> None:
    pasted = (
        "terminate called after throwing an instance of 'YAML::ParserException'\n"
        "  what():  yaml-cpp: error at line 7, column 12: the referenced anchor is not defined: "
        "defaults"
    )
    with hash_searcher(tmp_path, {**RAISERS, **ANCHORS}) as searcher:
        hits = searcher.search(pasted, top_k=3).hits
    assert hits[0].chunk.symbol == "SingleDocParser.LookupAnchor"
