"""End to end: a hand-written MFMA GEMM tile (buffer loads, LDS, barriers, MFMA, AGPRs, stores)."""

from __future__ import annotations

import numpy as np
import pytest

from tensile_lite.emu import Emulator
from tests.emu.conftest import require_arch
from tests.emu.gemm_tile import gemm_tile_kernel, run_gemm_tile
from tests.emu.kernels import build


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942", "gfx950"])
def test_gemm_tile_matches_numpy(toolchain, co_dir, arch):
    require_arch(toolchain, arch)
    co = build(toolchain, co_dir, arch, [gemm_tile_kernel(arch)], name="gemm")
    emu = Emulator(co, toolchain=toolchain)
    assert emu.problems("gemm_tile") == {}
    got, want, stats = run_gemm_tile(emu, 256, 128, 32, seed=1, workgroups=[(1, 0, 0)])
    assert stats.waves == 4
    np.testing.assert_array_equal(got[128:, :], want[128:, :])
    assert (got[:128, :].view(np.uint32) == 0xFFFFFFFF).all()  # workgroup (0, 0) did not run
