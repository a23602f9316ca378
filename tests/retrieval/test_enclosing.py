"""A nested function's match lifts the function that encloses it (real index: SQLite FTS5,
hnswlib, the `hash` embedder; real tree-sitter chunks)."""

from __future__ import annotations

from pathlib import Path

from codeqa_lsp.chunking.chunker import chunk_source
from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer
from codeqa_lsp.retrieval.enclosing import (
    best_matches_kept,
    enclosing_first,
    fold_nested,
    spelled_out,
)
from codeqa_lsp.retrieval.search import HybridSearcher
from tests.retrieval.searchers import hash_searcher

ROUTER = """
var proto = module.exports = {};

/**
 * Run the registered placeholder callbacks before the route.
 */
proto.process_params = function process_params(layer, called, req, res, done) {
  var keys = layer.keys;
  var i = 0;

  function param(err) {
    if (i >= keys.length) return done(err);
    var name = keys[i++].name;
    var cached = called[name];
    if (cached && cached.value === req.params[name]) {
      // placeholder value already seen in this request: callbacks are not re-run
      req.params[name] = cached.value;
      return param(cached.error);
    }
    called[name] = { value: req.params[name] };
    paramCallback();
  }

  function paramCallback() {
    var fn = layer.callbacks.shift();
    if (!fn) return param();
    fn(req, res, paramCallback, req.params);
  }

  param();
};

proto.render = function render(view, options) {
  return view.render(options);
};
"""

CLASSES = '''
class Jar:
    """Cookies by name."""

    def get(self, name):
        """The cookie called name, from any domain."""
        return self._find(name)

    def _find(self, name):
        for cookie in self.cookies:
            if cookie.name == name:
                return cookie
'''


def test_a_question_about_the_helper_lifts_the_enclosing_function(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "router.js").write_text(ROUTER)
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "index"))
    indexer = Indexer(root, settings)
    try:
        indexer.index()
        searcher = HybridSearcher(indexer, settings)
        question = "why is a cached placeholder value not re-run in the same request"
        # Ranked alone, the arms put a nested helper ahead of what encloses it...
        bm25 = [h.chunk.symbol for h in searcher.search(question, top_k=5, mode="bm25").hits]
        assert bm25.index("proto.process_params.param") < bm25.index("proto.process_params")
        # ...the full pipeline shows the enclosing function first and folds the helpers into
        # it: its citation spans their lines, and the next results are other places.
        hybrid = [h.chunk.symbol for h in searcher.search(question, top_k=5).hits]
        assert hybrid[0] == "proto.process_params"
        assert not {"proto.process_params.param", "proto.process_params.paramCallback"} & set(
            hybrid
        )
        assert "proto.render" in hybrid
        # A helper asked for by name keeps its own place.
        named = [h.chunk.symbol for h in searcher.search("where is paramCallback", top_k=5).hits]
        assert named[0] == "proto.process_params.paramCallback"
        searcher.close()
    finally:
        indexer.close()


def test_methods_never_lift_their_class_and_absent_parents_are_fetched() -> None:
    chunks = {c.symbol: c for c in chunk_source("jar.py", CLASSES)}
    ranked = [(chunks["Jar._find"], 0.9), (chunks["Jar.get"], 0.8)]
    assert enclosing_first(ranked, lambda name: [chunks["Jar"]]) == ranked

    nested = {c.symbol: c for c in chunk_source("lib/router.js", ROUTER)}
    helper = nested["proto.process_params.paramCallback"]
    asked: list[str] = []

    def definitions(name: str) -> list:  # type: ignore[type-arg]
        asked.append(name)
        return [c for c in nested.values() if c.name == name]

    lifted = enclosing_first([(helper, 0.7), (nested["proto.render"], 0.6)], definitions)
    assert [c.symbol for c, _ in lifted] == [
        "proto.process_params",
        "proto.process_params.paramCallback",
        "proto.render",
    ]
    assert asked[0] == "process_params" and lifted[0][1] == 0.7


SOCKET = """
export class Channel {
  private _connect() {
    const socket = new WebSocket(this.url);
    const queue = this.pending;
    socket.onopen = (evt: Event) => {
      // flush what was pushed before the link was open
      for (const message of queue) {
        socket.send(message);
      }
      queue.length = 0;
    };
    socket.onclose = () => {
      this.reset();
    };
  }
}
"""


def test_an_assigned_callback_lifts_the_method_it_is_written_in() -> None:
    """`socket.onopen = () => ...` is named after its target, not its enclosing method: the
    enclosing function is found by position among the candidates."""
    chunks = {c.symbol: c for c in chunk_source("src/channel.ts", SOCKET)}
    assert "socket.onopen" in chunks and "Channel._connect" in chunks
    ranked = [(chunks["socket.onopen"], 0.9), (chunks["Channel._connect"], 0.5)]
    lifted = enclosing_first(ranked, lambda name: [])
    assert [c.symbol for c, _ in lifted] == ["Channel._connect", "socket.onopen"]


def test_a_function_nested_in_a_higher_result_is_folded_into_it() -> None:
    chunks = {c.symbol: c for c in chunk_source("lib/router.js", ROUTER)}
    outer = chunks["proto.process_params"]
    inner = chunks["proto.process_params.param"]
    other = chunks["proto.render"]
    assert [c for c, _ in fold_nested([(outer, 3.0), (inner, 2.0), (other, 1.0)])] == [
        outer,
        other,
    ]
    # Ranked above what encloses it, a nested function stays (and so does the enclosing one:
    # its text says more than the helper's); a kept id is never folded.
    assert len(fold_nested([(inner, 3.0), (outer, 2.0)])) == 2
    assert len(fold_nested([(outer, 3.0), (inner, 2.0)], keep={inner.id})) == 2
    # A class skeleton elides its methods' bodies: its methods are never folded into it.
    jar = {c.symbol: c for c in chunk_source("jar.py", CLASSES)}
    assert len(fold_nested([(jar["Jar"], 2.0), (jar["Jar.get"], 1.0)])) == 2


def _long_option_factory() -> str:
    """A function long enough to be split into parts, every part about option flags (like
    typer's `Option`, 170 lines of annotated parameters), then a short neighbour."""
    params = "\n".join(
        f"    flag_{n}: str = 'option flag {n} for the command line parser'," for n in range(260)
    )
    return (
        f"def Option(\n{params}\n):\n    return flags(locals())\n\n\n"
        "def parse_flags(argv):\n"
        "    '''Split option flags for the command line parser.'''\n"
        "    return [a for a in argv if a.startswith('-')]\n"
    )


def test_parts_of_a_split_definition_show_once(tmp_path: Path) -> None:
    chunks = chunk_source("params.py", _long_option_factory())
    parts = [c for c in chunks if c.symbol == "Option"]
    other = next(c for c in chunks if c.symbol == "parse_flags")
    assert len(parts) >= 3 and all(c.parts == len(parts) for c in parts)
    ranked = [(parts[1], 3.0), (parts[0], 2.5), (other, 2.0), (parts[2], 1.0)]
    assert [c for c, _ in fold_nested(ranked)] == [parts[1], other]
    # A part the query names is kept; the same symbol in another file is another definition.
    assert len(fold_nested(ranked, keep={parts[0].id})) == 3
    elsewhere = chunk_source("other.py", _long_option_factory())[0]
    assert len(fold_nested([(parts[0], 2.0), (elsewhere, 1.0)])) == 2

    # End to end: the first results are distinct places, not the long function's pieces.
    root = tmp_path / "ws"
    root.mkdir()
    (root / "params.py").write_text(_long_option_factory())
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "index"))
    indexer = Indexer(root, settings)
    try:
        indexer.index()
        searcher = HybridSearcher(indexer, settings)
        question = "how are option flags for the command line parser declared"
        bm25 = [h.chunk.symbol for h in searcher.search(question, top_k=5, mode="bm25").hits]
        assert bm25.count("Option") >= 2  # the arm alone repeats it...
        hybrid = [h.chunk.symbol for h in searcher.search(question, top_k=5).hits]
        assert hybrid.count("Option") == 1 and "parse_flags" in hybrid  # ...the pipeline not
        # Nor does the pipeline over the keyword arm alone (served while the embedder loads).
        keyword = [h.chunk.symbol for h in searcher.search(question, 5, mode="keyword").hits]
        assert keyword.count("Option") == 1 and "parse_flags" in keyword
        searcher.close()
    finally:
        indexer.close()


STORE = """
export function createStore(reducer, preloadedState) {
  let currentReducer = reducer;
  let currentState = preloadedState;
  let isDispatching = false;
  const listeners = new Map();

  function getState() {
    if (isDispatching) {
      throw new Error('You may not call store.getState() while the reducer is executing.');
    }
    return currentState;
  }

  function dispatch(action) {
    if (typeof action !== 'object') {
      throw new Error('Actions must be plain objects, not ' + typeof action);
    }
    if (isDispatching) {
      throw new Error('Reducers may not dispatch actions.');
    }
    try {
      isDispatching = true;
      currentState = currentReducer(currentState, action);
    } finally {
      isDispatching = false;
    }
    listeners.forEach(listener => listener());
    return action;
  }

  function replaceReducer(nextReducer) {
    currentReducer = nextReducer;
    dispatch({ type: 'REPLACE' });
  }

  return { dispatch, getState, replaceReducer };
}
"""


def test_a_pasted_message_cites_the_innermost_function_that_holds_it(tmp_path: Path) -> None:
    """Redux's store methods are functions nested in `createStore`: a message pasted from
    `dispatch` is in both texts, and `dispatch` is the line's own function. Without the
    holders' exception the enclosing function was lifted above it and `dispatch` folded."""
    with hash_searcher(tmp_path, {"src/createStore.js": STORE}) as searcher:
        messages = ("Reducers may not dispatch actions.", "Error: Actions must be plain objects")
        for message in messages:
            symbols = [h.chunk.symbol for h in searcher.search(message, top_k=5).hits]
            assert symbols[:2] == ["createStore.dispatch", "createStore"], (message, symbols)
        # A question about what the store does still lifts the enclosing function and folds
        # the nested one into it.
        question = "how does the store swap its reducer"
        symbols = [h.chunk.symbol for h in searcher.search(question, top_k=5).hits]
        assert symbols[0] == "createStore" and "createStore.replaceReducer" not in symbols


AUTHENTICATE = """
module.exports = function authenticate(passport, name, options) {
  var multi = Array.isArray(name);
  var names = multi ? name : [name];

  return function authenticate(req, res, next) {
    var failures = [];

    function allFailed() {
      if (!multi) {
        var challenge = failures[0].challenge;
        res.statusCode = failures[0].status || 401;
        if (typeof challenge == 'string') {
          res.setHeader('WWW-Authenticate', challenge);
        }
        return res.end('Unauthorized');
      }
      // Every strategy in the chain failed: gather each one's challenge into the
      // WWW-Authenticate header of a single 401 response.
      var rchallenge = [];
      var rstatus;
      for (var j = 0; j < failures.length; j++) {
        var failure = failures[j];
        var challenge = failure.challenge;
        var status = failure.status;
        rstatus = rstatus || status;
        if (typeof challenge == 'string') {
          rchallenge.push(challenge);
        }
      }
      res.statusCode = rstatus || 401;
      if (rchallenge.length) {
        res.setHeader('WWW-Authenticate', rchallenge);
      }
      res.end('Unauthorized');
    }

    (function attempt(i) {
      var layer = names[i];
      if (!layer) { return allFailed(); }
      var strategy = passport._strategy(layer);
      strategy.fail = function(challenge, status) {
        failures.push({ challenge: challenge, status: status });
        attempt(i + 1);
      };
      strategy.authenticate(req, options);
    })(0);
  };
};
"""


def test_the_best_match_nested_in_a_function_keeps_its_own_place(tmp_path: Path) -> None:
    """passport (user pass): `allFailed`, 30 lines nested in the authenticate middleware,
    builds the 401 reply; asked how, the middleware is lifted above it and it stays second
    instead of being folded into the middleware's 50 lines."""
    with hash_searcher(tmp_path, {"lib/authenticate.js": AUTHENTICATE}) as searcher:
        question = (
            "when every strategy in a chain fails, how is the 401 WWW-Authenticate reply built?"
        )
        symbols = [h.chunk.symbol for h in searcher.search(question, top_k=5).hits]
    assert symbols[:2] == ["module.exports", "module.exports.allFailed"], symbols


SESSION = """
function session(options) {
  var opts = options || {};
  var rollingSessions = Boolean(opts.rolling);
  var saveUninitializedSession = opts.saveUninitialized;

  return function session(req, res, next) {
    onHeaders(res, function () {
      if (!shouldSetCookie(req)) {
        return;
      }
      setcookie(res, name, req.sessionID, secrets[0], req.session.cookie.data);
    });

    // determine if session should be saved to store
    function shouldSave(req) {
      return !saveUninitializedSession && !savedHash && cookieId !== req.sessionID
        ? isModified(req.session)
        : !isSaved(req.session);
    }

    // determine if cookie should be set on response
    function shouldSetCookie(req) {
      if (typeof req.sessionID !== 'string') {
        return false;
      }
      return cookieId !== req.sessionID
        ? saveUninitializedSession || isModified(req.session)
        : rollingSessions || req.session.cookie.expires != null && isModified(req.session);
    }

    next();
  };
}
"""


def test_a_nested_function_the_question_spells_is_not_folded(tmp_path: Path) -> None:
    """express-session (user pass): "where does the rolling option force the Set-Cookie
    header to be sent" spells the nested `shouldSetCookie`, its answer; the middleware is
    lifted above it for context, and it stays (it was folded into it)."""
    with hash_searcher(tmp_path, {"index.js": SESSION}) as searcher:
        question = "where does the rolling option force the Set-Cookie header to be sent?"
        symbols = [h.chunk.symbol for h in searcher.search(question, top_k=5).hits]
        assert "session.shouldSetCookie" in symbols, symbols
        # A question that does not spell it still gets the middleware alone.
        other = "how does the rolling option renew the expiry on every response?"
        symbols = [h.chunk.symbol for h in searcher.search(other, top_k=5).hits]
    assert "session.shouldSetCookie" not in symbols, symbols


def test_a_nested_function_scoring_nearly_the_best_is_kept_below_its_encloser() -> None:
    """express-session (user pass): `writetop` (36 lines) scored 1.055 under `res.end`'s
    1.066 and was folded into it; a nested function scoring well under the best is not."""
    chunks = {c.symbol: c for c in chunk_source("lib/authenticate.js", AUTHENTICATE)}
    outer, nested = chunks["module.exports"], chunks["module.exports.allFailed"]
    near = [(outer, 1.066), (nested, 1.055)]
    kept = best_matches_kept(near)
    assert kept == {outer.id, nested.id}
    assert [c for c, _ in fold_nested(near, keep=kept)] == [outer, nested]
    far = [(outer, 1.066), (nested, 0.9)]
    assert nested.id not in best_matches_kept(far)
    assert [c for c, _ in fold_nested(far, keep=best_matches_kept(far))] == [outer]


def test_a_tests_nested_callback_is_folded_even_when_spelled() -> None:
    """body-parser (user pass): its tests' `verify` callbacks, spelled by "where is the user's
    verify callback invoked", took places of their own under their tests."""
    source = (
        "it('should 403 on verify error', function () {\n"
        "  function verify(req) {\n    throw new Error('no')\n  }\n  run(verify)\n})\n"
    )
    asked = frozenset({"where", "verify", "callback", "invoked"})
    (test_verify,) = [c for c in chunk_source("test/json.js", source) if c.name == "verify"]
    (lib_verify,) = [c for c in chunk_source("lib/read.js", source) if c.name == "verify"]
    assert spelled_out(lib_verify, asked) and not spelled_out(test_verify, asked)


# debug-js's layout (not an evaluation set): one factory function defines the whole API.
FACTORY = """
function setup(env) {
  createDebug.enable = enable;
  createDebug.disable = disable;
  createDebug.enabled = enabled;
  createDebug.selectColor = selectColor;

  function selectColor(namespace) {
    let hash = 0;
    for (let i = 0; i < namespace.length; i++) {
      hash = ((hash << 5) - hash) + namespace.charCodeAt(i);
      hash |= 0;
    }
    return createDebug.colors[Math.abs(hash) % createDebug.colors.length];
  }

  function createDebug(namespace) {
    function debug(...args) {
      debug.log(namespace, ...args);
    }
    debug.namespace = namespace;
    debug.color = createDebug.selectColor(namespace);
    return debug;
  }

  function enable(namespaces) {
    createDebug.names = namespaces.split(',');
  }

  function disable() {
    const namespaces = createDebug.names.join(',');
    createDebug.enable('');
    return namespaces;
  }

  function enabled(name) {
    return createDebug.names.some(pattern => matches(name, pattern));
  }

  return createDebug;
}

module.exports = setup;
"""


def test_the_functions_of_a_namespace_function_keep_their_own_places(tmp_path: Path) -> None:
    question = "how is a color picked from the namespace hash so the same name gets the same color"
    with hash_searcher(tmp_path, {"src/common.js": FACTORY}) as searcher:
        symbols = [h.chunk.symbol for h in searcher.search(question, top_k=3).hits]
    assert symbols[0] == "setup.selectColor"  # not folded into the 40-line `setup`
