"""Multi-block MFMAs (v_mfma_f32_4x4x4_16b_f16, v_mfma_f32_16x16x4_4b_f16) with their blocks along M
(MIBlock [.., B, 1]): the plan's block geometry, kernels on the emulator against numpy on gfx90a and
gfx942 with edges, K remainders, batches and beta, the dev set's multi-block solutions, and the layouts
left out named by the gate."""

from __future__ import annotations

import pytest

from tensile_lite.asm.gemm import build_plan, unsupported_reasons
from tensile_lite.host import GemmProblem
from tensile_lite.model import Solution
from tests.gemm import harness
from tests.gemm.devset import supported_kernels
from tests.gemm.solutions import problem_type, solution


def multiblock(types: str, trans: tuple[bool, bool], mi: tuple[int, int, int, int], *, arch: str = "gfx90a",
               wave_tile: tuple[int, int] = (1, 1), wave_group: tuple[int, int] = (2, 1), depth_u: int = 32,
               bn: int = 1) -> Solution:
    m, n, k, b = mi
    bm = b // bn
    return solution(problem_type(types, *trans), arch=arch, mi=(m, n, k), wave_tile=wave_tile,
                    wave_group=wave_group, depth_u=depth_u, MatrixInstruction=[m, n, k, b],
                    MIBlock=[m, n, k, b, bm, bn], GlobalReadVectorWidthB=4)


def _cases(sol: Solution) -> list[tuple[GemmProblem, float, float]]:
    pt = sol.problem_type
    mt0, mt1 = sol.macro_tile
    du = sol.depth_u
    return [(GemmProblem(mt0, mt1, 2 * du, 1), 1.0, 0.0),                           # full tiles
            (harness.padded(pt, mt0 + 5, 2 * mt1 + 3, du + 9, 2), 0.5, -1.5),        # edges, K tail, batch
            (GemmProblem(2 * mt0 - 1, mt1 - 1, 3 * du - 2, 1), 1.0, 0.25)]           # partial tiles, beta


SHAPES = {
    "4x4x4x16-HHS-NN": ("HHS", (False, False), (4, 4, 4, 16), "gfx90a", (1, 1)),
    "4x4x4x16-HSS-TN": ("HSS", (True, False), (4, 4, 4, 16), "gfx90a", (1, 2)),
    "4x4x4x16-HHS-NT-gfx942": ("HHS", (False, True), (4, 4, 4, 16), "gfx942", (2, 1)),
    "16x16x4x4-HHS-NN": ("HHS", (False, False), (16, 16, 4, 4), "gfx90a", (1, 1)),
    "16x16x4x4-HSS-TT-gfx942": ("HSS", (True, True), (16, 16, 4, 4), "gfx942", (1, 2)),
}


@pytest.mark.parametrize("case", sorted(SHAPES))
def test_blocks_along_m(case: str, build) -> None:
    types, trans, mi, arch, wave_tile = SHAPES[case]
    sol = multiblock(types, trans, mi, arch=arch, wave_tile=wave_tile)
    plan = build_plan(sol)
    m, n, _, b = mi
    # one instruction covers B blocks of M rows: the wave tile's unit, and A's lane rows
    assert (plan.block_m, plan.block_n) == (m * b, n) == (plan.a.mi_size, plan.b.mi_size)
    assert plan.lanes.groups == 1 and plan.a.k_per_lane == plan.mfma.k  # every lane holds all K of its row
    assert sol.macro_tile == (2 * wave_tile[0] * m * b, wave_tile[1] * n)
    harness.check_cases(*build(sol), _cases(sol), seed=lambda problem: problem.m)


def test_other_block_layouts_are_named() -> None:
    along_n = multiblock("HHS", (False, False), (4, 4, 4, 16), bn=16)
    assert unsupported_reasons(along_n) == ("MI multi-block along N",)
    mixed = multiblock("HHS", (False, False), (16, 16, 4, 4), bn=2)
    assert unsupported_reasons(mixed) == ("MI multi-block along N",)


def _dev_multiblock() -> list[Solution]:
    try:
        return [s for s in supported_kernels() if s.matrix_instruction is not None and s.matrix_instruction.b > 1]
    except BaseException:  # shared material absent: the test itself will skip
        return []


@pytest.mark.parametrize("sol", _dev_multiblock(), ids=[s.problem_type.name for s in _dev_multiblock()])
def test_dev_set_multiblock(sol: Solution, build) -> None:
    mt0, mt1 = sol.macro_tile
    harness.check_cases(*build(sol), [(harness.padded(sol.problem_type, 133, 11, 41, 2), 1.0, 0.5),
                                      (GemmProblem(mt0, mt1, 2 * sol.depth_u, 1), 1.0, 0.0)])


def test_dev_set_has_multiblock_solutions() -> None:
    # guards the parametrisation above: the 2024 dev set's gfx90a files hold two 4x4x4x16 solutions
    sols = _dev_multiblock()
    if not sols:
        pytest.skip("the dev-set logic files (../shared/logic) are absent")
    assert {(s.arch, s.matrix_instruction.b) for s in sols if s.matrix_instruction} == {("gfx90a", 16)}
