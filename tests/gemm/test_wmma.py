"""The WMMA kernels of RDNA (gfx11: replicated inputs, every other output row per lane; gfx12: K
split over the half-waves, eight rows per lane, 3-D grid with ids in ttmp9/ttmp7) run on the
emulator in wave32 and match numpy: f16/bf16 to f16/bf16/f32, int8 (signed iu8 WMMA), fp8/bf8 and
their mixes on gfx12 (OCP), with edges, K tails, batches, the fused epilogue, and grouped launches
(whose grid stays 1-D on gfx12 too).

The emulator checks the layouts themselves: gfx11's WMMA fails if lanes 16-31 do not repeat
lanes 0-15. `-m slow` runs the full matrix and every dev-set RDNA kernel.
"""

from __future__ import annotations

import itertools

import pytest

from tensile_lite.asm.gemm import generate, unsupported_reasons
from tensile_lite.asm.gemm.lanes import lane_layout
from tensile_lite.asm.gemm.plan import build_plan
from tensile_lite.host import ARG_TYPE_TABLE, ARG_TYPE_USER, GemmProblem, launch_grid
from tensile_lite.model import DataType, Solution
from tests.gemm import harness
from tests.gemm.devset import supported_kernels
from tests.gemm.epilogue_ref import Epilogue
from tests.gemm.solutions import problem_type, solution
from tests.gemm.test_fp8 import TRANSPOSES
from tests.gemm.test_fp8 import problem_type as f8_problem_type
from tests.gemm.test_int8 import problem_type as i8_problem_type

RDNA = ("gfx1100", "gfx1201")


def wmma(pt, arch: str, *, wave_tile: tuple[int, int] = (1, 1), wave_group: tuple[int, int] = (2, 2),
         depth_u: int = 32, **tuning: object) -> Solution:
    waves = wave_group[0] * wave_group[1]
    return solution(pt, arch=arch, mi=(16, 16, 16), wave_tile=wave_tile, wave_group=wave_group, depth_u=depth_u,
                    WavefrontSize=32, WorkGroup=[16, 2 * waves, 1], **tuning)



def _cases(sol: Solution) -> list[tuple[GemmProblem, float, float]]:
    pt = sol.problem_type
    mt0, mt1 = sol.macro_tile
    du = sol.depth_u
    return [(GemmProblem(mt0, mt1, 2 * du, 1), 1.0, 0.0),                              # full tiles
            (harness.padded(pt, 2 * mt0 + 5, mt1 - 3, du + 9, 2), 0.5, -1.5),           # edges, K tail, batch
            (GemmProblem(mt0 - 1, 2 * mt1, du, 3), 0.0, 2.0)]                            # alpha 0, 3 batches


def _check(build, sol: Solution, cases=None) -> None:
    harness.check_cases(*build(sol), cases or _cases(sol), seed=lambda problem: problem.m)


def test_lane_layouts_follow_the_spec() -> None:
    """The declarative layouts against matrix_instructions.md §3.3 (a table the emulator also checks)."""
    mi11 = build_plan(wmma(problem_type("HHS"), "gfx1100")).mfma
    mi12 = build_plan(wmma(problem_type("HHS"), "gfx1201")).mfma
    l11, l12 = (lane_layout(build_plan(wmma(problem_type("HHS"), a)).arch, mi) for a, mi in
                (("gfx1100", mi11), ("gfx1201", mi12)))
    assert (l11.wave, l11.groups, l11.runs, l11.k_run(mi11), l11.row_step) == (32, 1, 1, 16, 1)
    assert l11.rows == (0, 2, 4, 6, 8, 10, 12, 14) and l11.run_length == 1
    assert (l12.groups, l12.runs, l12.k_run(mi12), l12.row_step, l12.rows) == (2, 2, 4, 8, tuple(range(8)))
    assert [length for _, _, length in l12.row_runs] == [4, 4]


@pytest.mark.parametrize("arch", RDNA)
@pytest.mark.parametrize("types, trans", [("HHS", "TN"), ("BBS", "NT"), ("HSS", "NN"), ("BSS", "TT")])
def test_half_precision(arch: str, types: str, trans: str, build) -> None:
    pt = problem_type(types, *TRANSPOSES[trans])
    _check(build, wmma(pt, arch, wave_tile=(2, 1) if trans in ("TN", "NN") else (1, 2)))


@pytest.mark.parametrize("arch", RDNA)
def test_bigger_workgroup_and_depth(arch: str, build) -> None:
    """Four waves in a 1x4 group, two blocks each way, DepthU 64 (four WMMA k-steps per tile)."""
    pt = problem_type("HHS", True, False)
    _check(build, wmma(pt, arch, wave_tile=(2, 2), wave_group=(1, 4), depth_u=64))


@pytest.mark.parametrize("arch", ["gfx1101", "gfx1201"])
@pytest.mark.parametrize("dest", ["I", "I8"])
def test_int8(arch: str, dest: str, build) -> None:
    """Signed int8 through the iu8 WMMA (neg_lo marks A and B signed): negative products must stay
    negative, int32 D wraps, int8 D saturates."""
    pt = i8_problem_type(dest, "TN")
    sol = wmma(pt, arch, wave_tile=(1, 2), GlobalReadVectorWidthA=16, GlobalReadVectorWidthB=16, depth_u=64)
    mt0, mt1 = sol.macro_tile
    _check(build, sol, [(harness.padded(pt, mt0 + 3, mt1 + 5, 70, 2), 3.0, -2.0),
                        (GemmProblem(mt0, mt1, 64, 1), float(1 << 20), 5.0)])


@pytest.mark.parametrize("types, dest", [("F8", "S"), ("B8", "H"), ("F8B8", "B"), ("B8F8", "F8"),
                                         ("F8O", "S"), ("B8O", "H"), ("F8B8O", "F8O"), ("B8F8O", "B")])
def test_fp8_on_gfx12(types: str, dest: str, build) -> None:
    """gfx12's fp8/bf8 WMMA (OCP encodings), the dev set's gfx1200/gfx1201 shapes; 7.x's OCP codes 15-18
    (F8O...) build the same kernels there."""
    pt = f8_problem_type(types, dest, "TN")
    sol = wmma(pt, "gfx1201", wave_tile=(2, 1), depth_u=64, GlobalReadVectorWidthA=16, GlobalReadVectorWidthB=16)
    built, emu = build(sol)
    mt0, mt1 = sol.macro_tile
    for problem, ep in ((harness.padded(pt, mt0 + 3, mt1 + 5, 70, 2), Epilogue(scale_a=0.5, scale_b=2.0)),
                        (GemmProblem(mt0, mt1, 64, 1), None)):
        result = harness.run(built, problem, alpha=0.75, beta=0.5, emulator=emu, epilogue=ep, seed=3)
        result.check()


@pytest.mark.parametrize("arch", ["gfx1102", "gfx1201"])
def test_epilogue(arch: str, build) -> None:
    """Bias (run-time type), ScaleAlphaVec and the hipblaslt_all activations, the dev set's RDNA
    epilogue, in full tiles and edges (gfx11's rows come one per register, so the staged M-vector
    is read one element at a time)."""
    pt = problem_type("HHS", True, False, UseBias=1, BiasDataTypeList=[0, 4], Activation=True,
                      ActivationType="hipblaslt_all", UseScaleAlphaVec=1)
    sol = wmma(pt, arch, wave_tile=(2, 1))
    built, emu = build(sol)
    mt0, mt1 = sol.macro_tile
    for problem, alpha, beta, ep in [
            (GemmProblem(mt0, mt1, 32, 1), 1.0, 0.0, Epilogue(bias=DataType.S, activation="relu")),
            (harness.padded(pt, mt0 + 5, mt1 + 3, 39, 2), 0.5, -1.5,
             Epilogue(bias=DataType.H, activation="gelu", stride_bias=mt0 + 9))]:
        result = harness.run(built, problem, alpha=alpha, beta=beta, emulator=emu, epilogue=ep, seed=5)
        result.check()


@pytest.mark.parametrize("arch, types", [("gfx1100", "BBS"), ("gfx1201", "HHS")])
def test_e_output(arch: str, types: str, build) -> None:
    """UseE (the dev set's navi31/navi33 "Aux" files): E before the activation, D after it."""
    pt = problem_type(types, True, True, UseE=True, UseBias=1, BiasDataTypeList=[0, 7], Activation=True,
                      ActivationType="hipblaslt_all", UseScaleAlphaVec=1)
    sol = wmma(pt, arch, wave_tile=(1, 2))
    built, emu = build(sol)
    mt0, mt1 = sol.macro_tile
    for problem, ep in ((GemmProblem(mt0, mt1, 32, 1), Epilogue(bias=DataType.S, activation="relu")),
                        (harness.padded(pt, mt0 + 5, mt1 + 3, 39, 2), Epilogue(bias=DataType.B, activation="gelu"))):
        result = harness.run(built, problem, alpha=0.5, beta=-1.0, emulator=emu, epilogue=ep, seed=9)
        assert result.e is not None
        result.check()


@pytest.mark.parametrize("arch", RDNA)
@pytest.mark.parametrize("arg_type", [ARG_TYPE_TABLE, ARG_TYPE_USER])
def test_grouped(arch: str, arg_type: int, build) -> None:
    """Grouped launches keep a 1-D grid on gfx12 as well: the kernel takes ttmp9 as the flat id."""
    pt = problem_type("HHS", False, True, GroupedGemm=True)
    sol = wmma(pt, arch)
    built, emu = build(sol)
    mt0, mt1 = sol.macro_tile
    problems = [harness.padded(pt, mt0 + 5, mt1 + 3, 39, 2), GemmProblem(2 * mt0, mt1, 32, 1),
                GemmProblem(mt0 - 3, 2 * mt1 + 1, 5, 3)]
    for result in harness.run_grouped(built, problems, arg_type=arg_type, alphas=[0.5, 1.0, -2.0],
                                      betas=[-1.5, 0.0, 0.25], emulator=emu):
        result.check()


def test_gfx12_grid_is_three_dimensional() -> None:
    """The harness launches gfx12 as the runtime does, so a kernel that ignored ttmp7 would fail."""
    pt = problem_type("HHS")
    sol = wmma(pt, "gfx1201")
    assert launch_grid(sol, GemmProblem(70, 40, 32, 3)) == (3, 2, 3)
    assert launch_grid(wmma(pt, "gfx1100"), GemmProblem(70, 40, 32, 3)) == (18, 1, 1)
    text = generate(sol)
    assert "ttmp7" in text and "ttmp9" in text and "s_barrier_signal" in text


def test_rdna_limits_are_named() -> None:
    """What the WMMA writer does not build yet on RDNA is reported, never mis-built."""
    pt = problem_type("HHS", OutputAmaxD=True, UseScaleCD=True)
    assert "AmaxD on RDNA" in unsupported_reasons(wmma(pt, "gfx1100"))
    split = wmma(problem_type("HHS"), "gfx1201", GlobalSplitU=2, GlobalSplitUAlgorithm="MultipleBufferSingleKernel")
    assert "GSU MultipleBufferSingleKernel on RDNA" in unsupported_reasons(split)
    # RDNA has no f32 WMMA: the instruction the solution names does not exist there
    assert unsupported_reasons(wmma(problem_type("SS"), "gfx1100")) == ("MI:16x16x16x1",)


def _dev_rdna() -> list[Solution]:
    try:
        return [s for s in supported_kernels() if s.arch.startswith("gfx1")]
    except BaseException:  # shared material absent: the test itself will skip
        return []


def _dev_quick() -> list[Solution]:
    picked: dict[str, Solution] = {}
    for sol in sorted(_dev_rdna(), key=lambda s: (s.macro_tile[0] * s.macro_tile[1] * s.depth_u, s.index)):
        picked.setdefault(f"{sol.arch}:{sol.problem_type.name}", sol)
    return list(picked.values())


def _dev_cases(sol: Solution) -> list[tuple[GemmProblem, float, float]]:
    mt0, mt1 = sol.macro_tile
    return [(harness.padded(sol.problem_type, mt0 + 3, mt1 + 5, sol.depth_u + 7, 2), 1.25, -0.5),
            (GemmProblem(mt0, mt1, sol.depth_u, 1), 1.0, 0.0)]


@pytest.mark.parametrize("sol", _dev_quick(), ids=[f"{s.arch}-{s.problem_type.name}" for s in _dev_quick()])
def test_dev_set_sample(sol: Solution, build) -> None:
    """One dev-set kernel per RDNA architecture and problem type (the smallest)."""
    _check(build, sol, _dev_cases(sol))


@pytest.mark.slow
def test_dev_set_all(build) -> None:
    sols = _dev_rdna()
    assert sols
    for sol in sols:
        _check(build, sol, _dev_cases(sol))


@pytest.mark.slow
@pytest.mark.parametrize("arch, types, trans", list(itertools.product(
    ("gfx1100", "gfx1101", "gfx1102", "gfx1200", "gfx1201"), ("HHS", "HSS", "BBS", "BSS"), sorted(TRANSPOSES))))
def test_full_matrix(arch: str, types: str, trans: str, build) -> None:
    pt = problem_type(types, *TRANSPOSES[trans])
    for wt, wg in (((1, 1), (2, 2)), ((2, 1), (1, 2)), ((1, 2), (4, 1))):
        _check(build, wmma(pt, arch, wave_tile=wt, wave_group=wg))
