"""The benchmark harness's own logic: memory sampling, VectorCode result mapping, report.

The benchmarks themselves are too slow for the test suite; what is tested here is what
their numbers depend on being right: the process-tree sampler really sums children, a
VectorCode line range maps to the definition our chunker sees, and the report survives
missing or malformed result files while computing ratios correctly.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import common  # noqa: E402
import peer_spans  # noqa: E402
import peers  # noqa: E402
import report  # noqa: E402
import report_sections  # noqa: E402
import report_speed  # noqa: E402
import swebench  # noqa: E402

from codeqa_lsp.retrieval.evaluation import Expected, Question  # noqa: E402

ALLOCATE = "import time; x = bytearray({mb} * 2**20); time.sleep(1.0)"


def test_tree_rss_sums_every_process_in_the_tree() -> None:
    child = f"{sys.executable} -c '{ALLOCATE.format(mb=120)}'"
    run = common.run_measured(["bash", "-c", f"{child} & {child} & wait; echo '{{\"ok\": 1}}'"])
    assert run.returncode == 0
    # Two children of 120 MB each: only a sampler that sums the tree sees more than 200 MB.
    assert run.tree_peak_rss_mb > 200
    assert run.last_json() == {"ok": 1}


def test_run_measured_reports_failure_and_output() -> None:
    run = common.run_measured([sys.executable, "-c", "import sys; print('x'); sys.exit(3)"])
    assert run.returncode == 3
    assert run.stdout.strip() == "x"
    assert run.last_json() is None


def test_percentile_interpolates_like_numpy() -> None:
    values = [1.0, 2.0, 3.0, 4.0, 10.0]
    assert common.percentile(values, 50) == 3.0
    assert common.percentile(values, 95) == pytest.approx(8.8)
    summary = common.latency_summary([0.001, 0.003])
    assert summary["p50_ms"] == pytest.approx(2.0)
    assert summary["n"] == 2


SOURCE = textwrap.dedent('''\
    import os


    class Greeter:
        """Says hello."""

        def hello(self, name):
            text = "hello " + name
            return text

        def bye(self, name):
            return "bye " + name


    def helper():
        return os.sep
    ''')


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "greet.py").write_text(SOURCE)
    return tmp_path


def _question(*symbols: str) -> Question:
    return Question("q1", "how do we greet", tuple(Expected("pkg/greet.py", s) for s in symbols))


def test_contained_mapping_takes_the_innermost_definition(tree: Path) -> None:
    mapper = peer_spans.SymbolMapper(tree)
    raw = [
        {"path": "pkg/greet.py", "start_line": 8, "end_line": 9},  # inside Greeter.hello
        {"path": "pkg/greet.py", "start_line": 7, "end_line": 12},  # spans two methods
        {"path": "pkg/greet.py", "start_line": 1, "end_line": 2},  # module code
    ]
    got = mapper.retrieved(raw, _question("Greeter.hello"), "contained")
    assert [r.symbol for r in got] == ["Greeter.hello", "Greeter", ""]
    assert {r.path for r in got} == {"pkg/greet.py"}


def test_covers_mapping_credits_a_chunk_swallowing_the_expected_method(tree: Path) -> None:
    mapper = peer_spans.SymbolMapper(tree)
    raw = [{"path": "pkg/greet.py", "start_line": 7, "end_line": 12}]
    assert mapper.retrieved(raw, _question("Greeter.bye"), "covers")[0].symbol == "Greeter.bye"
    # A definition the chunk does not reach is never credited.
    assert mapper.retrieved(raw, _question("helper"), "covers")[0].symbol == "Greeter"


def test_scoring_vectorcode_uses_the_shared_matcher(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(peers, "corpus_root", lambda _name: tree)
    question = Question("t-1", "q", (Expected("pkg/greet.py", "Greeter.hello"),), set_name="t")
    raw = [
        [
            {"path": "pkg/greet.py", "start_line": 15, "end_line": 16},
            {"path": "pkg/greet.py", "start_line": 8, "end_line": 9},
        ]
    ]
    scored = peers.score([question], raw)
    contained = scored["mappings"]["contained"]
    assert contained["ranks"] == {"t-1": 2}
    assert contained["groups"]["all"]["mrr@10"] == 0.5
    assert scored["raw"]["t-1"] == raw[0]


def _speed_doc(ours_wall: float, ours_rss: float, vc_wall: float, vc_rss: float) -> dict:
    run = {
        "ok": True,
        "wall_s": ours_wall,
        "tree_peak_rss_mb": ours_rss,
        "chunks": 600,
        "files": 16,
        "size_bytes": 6 * 2**20,
        "size_mb_per_1k_chunks": 10.0,
        "embedded": 600,
        "dense_ready_seconds": 6.5,
    }
    median = {**run, "wall_s_all": [ours_wall], "tree_peak_rss_mb_max": ours_rss}
    vc = {
        "ok": True,
        "wall_s": vc_wall,
        "tree_peak_rss_mb": vc_rss,
        "chunks": 254,
        "files": 21,
        "db_bytes": 2**20,
        "wall_s_all": [vc_wall],
        "tree_peak_rss_mb_max": vc_rss,
    }
    return {
        "machine": {"date": "2026-11-21T00:00:00Z", "cores": 2, "ram_gb": 8.0, "python": "3.11"},
        "click_src": {
            "runs": {
                "local": {"clean": [run], "clean_median": median, "warm": {**run, "embedded": 0}}
            },
            "vectorcode": {"runs": [vc], "clean_median": vc},
        },
    }


def test_report_computes_ratios_and_target_status_within_one_run() -> None:
    docs = {"speed": _speed_doc(ours_wall=10.0, ours_rss=300.0, vc_wall=40.0, vc_rss=500.0)}
    text = report.render(docs, plots={})
    assert "| codeqa (local) | 10.00 | 10.0 | 0.25× | 6.50 | 300 | 0.60× |" in text
    rows = {r[0]: r for r in report_sections._target_rows(docs)}
    assert rows["click/src index wall time <= 1/3 of VectorCode's"][2] == "met"
    assert rows["click/src peak RSS <= 1/2 of VectorCode's"][2] == "**missed**"
    assert rows["warm start embeds 0 chunks"][2] == "met"
    assert rows["hit@5 >= 0.90 (100 questions)"][2] == "not run"
    assert "2 cores · 8.0 GB RAM" in text


def test_a_focused_rerun_stands_for_its_part_only_while_it_is_newer() -> None:
    """`speed.py --vs-vectorcode` / `--latency` re-run one part of the full run; the report
    shows whichever of the two ran last, so a later full run is not hidden by an old focused
    file."""
    full = _speed_doc(ours_wall=10.0, ours_rss=300.0, vc_wall=40.0, vc_rss=500.0)
    full["latency"] = [{"point": "large", "ok": True, "chunks": 100_000}]

    def focused(date: str) -> dict:
        doc = _speed_doc(ours_wall=12.0, ours_rss=300.0, vc_wall=24.0, vc_rss=500.0)
        doc["machine"]["date"] = date
        doc["latency"] = [{"point": "large", "ok": True, "chunks": 99_000}]
        return doc

    def walls(docs: dict) -> dict:
        return {r["name"]: r["wall_s"] for r in report_sections.click_index_rows(docs)}

    newer = focused("2026-11-22T00:00:00Z")
    docs = {"speed": full, "speed-vectorcode": newer, "speed-latency": newer}
    assert walls(docs) == {"codeqa (local)": 12.0, "VectorCode": 24.0}
    assert report_sections.latency_doc(docs) is newer
    older = focused("2026-11-20T00:00:00Z")
    docs = {"speed": full, "speed-vectorcode": older, "speed-latency": older}
    assert walls(docs) == {"codeqa (local)": 10.0, "VectorCode": 40.0}
    assert report_sections.latency_doc(docs) is full


def test_swebench_target_reads_the_default_embedder_run_first() -> None:
    def runs(**acc5: float) -> dict[str, object]:
        return {"runs": {k: {"n": 48, "overall": {"acc@5": v}} for k, v in acc5.items()}}

    target = "SWE-bench Lite dev file Acc@5 >= 0.85 (`codeqa search`)"
    rows = {r[0]: r for r in report_sections._target_rows({"swebench": runs(hash=0.9, local=0.8)})}
    assert rows[target][1:] == ["0.800 (local, n=48)", "**missed**"]
    rows = {r[0]: r for r in report_sections._target_rows({"swebench": runs(hash=0.875)})}
    assert rows[target][1:] == ["0.875 (hash, n=48)", "met"]
    rows = {r[0]: r for r in report_sections._target_rows({})}
    assert rows[target][2] == "not run"


def test_query_embedding_target_reads_the_default_kind() -> None:
    def doc(**p95: float) -> dict[str, object]:
        embed = {k: {"query": {"p95_ms": v}} for k, v in p95.items()}
        return {"speed-embedders": {"query_embed": embed}}

    target = "a short question's embedding < 10 ms (p95, fresh process)"
    rows = {r[0]: r for r in report_sections._target_rows(doc(openvino_fp32=10.5, onnx=4.0))}
    assert rows[target][1:] == ["10.5 ms (openvino_fp32, the default)", "**missed**"]
    rows = {r[0]: r for r in report_sections._target_rows(doc(openvino_fp32=6.5))}
    assert rows[target][2] == "met"
    assert {r[0]: r for r in report_sections._target_rows({})}[target][2] == "not run"


def test_a_swebench_subset_run_keeps_the_default_rows() -> None:
    assert swebench.result_keys("local", "", "") == ("baseline-bm25", "local")
    assert swebench.result_keys("local", "", "unseen") == ("baseline-bm25-unseen", "local-unseen")
    assert swebench.result_keys("hash", "exp", "unseen") == ("baseline-bm25-unseen", "exp-unseen")


def test_report_survives_missing_and_malformed_results() -> None:
    text = report.render({"speed": {"click_src": "not a dict"}, "quality": None}, plots={})
    assert "Could not render" in text
    for heading in (
        "## Summary against the targets",
        "## Retrieval quality",
        "## Chunking throughput",
        "## Language server",
    ):
        assert heading in text
    assert "not run" in report.render({}, plots={})


def test_unknown_result_files_are_listed_flat() -> None:
    doc = {"machine": {"cores": 2}, "files": 50000, "peak_rss_mb": 812.5, "nested": {"a": [1, 2]}}
    lines = report._other_results({"soak": doc})
    assert "| files | 50000 |" in lines
    assert "| nested.a | 1, 2 |" in lines


def test_a_daemon_left_behind_neither_hangs_nor_survives_the_measurement() -> None:
    # The command exits leaving its child running, which would hold a pipe open for 60 s.
    daemon = f"{sys.executable} -c 'import time; time.sleep(60)'"
    run = common.run_measured(["bash", "-c", f"{daemon} & sleep 0.5; echo done"])
    assert run.returncode == 0
    assert run.stdout.strip() == "done"
    assert "stopped 1 leftover process" in run.stderr


def test_server_results_feed_the_server_targets() -> None:
    server = {
        "embedder": "hash",
        "provider": "extractive",
        "workspace": {"indexed_files": 3000, "chunks": 50_000},
        "cold": {
            "initialize_response_s": 0.1,
            "full_index_s": 60.0,
            "first_cited_ask": {"seconds": 2.5, "index_still_running": True},
            "hover_during_index": {"n": 100, "p50_ms": 3.0, "p95_ms": 20.0},
            "save_to_searchable": {"p50_ms": 300.0, "p95_ms": 400.0, "lines": 1000},
        },
        "warm": {"index_run_s": 2.0, "first_cited_ask": {"seconds": 0.5}},
    }
    rows = {r[0]: r for r in report_sections._target_rows({"server": server})}
    assert rows["server: initialize → first cited codeqa.ask <= 2 s"][1:] == [
        "2.50 s on 3000 files",
        "**missed**",
    ]
    assert rows["server: hover p95 <= 100 ms during a full index"][2] == "met"
    text = "\n".join(report_speed.server_section(server))
    assert "p50 3.0 ms · p95 20.0 ms" in text


def test_a_minilm_latency_point_without_its_vectors_does_not_stand_for_the_tree() -> None:
    """A large-tree index built with other numerics is opened with none of its vectors
    served (coverage 0): it timed BM25 alone, so the hash-vector point stands instead."""
    point = {"point": "large", "chunks": 100_000, "ok": True}
    doc = {
        "latency": [
            {**point, "vectors": "hash", "coverage": 1.0},
            {**point, "vectors": "local", "coverage": 0.0},
        ]
    }
    assert [p["vectors"] for p in report_sections.latency_points(doc)] == ["hash"]
    doc["latency"][1]["coverage"] = 1.0
    assert [p["vectors"] for p in report_sections.latency_points(doc)] == ["local"]


def test_a_quality_run_of_one_embedder_keeps_the_other_rows_with_their_date(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`quality.py --embedders local` used to drop the hash rows from quality.json."""
    import quality
    import report_quality

    monkeypatch.setattr(common, "RESULTS_DIR", tmp_path)
    rows = {"hash": {"arms": {}}, "local": {"arms": {}}}
    common.write_result("quality", {"sets": ["a", "b"], "embedders": rows}, quick=False)
    carried = quality.carried_embedders(("local",), ("a", "b"), False)
    assert list(carried) == ["hash"] and carried["hash"]["measured"]
    assert quality.carried_embedders(("local",), ("a",), False) == {}  # other sets
    assert quality.carried_embedders(("local",), ("a", "b"), True) == {}  # quick vs full
    doc = {"embedders": {**carried, "local": {"arms": {}}}}
    text = "\n".join(report_quality.quality_section({"quality": doc}, {}))
    assert f"The hash rows are from the run of {carried['hash']['measured']}" in text
    assert "The local rows" not in text


def test_tryout_questions_are_well_formed() -> None:
    import tryout

    rows = tryout.load_questions()
    assert len(rows) >= 120
    # A question is asked once per repository (off-topic ones recur across repositories).
    assert len({(r["repo"], r["question"]) for r in rows}) == len(rows)
    for r in rows:
        assert r["style"] in ("direct", "paraphrased", tryout.OFFTOPIC), r
        assert len(r["commit"]) == 40 and int(r["commit"], 16) >= 0, r
        assert all(isinstance(e, str) and e for e in r["expected"]), r
        assert bool(r["expected"]) == (r["style"] != tryout.OFFTOPIC), r
    real_repos = {r["repo"] for r in rows if r["expected"]}
    assert {r["repo"] for r in rows if not r["expected"]} == real_repos
    # One commit per repository: every question of a repository asks about the same tree.
    commits: dict[str, set[str]] = {}
    for r in rows:
        commits.setdefault(r["repo"], set()).add(r["commit"])
    assert all(len(c) == 1 for c in commits.values())


def test_tryout_ranks_scores_and_groups() -> None:
    import tryout

    symbols = ["Sinatra.Base.halt", "Sinatra.Base.route!", "Sinatra.Base.process_route"]
    assert tryout.answer_rank(symbols, ["route!", "process_route"]) == 2
    assert tryout.answer_rank(symbols, ["static!"]) is None
    scored = tryout.score([1, 6, None, 2])
    assert scored == {"count": 4, "hit@5": 0.5, "mrr@10": round((1 + 1 / 6 + 1 / 2) / 4, 4)}
    assert tryout.score([11])["mrr@10"] == 0.0  # past the tenth result counts nothing
    rows = [
        {"repo": "a/x", "style": "direct", "hybrid": 1},
        {"repo": "a/x", "style": "paraphrased", "hybrid": None},
        {"repo": "b/y", "style": "direct", "hybrid": 4},
    ]
    groups = tryout.summarize(rows, "hybrid")
    assert groups["all"] == {"count": 3, "hit@5": 0.6667, "mrr@10": round((1 + 1 / 4) / 3, 4)}
    assert groups["style:paraphrased"] == {"count": 1, "hit@5": 0.0, "mrr@10": 0.0}
    assert groups["repo:b/y"]["mrr@10"] == 0.25


def test_tryout_confidence_shares_per_repository() -> None:
    import tryout

    asked = [  # repository, expected names (none: off-topic), answered confidently
        ("a/x", ["f"], True),
        ("a/x", ["g"], False),
        ("a/x", [], True),
        ("b/y", ["h"], True),
        ("b/y", [], False),
        ("b/y", [], False),
    ]
    rows = [
        {"repo": repo, "question": f"q{i}", "expected": expected, "confident": sure}
        | {"top5": [f"{repo}:best"]}
        for i, (repo, expected, sure) in enumerate(asked)
    ]
    conf = tryout.confidence(rows)
    assert conf["real_confident"] == 0.6667 and conf["real_count"] == 3
    assert conf["offtopic_confident"] == 0.3333 and conf["offtopic_count"] == 3
    assert conf["offtopic_confident_questions"] == [
        {"repo": "a/x", "question": "q2", "best": "a/x:best"}
    ]
    assert conf["real_unconfident_questions"] == ["q1"]
    assert conf["repos"]["a/x"] == {"real_confident": 0.5, "offtopic_confident": 1.0}
    assert conf["repos"]["b/y"] == {"real_confident": 1.0, "offtopic_confident": 0.0}


def test_tryout_exports_a_pinned_tree_from_a_bare_mirror(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    import tryout

    work = tmp_path / "work"
    work.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(work)]
    subprocess.run([*git, "init", "-q"], check=True)
    (work / "main.go").write_text("package main\n\nfunc Run() {}\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    commit = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    (work / "main.go").write_text("package main\n\nfunc Changed() {}\n")
    subprocess.run([*git, "commit", "-qam", "two"], check=True)
    mirrors = tmp_path / "mirrors"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(work), str(mirrors / "o+r" / "repo")], check=True
    )
    monkeypatch.setattr(tryout, "WORK", tmp_path / "cache")
    tree = tryout.export_tree("o/r", commit, mirrors)
    assert tree is not None
    assert "func Run()" in (tree / "main.go").read_text()  # the pinned commit, not HEAD
    (tree / "main.go").write_text("edited")
    assert tryout.export_tree("o/r", commit, mirrors) == tree  # exported once
    assert (tree / "main.go").read_text() == "edited"
    assert tryout.export_tree("o/missing", commit, mirrors) is None


def test_the_tryout_section_lists_arms_styles_and_misses() -> None:
    import report_quality

    assert "not run" in "\n".join(report_quality._tryout(None)).lower()
    arm = {"all": {"count": 2, "hit@5": 0.5, "mrr@10": 0.5}}
    arm["style:direct"] = {"count": 1, "hit@5": 1.0, "mrr@10": 1.0}
    doc = {
        "indexes": {"o/r": {}},
        "arms": {"bm25": arm, "hybrid": arm},
        "misses": [
            {"repo": "o/r", "style": "paraphrased", "question": "why?", "expected": ["f"]}
            | {"hybrid": None, "top5": []}
        ],
    }
    text = "\n".join(report_quality._tryout(doc))
    assert "| hybrid | 0.50 / 0.50 | 1.00 / 1.00 |" in text
    assert "- o/r (paraphrased): why? (want f; rank -)" in text
    assert "Confidence on the same repositories" not in text  # older results: no section
    doc["confidence"] = {
        "real_confident": 0.5,
        "real_count": 2,
        "offtopic_confident": 0.25,
        "offtopic_count": 4,
        "offtopic_confident_questions": [{"repo": "o/r", "question": "gpu?", "best": "a.c:f"}],
        "real_unconfident_questions": ["why?"],
        "repos": {"o/r": {"real_confident": 0.5, "offtopic_confident": 0.25}},
    }
    text = "\n".join(report_quality._tryout(doc))
    assert "| real | 0.50 | 0.50 |" in text
    assert "| off-topic | 0.25 | 0.25 |" in text
    assert "- confident off-topic: o/r: gpu? → a.c:f" in text
    assert "- real questions not confident (1): why?" in text
