"""Setters give way to the code that reads what they set: the detector on real tree-sitter
chunks, the move on a ranked list, and the ranking through a real index (SQLite FTS5,
hnswlib, the `hash` embedder) and the real searcher."""

from __future__ import annotations

from pathlib import Path

from codeqa_lsp.chunking.chunker import chunk_source
from codeqa_lsp.retrieval.setters import readers_lead_setters, set_field
from tests.chunks import chunks_by_symbol
from tests.retrieval.searchers import hash_searcher

# walkdir's shape in Go: an option's setter with the option's doc, a getter, a constructor
# initialising the field, and the code that behaves by it.
WALKER = """package walk

// Options holds the walker's settings.
type Options struct {
	contentsFirst bool
	maxDepth      int
}

// Walker walks a directory tree.
type Walker struct {
	opts     Options
	deferred []string
}

// ContentsFirst yields a directory's contents before the directory itself (post-order).
func (w *Walker) ContentsFirst(yes bool) *Walker {
	w.opts.contentsFirst = yes
	return w
}

// ContentsFirstEnabled reports whether directory contents come first.
func (w *Walker) ContentsFirstEnabled() bool {
	return w.opts.contentsFirst
}

// NewWalker makes a walker with the default options.
func NewWalker() *Walker {
	return &Walker{opts: Options{contentsFirst: false, maxDepth: 10}}
}

// WithMaxDepth limits how deep the walk descends.
func WithMaxDepth(depth int) func(*Walker) {
	return func(w *Walker) { w.opts.maxDepth = depth }
}

func (w *Walker) next(entry string, isDir bool) (string, bool) {
	if isDir && w.opts.contentsFirst {
		w.deferred = append(w.deferred, entry)
		return "", false
	}
	return entry, true
}
"""

JAVA = """
public final class Builder {
    private boolean allowPartialMatching = true;
    private String name;
    private int width;

    /** Sets if partial matching of long options is supported. */
    public Builder setAllowPartialMatching(final boolean allowPartialMatching) {
        this.allowPartialMatching = allowPartialMatching;
        return this;
    }

    /** Sets the name and the width. */
    public Builder configure(final String name, final int width) {
        this.name = name;
        this.width = width;
        return this;
    }

    /** Remembers a label under another name. */
    public Builder label(final String text) {
        this.name = text;
        return this;
    }
}
"""

PYTHON = '''
class Client:
    def set_timeout(self, seconds):
        """Seconds to wait for the server."""
        self._timeout = seconds


def set_stdout(stream):
    """Sends output to `stream`."""
    sys.stdout = stream
'''


def test_a_short_function_named_after_the_one_field_it_assigns_is_a_setter() -> None:
    go = chunks_by_symbol("walk.go", WALKER)
    assert set_field(go["Walker.ContentsFirst"]) == "contentsFirst"
    assert set_field(go["Walker.ContentsFirstEnabled"]) is None  # reads, assigns nothing
    assert set_field(go["NewWalker"]) is None  # initialises, not by assignment
    assert set_field(go["Walker.next"]) is None  # assigns another name, and does more
    assert set_field(go["WithMaxDepth"]) == "maxDepth"  # a functional option's parameter
    java = chunks_by_symbol("Builder.java", JAVA)
    assert set_field(java["Builder.setAllowPartialMatching"]) == "allowPartialMatching"
    assert set_field(java["Builder.configure"]) is None  # two fields
    assert set_field(java["Builder.label"]) is None  # not named after the field it sets
    python = chunks_by_symbol("client.py", PYTHON)
    assert set_field(python["Client.set_timeout"]) == "_timeout"
    assert set_field(python["set_stdout"]) is None  # a module's attribute, no own field


def test_the_best_reader_moves_just_above_the_setter_or_below_it_for_a_how_to() -> None:
    go = chunks_by_symbol("walk.go", WALKER)
    setter, getter = go["Walker.ContentsFirst"], go["Walker.ContentsFirstEnabled"]
    maker, reader, options = go["NewWalker"], go["Walker.next"], go["Options"]
    ranked = [(setter, 1.0), (getter, 0.9), (maker, 0.8), (options, 0.7), (reader, 0.2)]
    moved = readers_lead_setters(ranked, "how are directories emitted after their contents?")
    assert [c.symbol for c, _ in moved] == [
        "Walker.next",  # the getter and the constructor name the field but are no readers
        "Walker.ContentsFirst",
        "Walker.ContentsFirstEnabled",
        "NewWalker",
        "Options",
    ]
    assert [s for _, s in moved] == sorted((s for _, s in moved), reverse=True)
    how_to = readers_lead_setters(ranked, "How do I get the contents before the directory?")
    assert [c.symbol for c, _ in how_to][:2] == ["Walker.ContentsFirst", "Walker.next"]
    no_reader = [(setter, 1.0), (getter, 0.9), (maker, 0.8)]
    assert readers_lead_setters(no_reader, "post-order walking") == no_reader
    fillers = [*chunks_by_symbol("Builder.java", JAVA).values(), options, maker, getter]
    below_the_top = [(c, 1.0 - i * 0.1) for i, c in enumerate(fillers[:5])]
    below_the_top += [(setter, 0.3), (reader, 0.2)]  # the setter is not among the first five
    assert readers_lead_setters(below_the_top, "post-order") == below_the_top


def test_the_code_that_behaves_leads_the_setter_that_documents_it(tmp_path: Path) -> None:
    with hash_searcher(tmp_path, {"walk.go": WALKER}) as searcher:
        question = "yields a directory's contents before the directory itself"
        behaves = [h.chunk.symbol for h in searcher.search(question, top_k=3).hits]
        how_to = f"how do I make the walker say it {question}?"
        api = [h.chunk.symbol for h in searcher.search(how_to, top_k=3).hits]
    assert behaves[:2] == ["Walker.next", "Walker.ContentsFirst"]
    assert api[:2] == ["Walker.ContentsFirst", "Walker.next"]


GSON = {
    "src/Builder.java": """
public final class Builder {
  /** Writes NaN and the infinities as their names instead of failing. */
  public Builder specialFloats(boolean specialFloats) {
    this.specialFloats = specialFloats;
    return this;
  }
}
""",
    "src/FloatWriter.java": """
final class FloatWriter {
  void write(JsonWriter out, double value) {
    if (!specialFloats && (Double.isNaN(value) || Double.isInfinite(value))) {
      throw new IllegalArgumentException(value + " is not a valid double value");
    }
    out.value(value);
  }
}
""",
    "src/test/FloatTest.java": """
public class FloatTest {
  public void testNaN() {
    Builder builder = new Builder().specialFloats(true);
    String json = builder.create().toJson(Double.NaN);
    assertEquals("NaN", json);
  }
}
""",
}


def test_a_test_using_the_option_is_no_reader() -> None:
    """The test calls the setter by the field's name; the code behaving by the field leads."""
    chunks = {c.symbol: c for path, text in GSON.items() for c in chunk_source(path, text)}
    setter, test = chunks["Builder.specialFloats"], chunks["FloatTest.testNaN"]
    ranked = [(setter, 1.0), (test, 0.9), (chunks["FloatWriter.write"], 0.5)]
    moved = readers_lead_setters(ranked, "how are NaN values written?")
    assert [c.symbol for c, _ in moved] == [
        "FloatWriter.write",
        "Builder.specialFloats",
        "FloatTest.testNaN",
    ]
