"""Suite-wide pytest options: long soak variants run only on request.

`slow`-marked tests (issue 9's soak runs: tens of thousands of files, minutes of saves)
would make every `make test` take minutes; they run with `pytest --soak` or with
`CODEQA_SOAK=1` in the environment (what `bench/run` and CI's nightly job set). A test may
also read the flag itself (`request.config.getoption("--soak")`), as `tests/index/test_soak.py`
does, so both ways of asking keep working whichever of the two checks runs first.
"""

from __future__ import annotations

import os

import pytest

SOAK_ENV = "CODEQA_SOAK"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--soak",
        action="store_true",
        default=False,
        help=f"run the slow soak variants (marked `slow`); same as {SOAK_ENV}=1",
    )


def soak_enabled(config: pytest.Config) -> bool:
    return bool(config.getoption("--soak")) or os.environ.get(SOAK_ENV) == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if soak_enabled(config):
        return
    skip = pytest.mark.skip(reason=f"soak variant: run with --soak or {SOAK_ENV}=1")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
