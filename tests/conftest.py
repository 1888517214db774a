from __future__ import annotations

import pytest

from tensile_lite.codeobj.toolchain import Toolchain, find_toolchain
from tensile_lite.errors import ToolchainError


@pytest.fixture(scope="session")
def toolchain() -> Toolchain:
    """The real LLVM toolchain; tests that make code objects never mock it."""
    try:
        return find_toolchain()
    except ToolchainError as exc:
        pytest.skip(str(exc))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked slow (emulator and assembler sweeps, whole-library verification) run only when
    asked for with `-m slow`, so the default run stays within the README's time budget."""
    if "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="long sweep; run with -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
