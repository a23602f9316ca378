"""The constraints on each setting live on its field (`config.Spec`); validation reads them.

These tests walk every setting's facts, so a bound added to a field is enforced without a
side table to update, and a setting cannot be declared without the facts it needs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codeqa_lsp.config import SETTINGS, SettingFacts, Settings
from codeqa_lsp.index.indexer import Indexer, default_index_dir

BOUNDED = [f for f in SETTINGS.values() if f.lower_bound is not None or f.spec.maximum is not None]


def sample(facts: SettingFacts) -> object:
    """A valid value other than the default."""
    if facts.kind == "bool":
        return not facts.default
    if facts.kind == "globs":
        return ["src/**"]
    if facts.kind == "choice":
        return facts.spec.choices[-1][0]
    if facts.kind == "str":
        return "postgresql://me@db/x" if facts.name == "store" else "value"
    low = facts.lower_bound
    return low[0] + 1 if low else 0.5


@pytest.mark.parametrize("facts", list(SETTINGS.values()), ids=lambda f: f.wire)
def test_every_setting_takes_a_valid_value_and_reports_a_wrong_type_once(
    facts: SettingFacts,
) -> None:
    settings, problems = Settings.from_wire({facts.wire: sample(facts)})
    assert problems == []
    assert getattr(settings, facts.name) != facts.default or facts.kind == "bool"
    settings, problems = Settings.from_wire({facts.wire: {"not": "a setting value"}})
    assert getattr(settings, facts.name) == facts.default
    assert len(problems) == 1 and f"'{facts.wire}'" in problems[0] and "default" in problems[0]


@pytest.mark.parametrize("facts", BOUNDED, ids=lambda f: f.wire)
def test_bounds_from_the_field_are_enforced(facts: SettingFacts) -> None:
    if facts.lower_bound is not None:
        low, inclusive = facts.lower_bound
        below = low - 1 if facts.kind == "int" else low - 0.5
        assert Settings.from_wire({facts.wire: below})[1], f"{below} accepted"
        edge_ok = not Settings.from_wire({facts.wire: low})[1]
        assert edge_ok == inclusive
    if facts.spec.maximum is not None:
        top = facts.spec.maximum
        assert not Settings.from_wire({facts.wire: top})[1]
        assert Settings.from_wire({facts.wire: top + 1})[1]


def test_choices_are_the_literal_values() -> None:
    for facts in SETTINGS.values():
        if facts.kind != "choice":
            continue
        for choice, doc in facts.spec.choices:
            assert doc and Settings.from_wire({facts.wire: choice})[1] == []
        assert Settings.from_wire({facts.wire: "no-such-choice"})[1]


def test_secrets_never_appear_in_problems_or_the_wire_view() -> None:
    _, problems = Settings.from_wire(
        {"apiKey": ["sk-secret-123"], "store": "postgresql://u:pw-123@h/db"}
    )
    assert len(problems) == 2
    assert not any("sk-secret" in p or "pw-123" in p for p in problems)
    assert Settings.from_wire({"apiKey": "sk-secret-123"})[0].to_wire()["apiKey"] == "***"


def test_internal_state_is_not_a_setting() -> None:
    assert "workspace_scoped" not in SETTINGS
    assert Settings.from_wire({"workspaceScoped": ["base_url"]})[1] == [
        "unknown setting 'workspaceScoped' ignored"
    ]


def test_configured_index_dir_is_the_same_for_every_root(tmp_path: Path) -> None:
    """`indexDir` names one directory: it is never resolved against a project root."""
    assert Settings().configured_index_dir is None
    assert Settings(index_dir="~/idx").configured_index_dir == Path.home() / "idx"
    assert Settings(index_dir="rel/idx").configured_index_dir == Path("rel/idx")
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    shared = Settings(embedder="hash", index_dir=str(tmp_path / "index"))
    assert Indexer(one, shared).index_dir == Indexer(two, shared).index_dir == tmp_path / "index"
    unset = Settings(embedder="hash")
    assert Indexer(one, unset).index_dir == default_index_dir(one.resolve())
    assert Indexer(one, unset).index_dir != Indexer(two, unset).index_dir
