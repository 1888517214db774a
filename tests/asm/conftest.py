from __future__ import annotations

from pathlib import Path

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Long assembler sweeps in this folder run only when asked for with `-m slow`."""
    if "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="long assembler sweep; run with -m slow")
    for item in items:
        if "slow" in item.keywords and str(Path(__file__).parent) in str(item.fspath):
            item.add_marker(skip)
