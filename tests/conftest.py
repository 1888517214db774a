from __future__ import annotations

import pytest

from tensile_lite.codeobj.toolchain import Toolchain, find_toolchain
from tensile_lite.errors import ToolchainError
from tests.shared import use_shared_custom_kernels

# The dev set names five custom kernels; every build and read in the tests finds them in ../shared.
use_shared_custom_kernels()


@pytest.fixture(scope="session")
def toolchain() -> Toolchain:
    """The real LLVM toolchain; tests that make code objects never mock it."""
    try:
        return find_toolchain()
    except ToolchainError as exc:
        pytest.skip(str(exc))


# marker -> why its tests are not in the default run
_OPT_IN = {
    "slow": "long sweep; run with -m slow",
    "interrupt": "interruption or concurrency case; run with -m interrupt",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked slow (emulator and assembler sweeps, whole-library verification) or interrupt
    (signals, kills, hung tools, concurrent builds: reliability suite) run only when asked for with
    `-m slow` / `-m interrupt`, so the default run stays within the README's time budget."""
    chosen = config.getoption("-m") or ""
    for marker, reason in _OPT_IN.items():
        if marker in chosen:
            continue
        skip = pytest.mark.skip(reason=reason)
        for item in items:
            if marker in item.keywords:
                item.add_marker(skip)
