"""The runtime's tile order in the kernel (asm/gemm/wgm.py): WorkGroupMapping (positive, negative, 0/1) and
WorkGroupMappingXCC with and without a CU count, read from the header the runtime packs. Each kernel runs the
whole grid against numpy (every tile exactly once), and single workgroups show that workgroup w computes the
tile the verifier's independent model of the runtime order (verify.mapping) says, on gfx942, with split-K and
on gfx12's 3-D grid; the library then tells the runtime the kernels read WGM."""

from __future__ import annotations

import numpy as np
import pytest

from tensile_lite.asm.gemm import runtime_overrides_read
from tensile_lite.host import GemmProblem
from tensile_lite.model import Solution
from tensile_lite.verify import device, runtime_args
from tensile_lite.verify.launch import grid_of
from tensile_lite.verify.mapping import ROW_MAJOR
from tensile_lite.verify.problems import Case
from tests.gemm import harness
from tests.gemm.solutions import problem_type, solution
from tests.gemm.test_wmma import wmma


def _sol(arch: str = "gfx942", **tuning: object) -> Solution:
    pt = problem_type("HHS", True, False)
    if arch.startswith("gfx12"):
        return wmma(pt, arch, wave_group=(1, 1), depth_u=16, **tuning)
    return solution(pt, arch=arch, wave_group=(1, 1), depth_u=16, WorkGroup=[16, 4, 1], **tuning)


CASES = {
    "wgm3": {"WorkGroupMapping": 3},
    "wgm-2": {"WorkGroupMapping": -2},
    "wgm1-xcc4": {"WorkGroupMapping": 1, "WorkGroupMappingXCC": 4, "WorkGroupMappingXCCGroup": 0},
    "wgm2-xcc2-cu6": {"WorkGroupMapping": 2, "WorkGroupMappingXCC": 2, "WorkGroupMappingXCCGroup": 6},
    "wgm5-xcc8-cus": {"WorkGroupMapping": 5, "WorkGroupMappingXCC": 8},  # WGMXCCG -1: the CU count
    "wgm3-splitk": {
        "WorkGroupMapping": 3,
        "GlobalSplitU": 2,
        "GlobalSplitUAlgorithm": "MultipleBufferSingleKernel",
    },
    "wgm-3-gfx1201": {"arch": "gfx1201", "WorkGroupMapping": -3},
}


def _make(case: str) -> Solution:
    tuning = dict(CASES[case])
    arch = str(tuning.pop("arch", "gfx942"))
    return _sol(arch, **tuning)


def _written_tile(got: np.ndarray, mt: tuple[int, int]) -> tuple[int, int, int]:
    """The one tile whose elements a single workgroup wrote (D starts as the sentinel NaN)."""
    rows, cols, batches = np.nonzero(~np.isnan(got))
    assert rows.size, "the workgroup wrote nothing"
    tiles = {(int(r) // mt[0], int(c) // mt[1], int(b)) for r, c, b in zip(rows, cols, batches, strict=True)}
    assert len(tiles) == 1, tiles
    return tiles.pop()


@pytest.mark.parametrize("case", sorted(CASES))
def test_runtime_tile_order(case: str, build) -> None:
    sol = _make(case)
    built, emu = build(sol)
    mt0, mt1 = sol.macro_tile
    # 7 x 5 tiles (partial last ones) in 2 batches: every block width, remainder and XCC round occurs
    problem = GemmProblem(7 * mt0 - 3, 5 * mt1 - 1, 40, 2)
    harness.check_cases(built, emu, [(problem, 1.0, 0.5)])
    rs = built.runtime
    order = runtime_args.tile_order(rs)
    assert not order.is_row_major
    gsu = sol.runtime.global_split_u
    grid = grid_of(rs, Case("order", problem, 1.0, 0.0, gsu=gsu if gsu > 1 else None))
    ids = grid.ids()
    moved = 0
    for wg in [*ids[:: max(1, len(ids) // 9)], ids[-1]]:
        s = harness.setup(built, problem, emulator=emu)
        gemm, *rest = s.launches
        # every GSU slice of the tile runs (the in-kernel reduction needs all of them), one tile in all
        want, _ = order.tile_and_slice(grid, wg)
        slices = [w for w in ids if order.tile(grid, w) == want]
        device.run_all([gemm.only(slices), *rest])
        got = harness.result(sol, s.call, 0).got
        assert _written_tile(got, (mt0, mt1)) == want, (wg, want)
        moved += want != ROW_MAJOR.tile(grid, wg)
    assert moved, "no sampled workgroup moved: the case does not tell the orders apart"


def test_library_declares_wgm() -> None:
    assert runtime_overrides_read(_make("wgm3"))["wgm"] is True
