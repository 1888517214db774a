from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from tensile_lite.asm.gemm import unsupported_reasons
from tensile_lite.codeobj.toolchain import Toolchain, find_toolchain_for
from tensile_lite.emu import Emulator
from tensile_lite.errors import ToolchainError
from tensile_lite.model import Solution
from tensile_lite.verify.runtime_view import from_model
from tests.gemm import harness


@pytest.fixture(scope="session")
def kernel_dir(tmp_path_factory: pytest.TempPathFactory, toolchain: Toolchain) -> Path:
    """Where this session's code objects go (one folder, shared by the emulator tests)."""
    return tmp_path_factory.mktemp("gemm_kernels")


def arch_toolchain(toolchain: Toolchain, arch: str) -> Toolchain:
    """The default toolchain, or the older LLVM that still knows gfx940/gfx941 (skip without one)."""
    if toolchain.check_target_ok(arch):
        return toolchain
    try:
        return find_toolchain_for(arch)
    except ToolchainError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def build(toolchain: Toolchain, kernel_dir: Path) -> Callable[[Solution], tuple[harness.Built, Emulator]]:
    """Build a supported solution's kernel once per module; (the kernel, an emulator of it)."""
    made: dict[str, tuple[harness.Built, Emulator]] = {}

    def get(sol: Solution) -> tuple[harness.Built, Emulator]:
        assert unsupported_reasons(sol) == (), unsupported_reasons(sol)
        key = harness.kernel_name(sol)
        if key not in made:
            built = harness.build(arch_toolchain(toolchain, sol.arch), sol, kernel_dir)
            made[key] = (built, harness.emulator_for(built))
            return made[key]
        # one kernel serves every value of the runtime's arguments (WGM, StaggerU, GSU...): the call is
        # made with what this solution tells the runtime, not with what the first one did
        built, emu = made[key]
        return attrs.evolve(built, solution=sol, runtime=from_model(sol)), emu

    return get
