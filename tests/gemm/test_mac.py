"""Non-matrix (MAC) kernels (mac.py, epilogue_f64.py) on the emulator against numpy: f32 (v_fmac_f32)
and f64 (v_fma_f64, the f64 epilogue), RDNA in wave64 (gfx11 solutions that ask for it, assembled with
-mwavefrontsize64) and wave32, CDNA in wave64; full tiles, edges, K tails, batches, alpha 0, beta zero
and non-zero, transposes, and the fused f32 epilogue (bias, ScaleAlphaVec, activation) the dev set's
navi31 MAC kernels carry. `-m slow` runs every shape."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tensile_lite.asm.gemm import unsupported_reasons
from tensile_lite.asm.gemm.plan import build_plan
from tensile_lite.asm.operands import VCC
from tensile_lite.emu.ops_vector import _fma64
from tensile_lite.host import GemmProblem
from tensile_lite.model import DataType, Params, ProblemType, Solution
from tests.gemm import harness
from tests.gemm.epilogue_ref import Epilogue


def problem_type(data: str, trans_a: bool = True, trans_b: bool = False, **extra: Any) -> ProblemType:
    raw: dict[str, Any] = {
        "OperationType": "GEMM", "DataType": data, "DestDataType": data, "ComputeDataType": data,
        "HighPrecisionAccumulate": False, "TransposeA": trans_a, "TransposeB": trans_b, "Batched": True,
        "UseBeta": True, "SupportUserArgs": True, **extra}
    return ProblemType.from_params(Params.from_mapping(raw))


def mac(pt: ProblemType, arch: str, wave: int, *, thread_tile: tuple[int, int] = (2, 2),
        workgroup: tuple[int, int, int] = (8, 8, 1), depth_u: int = 16, **tuning: Any) -> Solution:
    """A MAC solution shaped like the dev set's (WorkGroup 8x8, ThreadTile 1x1 or 2x2, DepthU 8/16)."""
    raw: dict[str, Any] = {
        "KernelLanguage": "Assembly", "EnableMatrixInstruction": False, "MatrixInstruction": [],
        "WorkGroup": list(workgroup), "ThreadTile": list(thread_tile), "DepthU": depth_u, "WavefrontSize": wave,
        "GlobalSplitU": 1, "WorkGroupMapping": 1, "StaggerU": 0, "GlobalReadVectorWidthA": 1,
        "GlobalReadVectorWidthB": 1, "LocalReadVectorWidth": 1, "VectorWidthA": 1, "VectorWidthB": 1,
        "PrefetchGlobalRead": 1, "PrefetchLocalRead": 0, "InnerUnroll": 1, "SolutionIndex": 0,
        "NumElementsPerThread": thread_tile[0] * thread_tile[1], **tuning}
    return Solution.from_params(pt, Params.from_mapping(raw), arch, 0)


def _cases(sol: Solution) -> list[tuple[GemmProblem, float, float]]:
    mt0, mt1 = sol.macro_tile
    du = sol.depth_u
    return [(GemmProblem(2 * mt0, mt1, 2 * du, 1), 1.0, 0.0),                        # full tiles, beta 0
            (harness.padded(sol.problem_type, 2 * mt0 + 5, mt1 - 3, du + 9, 2), 0.5, -1.5),  # edges, K tail, batch
            (GemmProblem(mt0 - 1, 2 * mt1, 3, 3), 0.0, 2.0)]                            # alpha 0, K < DepthU


def _check(build, sol: Solution) -> None:
    harness.check_cases(*build(sol), _cases(sol), seed=lambda problem: problem.m)


@pytest.mark.parametrize("data, arch, wave", [
    ("S", "gfx1100", 64), ("D", "gfx1101", 32), ("D", "gfx1201", 32), ("S", "gfx90a", 64)])
def test_representative(data: str, arch: str, wave: int, build) -> None:
    """One kernel per kind: f32 in RDNA wave64, f64 in gfx11 and gfx12 wave32, f32 on CDNA."""
    _check(build, mac(problem_type(data), arch, wave))


@pytest.mark.slow
@pytest.mark.parametrize("data", ["S", "D"])
@pytest.mark.parametrize("arch, wave", [("gfx1100", 64), ("gfx1100", 32), ("gfx1201", 64), ("gfx942", 64)])
@pytest.mark.parametrize("trans", [(True, False), (False, True), (False, False), (True, True)])
@pytest.mark.parametrize("thread_tile, depth_u", [((1, 1), 8), ((2, 2), 16), ((4, 2), 8)])
def test_shapes(data: str, arch: str, wave: int, trans: tuple[bool, bool], thread_tile: tuple[int, int],
                depth_u: int, build) -> None:
    _check(build, mac(problem_type(data, *trans), arch, wave, thread_tile=thread_tile, depth_u=depth_u))


def test_epilogue_in_wave64(build) -> None:
    """The navi31 MAC kernels' epilogue: bias (run-time type), ScaleAlphaVec, hipblaslt_all activations."""
    pt = problem_type("S", False, True, UseBias=1, BiasDataTypeList=[0], Activation=True,
                      ActivationType="hipblaslt_all", UseScaleAlphaVec=1)
    sol = mac(pt, "gfx1100", 64, thread_tile=(1, 1), depth_u=8)
    built, emu = build(sol)
    mt0, mt1 = sol.macro_tile
    for problem, alpha, beta, ep in [
            (GemmProblem(mt0, mt1, 8, 1), 1.0, 0.0, Epilogue(bias=DataType.S, activation="relu")),
            (harness.padded(pt, mt0 + 5, mt1 + 3, 13, 2), 0.5, -1.5, Epilogue(bias=DataType.S, activation="gelu"))]:
        harness.run(built, problem, alpha=alpha, beta=beta, emulator=emu, epilogue=ep, seed=5).check()


def test_geometry() -> None:
    """Lanes tile the work group: 8x8 blocks in wave64, 4x8 blocks and two waves down M in wave32;
    k-steps are one 16-byte LDS read (4 f32, 2 f64)."""
    p64 = build_plan(mac(problem_type("S"), "gfx1100", 64))
    assert (p64.mfma.m, p64.mfma.n, p64.mfma.k, p64.wave_group, p64.wave_tile) == (8, 8, 4, (1, 1), (2, 2))
    assert p64.arch.wavefront_size == 64 and p64.arch.vcc is VCC
    p32 = build_plan(mac(problem_type("D"), "gfx1201", 32))
    assert (p32.mfma.m, p32.mfma.n, p32.mfma.k, p32.wave_group, p32.mfma.cd_regs) == (4, 8, 2, (2, 1), 2)


def test_limits_are_named() -> None:
    """What the MAC writer does not build is reported, never mis-built."""
    assert "non-MFMA kernel with LocalSplitU" in unsupported_reasons(
        mac(problem_type("S"), "gfx1100", 64, workgroup=(8, 4, 2)))
    assert unsupported_reasons(mac(problem_type("S"), "gfx90a", 32)) == ("wave32",)
    half = ProblemType.from_params(Params.from_mapping({
        "OperationType": "GEMM", "DataType": "H", "DestDataType": "H", "ComputeDataType": "S",
        "HighPrecisionAccumulate": True, "TransposeA": True, "Batched": True, "UseBeta": True}))
    assert unsupported_reasons(mac(half, "gfx1100", 64)) == ("non-MFMA kernel dtype:HH/H/S",)
    assert unsupported_reasons(mac(problem_type("D"), "gfx1100", 64)) == ()


def test_fma64_rounds_once() -> None:
    """v_fma_f64 keeps the product's low bits (long double would lose them) and IEEE's zero signs."""
    eps = 2.0 ** -52
    a = np.array([1 + eps, 0.0, -0.0, 1e308, 1.0, 2.0 ** -1000])
    b = np.array([1 - eps, -1.0, 0.0, 10.0, 1.0, 2.0 ** -60])
    c = np.array([-1.0, -0.0, -0.0, 0.0, -1.0, 0.0])
    got = _fma64(a, b, c)
    assert got[0] == -(2.0 ** -104)
    assert np.signbit(got[1]) and np.signbit(got[2])       # -0 + -0 = -0
    assert got[3] == np.inf
    assert got[4] == 0.0 and not np.signbit(got[4])          # x - x = +0
    assert got[5] == 2.0 ** -1060                            # a subnormal, exact
