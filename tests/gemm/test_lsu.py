"""LocalSplitU on the emulator against numpy: 2 and 4 groups of waves each summing their share of
every DepthU, reduced in LDS into group 0, on CDNA (AGPR accumulators, 16x16 and 32x32 MFMAs) and
RDNA (wave32 WMMA), with edges, K tails (a group's share may be all padding), batches, beta, the
fused epilogue (whose LDS vectors every group stages before the extra groups end) and int32
accumulators; and the dev set's LSU solutions.
"""

from __future__ import annotations

import pytest

from tensile_lite.asm.gemm import unsupported_reasons
from tensile_lite.host import GemmProblem
from tensile_lite.model import DataType, Solution
from tests.gemm import harness
from tests.gemm.devset import supported_kernels
from tests.gemm.epilogue_ref import Epilogue
from tests.gemm.solutions import problem_type, solution
from tests.gemm.test_int8 import problem_type as i8_problem_type


def lsu_solution(pt, lsu: int, *, arch: str = "gfx942", mi: tuple[int, int, int] = (16, 16, 16),
                 wave_tile: tuple[int, int] = (1, 1), wave_group: tuple[int, int] = (1, 1), depth_u: int = 128,
                 **tuning: object) -> Solution:
    wave = 32 if arch.startswith("gfx1") else 64
    threads = wave * wave_group[0] * wave_group[1]
    extra: dict[str, object] = {"WavefrontSize": 32} if wave == 32 else {}
    return solution(pt, arch=arch, mi=mi, wave_tile=wave_tile, wave_group=wave_group, depth_u=depth_u,
                    WorkGroup=[16, threads // 16, lsu], **extra, **tuning)



def _check(build, sol: Solution, cases: list[tuple[GemmProblem, float, float, Epilogue | None]]) -> None:
    harness.check_cases(*build(sol), cases)


def _cases(sol: Solution) -> list[tuple[GemmProblem, float, float, Epilogue | None]]:
    pt = sol.problem_type
    mt0, mt1 = sol.macro_tile
    du = sol.depth_u
    return [(GemmProblem(mt0, mt1, 2 * du, 1), 1.0, 0.0, None),
            (harness.padded(pt, mt0 + 5, 2 * mt1 - 3, du + 9, 2), 0.5, -1.5, None),   # tail in group 0 only
            (GemmProblem(2 * mt0, mt1, du // 3, 1), 1.0, 0.5, None)]                    # groups past K sum 0


@pytest.mark.parametrize("arch, types, mi, lsu, wave_tile, wave_group", [
    ("gfx942", "HHS", (16, 16, 16), 4, (1, 1), (1, 1)),
    ("gfx942", "SS", (16, 16, 4), 2, (1, 2), (1, 2)),
    ("gfx90a", "BBS", (32, 32, 8), 2, (1, 1), (2, 1)),
    ("gfx1100", "HHS", (16, 16, 16), 2, (1, 1), (1, 2)),
    ("gfx1201", "BSS", (16, 16, 16), 4, (2, 1), (1, 1)),
])
def test_groups_reduce_into_one_tile(arch: str, types: str, mi: tuple[int, int, int], lsu: int,
                                     wave_tile: tuple[int, int], wave_group: tuple[int, int], build) -> None:
    pt = problem_type(types, True, False)
    sol = lsu_solution(pt, lsu, arch=arch, mi=mi, wave_tile=wave_tile, wave_group=wave_group)
    _check(build, sol, _cases(sol))


def test_epilogue_vectors_are_staged_by_every_group(build) -> None:
    """Bias and ScaleAlphaVec are staged one element per thread of the whole workgroup: the extra
    groups must not end before (a 16x16 tile over 4 groups of one wave)."""
    pt = problem_type("HHS", False, True, UseBias=1, BiasDataTypeList=[0, 4], Activation=True,
                      ActivationType="hipblaslt_all", UseScaleAlphaVec=1)
    sol = lsu_solution(pt, 4, depth_u=64)
    mt0, mt1 = sol.macro_tile
    _check(build, sol, [
        (harness.padded(pt, 3 * mt0 + 5, mt1 + 3, 70, 2), 0.5, -1.0, Epilogue(bias=DataType.H, activation="relu")),
        (GemmProblem(mt0, mt1, 64, 1), 1.0, 0.0, Epilogue(bias=DataType.S, activation="gelu"))])


def test_integer_accumulators(build) -> None:
    pt = i8_problem_type("I", "TN")
    sol = lsu_solution(pt, 2, mi=(16, 16, 32), depth_u=128, GlobalReadVectorWidthA=16, GlobalReadVectorWidthB=16)
    mt0, mt1 = sol.macro_tile
    _check(build, sol, [(harness.padded(pt, mt0 + 3, mt1 + 5, 150, 2), 3.0, -2.0, None)])


def test_split_k_and_amax_are_named() -> None:
    split = lsu_solution(problem_type("HHS"), 2, GlobalSplitU=2, GlobalSplitUAlgorithm="MultipleBufferSingleKernel")
    assert "LocalSplitU with split-K" in unsupported_reasons(split)
    # through the conversion kernels (MultipleBuffer) group 0 stores the slice (test_postgsu)
    buffered = lsu_solution(problem_type("HHS"), 2, GlobalSplitU=2, GlobalSplitUAlgorithm="MultipleBuffer")
    assert unsupported_reasons(buffered) == ()
    amax = lsu_solution(problem_type("HHS", OutputAmaxD=True, UseScaleCD=True), 2)
    assert "LocalSplitU with AmaxD" in unsupported_reasons(amax)


def _dev_lsu() -> list[Solution]:
    try:
        sols = [s for s in supported_kernels() if s.workgroup[2] > 1]
    except BaseException:  # shared material absent: the test itself will skip
        return []
    return sorted(sols, key=lambda s: (s.macro_tile[0] * s.macro_tile[1] * s.depth_u, s.index))


def _dev_quick() -> list[Solution]:
    picked: dict[tuple[str, int], Solution] = {}
    for sol in _dev_lsu():
        picked.setdefault((sol.problem_type.name, sol.workgroup[2]), sol)
    return list(picked.values())


@pytest.mark.parametrize("sol", _dev_quick(), ids=[f"{s.problem_type.name}-LSU{s.workgroup[2]}" for s in _dev_quick()])
def test_dev_set_sample(sol: Solution, build) -> None:
    mt0, mt1 = sol.macro_tile
    _check(build, sol, [(harness.padded(sol.problem_type, mt0 + 3, mt1 + 5, sol.depth_u + 7, 2), 1.25, -0.5, None),
                        (GemmProblem(mt0, mt1, sol.depth_u, 1), 1.0, 0.0, None)])


@pytest.mark.slow
def test_dev_set_all(build) -> None:
    sols = _dev_lsu()
    assert sols
    for sol in sols:
        mt0, mt1 = sol.macro_tile
        _check(build, sol, [(harness.padded(sol.problem_type, mt0 + 3, mt1 + 5, sol.depth_u + 7, 2), 1.25, -0.5,
                             None)])
