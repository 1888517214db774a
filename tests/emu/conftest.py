from __future__ import annotations

import pytest

from tensile_lite.codeobj.toolchain import Toolchain

# The targets the hand-written kernels run on; gfx950 needs LLVM 20 or newer.
BASE_ARCHS = ("gfx90a", "gfx942", "gfx1100", "gfx1201")
ALL_ARCHS = (*BASE_ARCHS, "gfx950")


def require_arch(toolchain: Toolchain, arch: str) -> None:
    if arch == "gfx950" and toolchain.version[0] < 20:
        pytest.skip(f"gfx950 needs LLVM 20+, the toolchain is {toolchain.describe()}")


@pytest.fixture(scope="module")
def co_dir(tmp_path_factory: pytest.TempPathFactory):
    return tmp_path_factory.mktemp("emu-co")
