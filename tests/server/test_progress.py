"""Index progress as shown to editors: phases named with counts, a bar that only moves
forward, and an ETA once a phase has run long enough to estimate it."""

from __future__ import annotations

from codeqa_lsp.index.model import IndexProgress
from codeqa_lsp.server.progress import ProgressTracker, format_duration


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_every_phase_has_counts_and_the_bar_never_goes_back() -> None:
    clock = FakeClock()
    tracker = ProgressTracker(clock)
    shown = [tracker.update(IndexProgress("scan", 0, 0, "scanning files"))]
    for done in (25, 50, 100):
        clock.now += 1
        shown.append(tracker.update(IndexProgress("chunk", done, 100, "a.py")))
    assert shown[-1].message.startswith("chunking files 100/100")
    assert shown[-1].percentage == 20  # chunking is finished, embedding is not
    shown.append(tracker.update(IndexProgress("embed", 0, 4000)))
    assert shown[-1].message == "embedding chunks 0/4000"
    clock.now += 10
    shown.append(tracker.update(IndexProgress("embed", 1000, 4000)))
    # 1000 chunks in 10 s: 3000 left take 30 s.
    assert shown[-1].eta_seconds == 30.0
    assert shown[-1].message == "embedding chunks 1000/4000, about 30 s left"
    assert shown[-1].to_json()["etaSeconds"] == 30.0
    clock.now += 30
    shown.append(tracker.update(IndexProgress("embed", 4000, 4000)))
    assert shown[-1].eta_seconds is None
    # Long chunks' later windows come after every chunk's first (`index/embedding.py`).
    shown.append(tracker.update(IndexProgress("windows", 0, 300)))
    assert shown[-1].message == "embedding later windows of long chunks 0/300"
    clock.now += 4
    shown.append(tracker.update(IndexProgress("windows", 200, 300)))
    assert shown[-1].message == "embedding later windows of long chunks 200/300, about 2 s left"
    assert shown[-2].percentage < shown[-1].percentage < 99
    shown.append(tracker.update(IndexProgress("save", 0, 1, "saving")))
    shown.append(tracker.update(IndexProgress("save", 1, 1, "done")))
    percentages = [s.percentage for s in shown]
    assert percentages == sorted(percentages) and percentages[-1] == 100


def test_no_eta_from_the_first_moments_of_a_phase() -> None:
    clock = FakeClock()
    tracker = ProgressTracker(clock)
    tracker.update(IndexProgress("embed", 0, 10000))
    clock.now += 0.5
    early = tracker.update(IndexProgress("embed", 64, 10000))
    assert early.eta_seconds is None and "left" not in early.message


def test_durations_read_well() -> None:
    assert [format_duration(s) for s in (4.4, 65, 3725)] == ["4 s", "1 min 05 s", "1 h 02 min"]
