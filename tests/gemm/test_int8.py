"""int8 inputs with int32 accumulation and epilogue (ComputeDataType I) run on the emulator and match
numpy: I8II (int32 D, wrap-around arithmetic) and I8I8 (int8 D, saturated), with the i8 MFMAs of
gfx90a (K 16 / 8), gfx94x (K 32 / 16) and gfx950.

The reference is exact integer arithmetic (float64 holds every value here); D values are compared
after the kernel's own narrowing (int32 wrap-around, int8 saturation).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tensile_lite.asm.gemm import generate, unsupported_reasons
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.host import GemmProblem
from tensile_lite.model import DataType, Params, ProblemType, Solution
from tests.gemm import harness
from tests.gemm.conftest import arch_toolchain
from tests.gemm.devset import supported_kernels
from tests.gemm.epilogue_ref import Epilogue
from tests.gemm.solutions import solution
from tests.gemm.test_fp8 import TRANSPOSES


def problem_type(dest: str, trans: str, **extra: object) -> ProblemType:
    raw: dict[str, object] = {
        "OperationType": "GEMM", "DataType": "I8", "DestDataType": dest, "ComputeDataType": "I",
        "HighPrecisionAccumulate": True, "TransposeA": TRANSPOSES[trans][0], "TransposeB": TRANSPOSES[trans][1],
        "Batched": True, "UseBeta": True, "SupportUserArgs": True, **extra}
    return ProblemType.from_params(Params.from_mapping(raw))


def make(dest: str, trans: str, arch: str = "gfx942", *, big: bool = False, **tuning: object) -> Solution:
    if arch == "gfx90a":
        mi = (32, 32, 8) if big else (16, 16, 16)
    else:
        mi = (32, 32, 16) if big else (16, 16, 32)
    tuning = {"GlobalReadVectorWidthA": 16, "GlobalReadVectorWidthB": 16, **tuning}
    return solution(problem_type(dest, trans), arch=arch, mi=mi, wave_tile=(1, 2) if big else (2, 1),
                    depth_u=64, **tuning)


def _cases(sol: Solution) -> list[tuple[GemmProblem, float, float]]:
    pt = sol.problem_type
    mt0, mt1 = sol.macro_tile
    du = sol.depth_u
    return [
        (GemmProblem(mt0, mt1, 2 * du, 1), 1.0, 0.0),
        (harness.padded(pt, mt0 + 5, 2 * mt1 - 3, du + 9, 2), 3.0, -2.0),     # edges, K tail, batch
        (harness.padded(pt, mt0 - 3, mt1 + 1, 2 * du - 1, 1), -1.0, 1.0),
        (GemmProblem(mt0 + 1, mt1, du, 1), float(1 << 20), 5.0),             # int32 D wraps, int8 D saturates
        (GemmProblem(mt0 - 1, mt1 + 1, du, 1), 0.0, 2.0),                    # alpha == 0: A, B never read
        (GemmProblem(mt0, mt1 + 7, 0, 2), 1.0, -1.0),                         # K == 0
    ]


def check(toolchain: Toolchain, kernel_dir: Path, sol: Solution, cases=None) -> None:
    assert unsupported_reasons(sol) == (), unsupported_reasons(sol)
    built = harness.build(arch_toolchain(toolchain, sol.arch), sol, kernel_dir)
    emu = harness.emulator_for(built)
    for problem, alpha, beta in cases or _cases(sol):
        result = harness.run(built, problem, alpha=alpha, beta=beta, emulator=emu)
        try:
            result.check()
        except AssertionError as exc:
            raise AssertionError(f"{built.name} on {problem}, alpha {alpha}, beta {beta}: {exc}") from None


@pytest.mark.parametrize("dest, trans, arch, big", [
    ("I", "NN", "gfx942", False), ("I8", "TN", "gfx942", True), ("I8", "NT", "gfx90a", False),
    ("I", "TT", "gfx90a", True), ("I8", "NN", "gfx950", False)])
def test_int8(dest: str, trans: str, arch: str, big: bool, toolchain: Toolchain, kernel_dir: Path) -> None:
    check(toolchain, kernel_dir, make(dest, trans, arch, big=big))


def test_narrow_vectors(toolchain: Toolchain, kernel_dir: Path) -> None:
    check(toolchain, kernel_dir, make("I8", "NN", GlobalReadVectorWidthA=2, GlobalReadVectorWidthB=4))


def test_integer_epilogue_text() -> None:
    text = generate(make("I8", "NN"))
    assert "v_mfma_i32_16x16x32_i8" in text and "v_mul_lo_u32" in text and "v_fmac_f32" not in text


def test_unsupported() -> None:
    """Integer compute has no ScaleAB, ScaleCD or bias (ScaleAlphaVec and activations it has: see
    test_integer_epilogue); int8 with f32 compute is not built."""
    for extra in ({"UseScaleAB": "Scalar"}, {"UseScaleCD": True}, {"UseBias": 1, "BiasDataTypeList": [6]}):
        sol = solution(problem_type("I", "NN", **extra), mi=(16, 16, 32), depth_u=64)
        assert "epilogue compute type I" in unsupported_reasons(sol), extra
    assert unsupported_reasons(solution(problem_type("I", "NN", UseScaleAlphaVec=1), mi=(16, 16, 32), depth_u=64)) == ()
    pt = ProblemType.from_params(Params.from_mapping({
        "OperationType": "GEMM", "DataType": "I8", "DestDataType": "S", "ComputeDataType": "S",
        "HighPrecisionAccumulate": True, "Batched": True, "UseBeta": True}))
    assert any(r.startswith("dtype:") for r in unsupported_reasons(solution(pt, mi=(16, 16, 32), depth_u=64)))


_MATRIX = list(itertools.product(("I", "I8"), sorted(TRANSPOSES), ("gfx90a", "gfx942", "gfx950"), (False, True)))


@pytest.mark.slow
@pytest.mark.parametrize("dest, trans, arch, big", _MATRIX)
def test_full_matrix(dest: str, trans: str, arch: str, big: bool, toolchain: Toolchain, kernel_dir: Path) -> None:
    check(toolchain, kernel_dir, make(dest, trans, arch, big=big))


def _dev_kernels() -> list[Solution]:
    try:
        sols = supported_kernels()
    except BaseException:  # shared material absent: the test itself will skip
        return []
    return [s for s in sols if s.problem_type.data_type is DataType.I8]


def _spread(sols: list[Solution]) -> tuple[list[Solution], list[Solution]]:
    """Per architecture and problem type, the smallest, middle and largest tile run by default; the rest
    (same code paths, other sizes) are the slow sweep."""
    groups: dict[tuple[str, str], list[Solution]] = {}
    for s in sols:
        groups.setdefault((s.arch, s.problem_type.name), []).append(s)
    picked: list[Solution] = []
    for group in groups.values():
        group.sort(key=lambda s: (s.macro_tile, s.depth_u, s.index))
        picked += [group[i] for i in sorted({0, len(group) // 2, len(group) - 1})]
    return picked, [s for s in sols if not any(s is p for p in picked)]


_SAMPLE, _REST = _spread(_dev_kernels())


def _check_dev(sol: Solution, toolchain: Toolchain, kernel_dir: Path) -> None:
    mt0, mt1 = sol.macro_tile
    check(toolchain, kernel_dir, sol, [(harness.padded(sol.problem_type, mt0 + 3, mt1 + 5, sol.depth_u + 7, 2), 2.0, -3.0),
                                       (GemmProblem(mt0, mt1, sol.depth_u, 1), 1.0, 0.0)])


def _sol_id(s: Solution) -> str:
    return f"{s.arch}-{s.problem_type.name}-{s.index}"


@pytest.mark.parametrize("sol", _SAMPLE, ids=_sol_id)
def test_dev_set(sol: Solution, toolchain: Toolchain, kernel_dir: Path) -> None:
    _check_dev(sol, toolchain, kernel_dir)


@pytest.mark.slow
@pytest.mark.parametrize("sol", _REST, ids=_sol_id)
def test_dev_set_rest(sol: Solution, toolchain: Toolchain, kernel_dir: Path) -> None:
    _check_dev(sol, toolchain, kernel_dir)


@pytest.mark.parametrize("arch", ["gfx942", "gfx1201"])
@pytest.mark.parametrize("activation", ["none", "relu", "abs", "leakyrelu", "clippedrelu"])
def test_integer_epilogue(arch: str, activation: str, toolchain: Toolchain, kernel_dir: Path) -> None:
    """int32 ScaleAlphaVec (an int vector; null is 1) and the i32 activations of an `all` kernel, with
    wrap-around (alpha 2^20) before the activation (the dev set's gfx1201 I8II_HAI_SAV shape, `all`
    to reach every i32 kind)."""
    pt = problem_type("I", "NT", UseScaleAlphaVec=1, Activation=True, ActivationType="all",
                      ActivationComputeDataType="I")
    extra: dict[str, object] = {"WavefrontSize": 32, "WorkGroup": [16, 8, 1]} if arch.startswith("gfx1") else {}
    mi = (16, 16, 16) if extra else (16, 16, 32)
    sol = solution(pt, arch=arch, mi=mi, wave_tile=(2, 1), depth_u=64, GlobalReadVectorWidthA=16,
                   GlobalReadVectorWidthB=16, **extra)
    assert unsupported_reasons(sol) == ()
    built = harness.build(arch_toolchain(toolchain, sol.arch), sol, kernel_dir)
    emu = harness.emulator_for(built)
    args = {"leakyrelu": (3.0, 0.0), "clippedrelu": (-50.0, 4000.0)}.get(activation, (0.0, 0.0))
    mt0, mt1 = sol.macro_tile
    for problem, alpha, beta, vectors in [(harness.padded(pt, mt0 + 3, mt1 + 5, 70, 2), 3.0, -2.0, True),
                                          (GemmProblem(mt0, mt1, 64, 1), float(1 << 20), 5.0, True),
                                          (GemmProblem(mt0 - 1, mt1, 64, 1), -1.0, 0.0, False)]:
        ep = Epilogue(activation=activation, activation_args=args, vectors=vectors)
        result = harness.run(built, problem, alpha=alpha, beta=beta, emulator=emu, epilogue=ep)
        try:
            result.check_exact()
        except AssertionError as exc:
            raise AssertionError(f"{activation} on {problem}, alpha {alpha}: {exc}") from None
