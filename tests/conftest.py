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
