"""Names defined by assignment (`constants.py`) through the real pipeline (SQLite FTS5,
hnswlib, the `hash` embedder): a navigation to a constant lands on the code that defines it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.retrieval.searchers import hash_searcher

# Each name is mentioned by other code more often than it is defined, so without the
# assignment the search ranks its users first.
FILES = {
    "cjson.h": """
#ifndef CJSON_NESTING_LIMIT
#define CJSON_NESTING_LIMIT 1000
#endif

typedef struct cJSON { struct cJSON *next; int type; } cJSON;
""",
    # The one use is a long function that names the constant once.
    "cjson.c": """
static int parse_array(parse_buffer *input_buffer) {
    if (input_buffer->depth >= CJSON_NESTING_LIMIT) { return 0; }
"""
    + "".join(f"    item{n} = read_item(input_buffer, item{n - 1}, {n});\n" for n in range(1, 40))
    + "    return 1;\n}\n",
    # Says "cJSON nesting limit" more often than any use, and is none.
    "cjson_doc.c": """
/* The cJSON nesting limit: how deep cJSON nesting goes. Nesting limit, cJSON nesting limit. */
int nesting_limit_default(void) { return cjson_nesting_limit_default; }
""",
    "pkg/settings.py": '''
"""Settings read once at start."""
import os

DEFAULT_TIMEOUT: float = 30.0
RETRIES = int(os.environ.get("RETRIES", "3"))
''',
    "pkg/client.py": '''
from pkg.settings import DEFAULT_TIMEOUT


def fetch(url, timeout=DEFAULT_TIMEOUT):
    """Fetch a URL; DEFAULT_TIMEOUT applies unless the caller passes a timeout. To change it,

    DEFAULT_TIMEOUT = 5

    goes in settings.py, not here (a docstring's example is no definition)."""
    return get(url, timeout=timeout or DEFAULT_TIMEOUT)
''',
    "source/constants.ts": """
export const requestMethods = ['get', 'post', 'put', 'patch', 'head', 'delete'] as const;
export const supportsAbortSignal = typeof globalThis.AbortSignal === 'function';
""",
    "source/ky.ts": """
import {requestMethods} from './constants.js';

export function validateMethod(method: string): boolean {
  // requestMethods lists what requestMethods allows
  return requestMethods.includes(method.toLowerCase() as (typeof requestMethods)[number]);
}
""",
    "lib/constants.rb": """
module Rack
  RACK_REQUEST_QUERY_HASH             = 'rack.request.query_hash'
  RACK_REQUEST_QUERY_STRING           = 'rack.request.query_string'
end
""",
    "lib/request.rb": """
module Rack
  class Request
    def GET
      get_header(RACK_REQUEST_QUERY_HASH) || set_header(RACK_REQUEST_QUERY_HASH, parse_query)
    end
  end
end
""",
    # A constant inside a class, re-exported by another module under the same name (rack).
    "lib/query_parser.rb": """
module Rack
  class QueryParser
    class QueryLimitError < RangeError
    end

    # The old name for the error raised when params are nested too deeply.
    ParamsTooDeepError = QueryLimitError

    def normalize_params(params, name, v, depth)
      raise ParamsTooDeepError if depth >= param_depth_limit
      params[name] = v
    end
  end
end
""",
    "lib/utils.rb": """
module Rack
  module Utils
    ParamsTooDeepError = QueryParser::ParamsTooDeepError

    def self.param_depth_limit
      default_query_parser.param_depth_limit
    end
  end
end
""",
    "pkg/loops.py": "\n\n".join(
        f"def step_{n}(items):\n    total = 0\n    for item in items:\n"
        f"        total = total + item * {n}\n    return total\n"
        for n in range(8)
    ),
}


@pytest.mark.parametrize(
    ("question", "path"),
    [
        ("where is CJSON_NESTING_LIMIT defined", "cjson.h"),
        ("where is DEFAULT_TIMEOUT set", "pkg/settings.py"),
        ("requestMethods", "source/constants.ts"),
        ("where is RACK_REQUEST_QUERY_HASH defined", "lib/constants.rb"),
        # A qualified name: the assignment inside the qualifier's definition.
        ("Rack::QueryParser::ParamsTooDeepError", "lib/query_parser.rb"),
        ("where is Rack::Utils::ParamsTooDeepError defined", "lib/utils.rb"),
    ],
)
def test_a_navigation_to_a_constant_finds_its_assignment(
    tmp_path: Path, question: str, path: str
) -> None:
    with hash_searcher(tmp_path, FILES) as searcher:
        response = searcher.search(question, top_k=3)
        assert [hit.chunk.path for hit in response.hits if hit.exact_symbol] == [path]
        assert response.hits[0].chunk.path == path


def test_a_name_assigned_in_many_places_is_no_definition(tmp_path: Path) -> None:
    with hash_searcher(tmp_path, FILES) as searcher:
        response = searcher.search("where is `total` defined", top_k=3)
        assert not any(hit.exact_symbol for hit in response.hits)


def test_the_uses_of_a_constant_follow_its_definition(tmp_path: Path) -> None:
    with hash_searcher(tmp_path, FILES) as searcher:
        ranked = [
            f"{hit.chunk.path}:{hit.chunk.symbol}"
            for hit in searcher.search("where is CJSON_NESTING_LIMIT used", top_k=3).hits
        ]
        assert ranked[:2] == ["cjson.h:<module>", "cjson.c:parse_array"]
        ranked = [
            f"{hit.chunk.path}:{hit.chunk.symbol}"
            for hit in searcher.search("who uses RACK_REQUEST_QUERY_HASH", top_k=3).hits
        ]
        assert ranked[:2] == ["lib/constants.rb:Rack", "lib/request.rb:Rack.Request.GET"]
