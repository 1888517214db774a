from __future__ import annotations

from pathlib import Path

import pytest

from tensile_lite.codeobj.toolchain import Toolchain


@pytest.fixture(scope="session")
def kernel_dir(tmp_path_factory: pytest.TempPathFactory, toolchain: Toolchain) -> Path:
    """Where this session's code objects go (one folder, shared by the emulator tests)."""
    return tmp_path_factory.mktemp("gemm_kernels")
