"""Split-K with MultipleBuffer on the emulator, the way the runtime runs it: the GEMM kernel with the
workspace in D's and C's places stores its GSU f32 slices, then the conversion kernel the runtime
finds by name (postgsu.py) sums them and runs the epilogue into D (and E). Checked against numpy for
GSU 2, 3, 8 and 20 (past the last PostGSU bucket), every vector width, edges, K tails, batches, padded
C and D (the conversion kernel reads and writes them at their own strides), the full epilogue, RDNA,
a grouped launch (the `_GG` kernels' work-item table), GSU 1 at run time (no conversion), and GSU-1 solutions
whose kernels take a user's GSU.

The names and argument layouts are also checked against upstream's kernels in the reference outputs.
"""

from __future__ import annotations

import json

import pytest

from tensile_lite.asm.gemm import Buildable, decide, postgsu, runtime_overrides_read, unsupported_reasons
from tensile_lite.asm.gemm.plan import MULTIPLE_BUFFER
from tensile_lite.asm.kernel import pack_arguments
from tensile_lite.host import ARG_TYPE_TABLE, GemmProblem
from tensile_lite.host import conversion as host_conversion
from tensile_lite.library.derived import GLOBAL_SPLIT_U_PGR
from tensile_lite.model import DataType, Solution
from tests.gemm import harness
from tests.gemm.devset import logic_files, supported_kernels
from tests.gemm.epilogue_ref import Epilogue
from tests.gemm.solutions import problem_type, solution
from tests.gemm.test_int8 import problem_type as i8_problem_type
from tests.gemm.test_lsu import lsu_solution
from tests.shared import shared_dir

EPILOGUE = {"UseBias": 1, "BiasDataTypeList": [0, 4, 7], "Activation": True, "ActivationType": "hipblaslt_all",
            "UseScaleAlphaVec": 1}


def mb(pt, gsu: int, arch: str = "gfx942", **tuning: object) -> Solution:
    extra: dict[str, object] = {"WavefrontSize": 32, "WorkGroup": [16, 8, 1]} if arch.startswith("gfx1") else {}
    return solution(pt, arch=arch, wave_tile=(2, 1), GlobalSplitU=gsu, GlobalSplitUAlgorithm="MultipleBuffer",
                    **extra, **tuning)



def _check(build, sol: Solution, cases) -> None:
    harness.check_cases(*build(sol), cases)


@pytest.mark.parametrize("gsu", [2, 3, 8, 20])
def test_gsu_values(gsu: int, build) -> None:
    """Each slice count, including one K block per slice and slices with no block at all (K small)."""
    pt = problem_type("HHS", True, False)
    sol = mb(pt, gsu)
    mt0, mt1 = sol.macro_tile
    du = sol.depth_u
    _check(build, sol, [(GemmProblem(mt0, mt1, 4 * du, 1), 1.0, 0.0, None),
                        (harness.padded(pt, mt0 + 5, 2 * mt1 - 3, 3 * du + 9, 2), 0.5, -1.5, None),
                        (GemmProblem(mt0, mt1, du - 3, 1), 1.0, 1.0, None)])


def test_vector_widths(build) -> None:
    """vw 4 (M % 4 == 0, more than 2048 elements), 2 (M % 2 == 0) and 1 (odd M)."""
    pt = problem_type("BSS", False, True)
    sol = mb(pt, 4)
    problems = [GemmProblem(64, 40, 96, 1), GemmProblem(62, 40, 96, 1), GemmProblem(61, 40, 96, 1)]
    assert [host_conversion.launch_vector_width(pt, [p]) for p in problems] == [4, 2, 1]
    _check(build, sol, [(p, 1.5, 0.5, None) for p in problems])


@pytest.mark.parametrize("types", ["HHS", "BBS", "HSS"])
def test_epilogue_in_the_conversion_kernel(types: str, build) -> None:
    """Bias of each run-time type (a conversion kernel per type), ScaleAlphaVec, the activations and
    beta * C happen in the conversion kernel, in its order."""
    pt = problem_type(types, True, False, **EPILOGUE)
    sol = mb(pt, 3)
    mt0, mt1 = sol.macro_tile
    edge = harness.padded(pt, mt0 + 5, mt1 + 3, 3 * sol.depth_u + 7, 2)
    _check(build, sol, [
        (edge, 0.5, -1.5, Epilogue(bias=DataType.H, activation="gelu", stride_bias=edge.m + 4)),
        (GemmProblem(2 * mt0, mt1, 2 * sol.depth_u, 1), 1.0, 0.0, Epilogue(bias=DataType.B, activation="relu")),
        (edge, 1.0, 0.5, Epilogue(bias=DataType.S, vectors=False))])


def test_scales_and_e_output(build) -> None:
    """ScaleAB (scalar) and ScaleCD, and the E output before the activation."""
    pt = problem_type("HHS", True, False, UseScaleAB="Scalar", UseScaleCD=True, UseE=True, UseBias=1,
                      BiasDataTypeList=[0], Activation=True, ActivationType="hipblaslt_all")
    sol = mb(pt, 2)
    mt0, mt1 = sol.macro_tile
    edge = harness.padded(pt, mt0 + 5, mt1 + 3, 2 * sol.depth_u + 7, 2)
    built, emu = build(sol)
    result = harness.run(built, edge, alpha=0.75, beta=0.5, emulator=emu,
                         epilogue=Epilogue(scale_a=0.5, scale_b=2.0, scale_c=1.5, scale_d=-0.25, bias=DataType.S,
                                           activation="relu"), seed=3)
    assert result.e is not None
    result.check()


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_rdna(arch: str, build) -> None:
    pt = problem_type("HHS", True, True, **EPILOGUE)
    sol = mb(pt, 3, arch)
    mt0, mt1 = sol.macro_tile
    _check(build, sol, [(harness.padded(pt, mt0 + 5, mt1 + 3, 3 * sol.depth_u + 7, 2), 0.5, -1.0,
                         Epilogue(bias=DataType.S, activation="relu"))])


def test_grouped(build) -> None:
    """argType 1: every GEMM's slices in its own workspace, then one `_GG` conversion launch whose
    work-item table tells each workgroup its GEMM (an empty GEMM included)."""
    pt = problem_type("HHS", False, True, GroupedGemm=True, **EPILOGUE)
    sol = mb(pt, 2)
    built, emu = build(sol)
    mt0, mt1 = sol.macro_tile
    problems = [harness.padded(pt, mt0 + 5, mt1 + 3, 2 * sol.depth_u + 7, 2), GemmProblem(0, mt1, 32, 1),
                GemmProblem(2 * mt0, mt1, 3 * sol.depth_u, 1), GemmProblem(mt0 - 3, 2 * mt1 + 1, 40, 3)]
    eps = [Epilogue(bias=DataType.H, activation="relu"), Epilogue(), Epilogue(bias=DataType.H), Epilogue()]
    assert "_GG_" in host_conversion.conversion_name(pt, DataType.H, 2, 1)
    results = harness.run_grouped(built, problems, arg_type=ARG_TYPE_TABLE, alphas=[0.5, 1.0, 1.0, -2.0],
                                  betas=[-1.5, 0.0, 1.0, 0.25], epilogues=eps, emulator=emu)
    for i, result in enumerate(results):
        try:
            result.check()
        except AssertionError as exc:
            raise AssertionError(f"GEMM {i}: {exc}") from None


def test_runtime_gsu_one_needs_no_conversion(build) -> None:
    """The runtime may lower the GSU to 1: the kernel then writes D itself, with the full epilogue."""
    pt = problem_type("HHS", True, False, **EPILOGUE)
    sol = mb(pt, 4)
    built, emu = build(sol)
    mt0, mt1 = sol.macro_tile
    problem = harness.padded(pt, mt0 + 5, mt1 + 3, 2 * sol.depth_u + 7, 2)
    result = harness.run(built, problem, alpha=0.5, beta=-1.0, emulator=emu,
                         epilogue=Epilogue(bias=DataType.S, activation="gelu"), gsu=1)
    result.check()


INT32_CASES = [(GemmProblem(64, 48, 128, 1), 1.0, 0.0),
               (harness.padded(i8_problem_type("I", "TN"), 37, 50, 3 * 64 + 9, 2), 3.0, -2.0),  # edges, K tail, batch
               (GemmProblem(33, 49, 64, 1), float(1 << 20), 5.0)]                               # alpha * sum wraps


@pytest.mark.parametrize("gsu", [2, 3, 20])
def test_int32_partial_sums(gsu: int, build) -> None:
    """I8II on gfx1101 (the dev set's shape, TN): each slice stores its exact int32 sums, the `Cijk_II`
    conversion kernel adds them and applies alpha and beta * C with wrap-around (2, odd and past the
    last PostGSU bucket); the runtime's GSU 1 writes D from the kernel itself."""
    pt = i8_problem_type("I", "TN")
    sol = mb(pt, gsu, "gfx1101", depth_u=64, GlobalReadVectorWidthA=16, GlobalReadVectorWidthB=16)
    built, emu = build(sol)
    assert host_conversion.conversion_name(pt, None, 2, 1) == "Cijk_II_PostGSU2_VW1"
    for problem, alpha, beta in INT32_CASES:
        for launch in ((gsu, 1) if gsu == 2 else (gsu,)):
            result = harness.run(built, problem, alpha=alpha, beta=beta, emulator=emu, gsu=launch, seed=problem.k)
            try:
                result.check()
            except AssertionError as exc:
                raise AssertionError(f"GSU {launch} on {problem}, alpha {alpha}, beta {beta}: {exc}") from None


@pytest.mark.parametrize("types, mi, lsu, wave_tile, wave_group, gsu", [
    ("HHS", (16, 16, 16), 4, (1, 1), (1, 1), 3), ("SS", (16, 16, 4), 2, (1, 2), (1, 2), 2)])
def test_local_split_u(types: str, mi: tuple[int, int, int], lsu: int, wave_tile: tuple[int, int],
                       wave_group: tuple[int, int], gsu: int, build) -> None:
    """LocalSplitU with MultipleBuffer split-K (the dev set's gfx942 shapes): the groups add their partials
    in LDS, group 0 stores the workgroup's slice, the conversion kernel does the rest."""
    pt = problem_type(types, True, False)
    sol = lsu_solution(pt, lsu, mi=mi, wave_tile=wave_tile, wave_group=wave_group,
                       GlobalSplitU=gsu, GlobalSplitUAlgorithm="MultipleBuffer")
    mt0, mt1 = sol.macro_tile
    du = sol.depth_u
    _check(build, sol, [(GemmProblem(mt0, mt1, 2 * gsu * du, 1), 1.0, 0.0, None),
                        (harness.padded(pt, mt0 + 5, 2 * mt1 - 3, 3 * du + 9, 2), 0.5, -1.5, None),
                        (GemmProblem(2 * mt0, mt1, du // 3, 1), 1.0, 0.5, None)])


def test_names_and_layouts_match_upstream() -> None:
    """Every conversion kernel upstream built for the dev set's MultipleBuffer problem types has our
    name; its argument block has our size (upstream's HIP kernels take one struct, padded to 8 bytes,
    and their hipblaslt_all struct lacks the two activation values the runtime sends: we take what
    the runtime sends)."""
    reference = shared_dir("reference", "kernels")
    assert host_conversion.SPLIT_PGR == GLOBAL_SPLIT_U_PGR
    checked = 0
    for arch in ("gfx942", "gfx1102", "gfx1101"):
        upstream = {k["name"]: [a for a in k["args"] if not a["value_kind"].startswith("hidden")]
                    for k in json.loads((reference / f"{arch}.json").read_text()) if "PostGSU" in k["name"]}
        ours = {}
        for lf in logic_files():
            for sol in lf.solutions:
                if lf.arch == arch and sol.global_split_u_algorithm == "MultipleBuffer" and \
                        sol.runtime.global_split_u > 1 and postgsu.supported(sol.problem_type):
                    for v in host_conversion.conversion_kernels(sol.problem_type):
                        ours[v.name] = sol.problem_type
        assert ours
        for name, pt in ours.items():
            args = upstream.get(name)
            assert args is not None, f"{arch}: upstream has no {name}"
            size = pack_arguments(postgsu.arguments(pt)).size
            if "_HA" in name:
                size -= 8  # the two activation values upstream's struct leaves out
            assert len(args) == 1 and args[0]["size"] == -(-size // 8) * 8, name
            checked += 1
    assert checked >= 100


def _dev_mb() -> list[Solution]:
    try:
        sols = [s for s in supported_kernels() if s.global_split_u_algorithm == "MultipleBuffer"
                and s.runtime.global_split_u > 1]
    except BaseException:  # shared material absent: the test itself will skip
        return []
    return sorted(sols, key=lambda s: (s.macro_tile[0] * s.macro_tile[1] * s.depth_u, s.index))


def _dev_quick() -> list[Solution]:
    picked: dict[str, Solution] = {}
    for sol in _dev_mb():
        picked.setdefault(f"{sol.arch}:{sol.problem_type.name}", sol)
    return list(picked.values())


@pytest.mark.parametrize("sol", _dev_quick(), ids=[f"{s.arch}-{s.problem_type.name}" for s in _dev_quick()])
def test_dev_set_sample(sol: Solution, build) -> None:
    mt0, mt1 = sol.macro_tile
    _check(build, sol, [(harness.padded(sol.problem_type, mt0 + 3, mt1 + 5, 2 * sol.depth_u + 7, 2), 1.25, -0.5,
                         None)])


def _dev_lsu() -> list[Solution]:
    return [s for s in _dev_mb() if s.workgroup[2] > 1]


@pytest.mark.parametrize("sol", _dev_lsu(), ids=[f"{s.arch}-{s.problem_type.name}-{s.index}" for s in _dev_lsu()])
def test_dev_set_local_split_u(sol: Solution, build) -> None:
    """The dev set's LocalSplitU solutions with MultipleBuffer split-K (gfx942: GSU 2 to 64, 2 and 4 groups)."""
    mt0, mt1 = sol.macro_tile
    _check(build, sol, [(harness.padded(sol.problem_type, mt0 + 3, mt1 + 5, 2 * sol.depth_u + 7, 2), 1.25, -0.5,
                         None)])


def test_gsu_one_kernels_take_the_users_gsu(build) -> None:
    """A GSU-1 MultipleBuffer solution's kernel is a split-K one (upstream's are): the library lets the
    runtime override its GSU, and with the user's GSU 3 it leaves slices for the conversion kernel; with
    the solution's GSU 1 it writes D itself."""
    pt = problem_type("HHS", True, False, **EPILOGUE)
    sol = mb(pt, 1)
    verdict = decide(sol)
    assert isinstance(verdict, Buildable) and verdict.plan.split_k == MULTIPLE_BUFFER
    assert runtime_overrides_read(sol, verdict)["gsu"]
    built, emu = build(sol)
    mt0, mt1 = sol.macro_tile
    du = sol.depth_u
    problem = harness.padded(pt, mt0 + 5, 2 * mt1 - 3, 3 * du + 9, 2)
    ep = Epilogue(bias=DataType.H, activation="relu")
    for gsu in (None, 3):
        result = harness.run(built, problem, alpha=0.5, beta=-1.5, emulator=emu, epilogue=ep, gsu=gsu)
        result.check()


@pytest.mark.parametrize("extra, why", [
    ({"OutputAmaxD": True, "UseScaleCD": True}, "AmaxD: the conversion kernel takes no amax"),
    ({"Gradient": True, "UseBias": 1, "BiasSrc": "B", "BiasDataTypeList": [0]}, "BGRADB: it has no B"),
])
def test_gsu_one_kernels_stay_plain_where_the_conversion_cannot_serve(extra: dict, why: str) -> None:
    sol = mb(problem_type("HHS", True, False, **extra), 1)
    verdict = decide(sol)
    assert isinstance(verdict, Buildable), why
    assert verdict.plan.split_k == "" and not runtime_overrides_read(sol, verdict)["gsu"], why
    # with GSU > 1 the same solution is not built at all
    assert unsupported_reasons(mb(sol.problem_type, 2)), why
