"""OutputAmaxD on the emulator against numpy: the max of |D before scaleD| over the whole GEMM, from
one workgroup, from many (edges, K tail, batches: the cross-workgroup reduction through AmaxWS and
the AmaxSync counter), after relu, with beta, in a grouped launch (one counter per GEMM), and never
from a user-arguments launch, whose struct has no amax output. D itself is checked as usual.

The workspace is poisoned (a partial nobody wrote would win the max) and the output starts as NaN.
"""

from __future__ import annotations

import pytest

from tensile_lite.host import ARG_TYPE_TABLE, ARG_TYPE_USER, GemmProblem
from tensile_lite.model import DataType, Solution
from tests.gemm import harness
from tests.gemm.devset import supported_kernels
from tests.gemm.epilogue_ref import Epilogue
from tests.gemm.solutions import problem_type, solution
from tests.gemm.test_fp8 import problem_type as f8_problem_type

AMAX = {"OutputAmaxD": True, "UseScaleCD": True, "UseBias": 1, "BiasDataTypeList": [0], "Activation": True,
        "ActivationType": "hipblaslt_all"}



def _hhs() -> Solution:
    return solution(problem_type("HHS", True, False, **AMAX), wave_tile=(2, 1))


def test_one_workgroup_and_many(build) -> None:
    sol = _hhs()
    built, emu = build(sol)
    pt = sol.problem_type
    mt0, mt1 = sol.macro_tile
    for problem, alpha, beta, ep in [
        (GemmProblem(mt0, mt1, sol.depth_u, 1), 1.0, 0.0, Epilogue(scale_d=0.5)),             # one group
        (harness.padded(pt, 2 * mt0 + 5, 3 * mt1 - 3, sol.depth_u + 9, 2), 0.75, -1.5,
         Epilogue(scale_c=2.0, scale_d=-4.0, bias=DataType.S)),                                   # 18 groups
        (harness.padded(pt, mt0 + 1, mt1 + 2, 2 * sol.depth_u, 3), 1.0, 0.5,
         Epilogue(scale_d=3.0, activation="relu")),                                               # after relu
    ]:
        result = harness.run(built, problem, alpha=alpha, beta=beta, emulator=emu, epilogue=ep, seed=problem.m)
        assert result.amax is not None
        result.check()
        got, want, _ = result.amax
        # the max is of the value before scaleD, so it differs from max |D| whenever |scaleD| != 1
        assert want > 0 and got > 0


def test_amax_ignores_what_lies_outside_the_problem(build) -> None:
    """Edge tiles: the lanes past M and N compute act(0), which is 0.5 for sigmoid; with every real
    element below that (a one-element GEMM with a negative result), only the mask keeps it out."""
    pt = problem_type("HSS", False, False, OutputAmaxD=True, UseScaleCD=True, Activation=True, ActivationType="all")
    sol = solution(pt)
    built, emu = build(sol)
    result = harness.run(built, GemmProblem(1, 1, 40, 1), alpha=-1.0, beta=0.0, emulator=emu,
                         epilogue=Epilogue(scale_d=1.0, activation="sigmoid"), seed=7)
    result.check()
    assert result.amax is not None and result.amax[1] < 0.5


def test_grouped_table_has_a_counter_per_gemm(build) -> None:
    """Three GEMMs of different sizes in one argType-1 launch, each with its own amax."""
    sol = _hhs()
    built, emu = build(sol)
    pt = sol.problem_type
    mt0, mt1 = sol.macro_tile
    problems = [harness.padded(pt, 2 * mt0 + 3, mt1 + 1, sol.depth_u + 5, 1), GemmProblem(mt0, mt1, sol.depth_u, 1),
                harness.padded(pt, mt0 - 3, 2 * mt1, 2 * sol.depth_u, 2)]
    eps = [Epilogue(scale_d=2.0), Epilogue(scale_d=0.25), Epilogue(scale_d=-1.0)]
    results = harness.run_grouped(built, problems, arg_type=ARG_TYPE_TABLE, alphas=[1.0, 2.0, 0.5],
                                  betas=[0.0, 1.0, -1.0], epilogues=eps, emulator=emu, seed=3)
    amaxes = []
    for result in results:
        assert result.amax is not None
        result.check()
        amaxes.append(result.amax[0])
    assert len(set(amaxes)) == 3


def test_user_arguments_write_no_amax(build) -> None:
    sol = _hhs()
    built, emu = build(sol)
    pt = sol.problem_type
    problems = [harness.padded(pt, 40, 20, 40, 1), GemmProblem(16, 16, 32, 1)]
    results = harness.run_grouped(built, problems, arg_type=ARG_TYPE_USER, alphas=[1.0, 1.0], betas=[0.0, 0.0],
                                  epilogues=[Epilogue(scale_d=2.0)] * 2, emulator=emu)
    for result in results:
        assert result.amax is None
        result.check()


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_fp8_output(arch: str, build) -> None:
    """An F8 D saturated after scaleD, the amax of the unscaled values beside it (the dev set's shape)."""
    pt = f8_problem_type("F8", "F8", "NT", **AMAX)
    sol = solution(pt, arch=arch, mi=(16, 16, 32), wave_tile=(1, 1), depth_u=64, GlobalReadVectorWidthA=16,
                   GlobalReadVectorWidthB=16)
    built, emu = build(sol)
    problem = harness.padded(pt, 2 * sol.macro_tile[0] - 1, sol.macro_tile[1] + 3, 70, 2)
    result = harness.run(built, problem, alpha=0.5, beta=0.0, emulator=emu,
                         epilogue=Epilogue(scale_a=0.5, scale_b=2.0, scale_d=0.125, scale_c=1.0), seed=5)
    result.check()


def test_dev_set_amax_kernels(build) -> None:
    """The dev set's AmaxD solutions (gfx940/gfx941: FP8/BF8 to F8/B8 with ScaleCD), one problem each."""
    sols = [s for s in supported_kernels() if s.problem_type.output_amax_d]
    assert sols, "the dev set has AmaxD solutions the writer supports"
    seen = set()
    for sol in sols:
        if sol.problem_type.name in seen:
            continue
        seen.add(sol.problem_type.name)
        built, emu = build(sol)
        pt = sol.problem_type
        mt0, mt1 = sol.macro_tile
        problem = harness.padded(pt, 2 * mt0 + 1, mt1 + 3, sol.depth_u + 3, 2)
        result = harness.run(built, problem, alpha=1.0, beta=0.5, emulator=emu,
                             epilogue=Epilogue(scale_d=0.5, scale_c=1.0, bias=DataType.S), seed=11)
        try:
            result.check()
        except AssertionError as exc:
            raise AssertionError(f"{built.name}: {exc}") from None
    assert len(seen) >= 3

