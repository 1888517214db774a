from __future__ import annotations

from pathlib import Path

import pytest

from tensile_lite.codeobj.toolchain import Toolchain


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The emulator sweeps of this folder are long: they run only when asked for with `-m slow`."""
    if "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="long emulator sweep; run with -m slow")
    for item in items:
        if "slow" in item.keywords and str(Path(__file__).parent) in str(item.fspath):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def kernel_dir(tmp_path_factory: pytest.TempPathFactory, toolchain: Toolchain) -> Path:
    """Where this session's code objects go (one folder, shared by the emulator tests)."""
    return tmp_path_factory.mktemp("gemm_kernels")
