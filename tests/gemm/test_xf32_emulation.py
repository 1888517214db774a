"""xf32 emulated on gfx950 (UseF32XEmulation: f32 inputs split into bf16 hi + lo, three bf16 MFMAs;
asm/gemm/xf32_split.py, docs/xf32_emulation.md) runs on the emulator and matches numpy within the
bound the split gives, which is much tighter than the xf32 one: a kernel that dropped the lo terms
(bf16 precision, ~2^-8 per product) or rounded inputs to xf32 (~2^-10) fails it.

Bound per element (docs/xf32_emulation.md): |D - D_exact| <= |alpha| * SPLIT * sum_k |a_ik| |b_kj|
plus the f32 accumulation of 3K products, (3K + 3) * 2^-24 of the same sum (and of |beta * c|).
"""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from tensile_lite.asm.gemm import generate, unsupported_reasons
from tensile_lite.host import GemmProblem
from tensile_lite.logic.reader import read_logic_file
from tensile_lite.model import Solution
from tensile_lite.verify import device
from tensile_lite.verify.compare import as_mnb
from tensile_lite.verify.reference import expected
from tests.gemm import harness
from tests.gemm.solutions import XF32, problem_type, solution
from tests.shared import shared_dir

# relative error of one emulated product: the lo*lo term and the rounding of each lo (docs/xf32_emulation.md)
SPLIT = 2.0 ** -16 * (3 + 2.0 ** -6)
U32 = 2.0 ** -24
LOGIC7_GFX950 = "gfx950_Cijk_Ailk_Bjlk_S_MX_B_UserArgs.yaml"


def _logic7_gfx950() -> Solution:
    path = shared_dir("logic7", "asm_full", "gfx950", "GridBased", LOGIC7_GFX950)
    (sol,) = read_logic_file(path).solutions
    return sol


def emulated(trans_a: bool, trans_b: bool, *, big: bool = False, arch: str = "gfx950") -> Solution:
    pt = problem_type("SS", trans_a, trans_b, **XF32)
    return solution(pt, arch=arch, mi=(32, 32, 8) if big else (16, 16, 16), wave_tile=(2, 1) if big else (1, 2),
                    depth_u=32, GlobalReadVectorWidthA=4, GlobalReadVectorWidthB=4, LocalReadVectorWidth=4,
                    UseF32XEmulation=True, EnableF32XdlMathOp=True)


def _check_split_bound(built: harness.Built, emu, problem: GemmProblem, alpha: float, beta: float,
                       seed: int) -> float:
    """Run `problem` and hold every element to the emulation bound; the largest error relative to
    |alpha| * sum |a||b| (for the report of how far inside the xf32 bound it stays)."""
    sol = built.solution
    s = harness.setup(built, problem, alpha=alpha, beta=beta, seed=seed, emulator=emu)
    res = harness.result(sol, s.call, device.run_all(s.launches).instructions)
    assert res.untouched
    t = s.call.tensors
    d = t["D"]
    k = problem.k
    # the f32 problem type (no xf32 input rounding): its reference is exact, its magnitude the |A||B| sum
    pt = attrs.evolve(sol.problem_type, f32_xdl_math_op=sol.problem_type.data_type)
    c = t["C"] if beta != 0 else None
    ref = expected(pt, t["A"], t["B"], c, d.letters, d.shape, k, alpha, beta, out=d.element)
    mag = expected(pt, attrs.evolve(t["A"], values=np.abs(t["A"].values)),
                   attrs.evolve(t["B"], values=np.abs(t["B"].values)), None, d.letters, d.shape, k, 1.0, 0.0,
                   out=d.element).exact
    cmag = as_mnb(np.abs(beta * c.values.reshape(ref.exact.shape))) if c is not None else 0.0
    products = abs(alpha) * as_mnb(mag)
    tol = (SPLIT + (3 * k + 3) * U32) * products + (3 * k + 3) * U32 * cmag + 1e-30
    err = np.abs(res.got - as_mnb(ref.exact))
    bad = err > tol
    assert not bad.any(), (f"{int(bad.sum())} of {bad.size} beyond the split bound; worst "
                           f"{float(np.max(err / tol)):.3g} x the bound")
    return float(np.max(err / np.maximum(products, 1e-30)))


def test_logic7_gfx950_solution_is_buildable() -> None:
    """The real 7.x gfx950 xf32 file (F32XdlMathOp 10, UseF32XEmulation, MI 16x16x16) is buildable:
    the kernel uses gfx950's bf16 MFMA and its RNE f32 -> bf16 conversion, no xf32 MFMA."""
    sol = _logic7_gfx950()
    assert unsupported_reasons(sol) == ()
    text = generate(sol)
    assert "v_mfma_f32_16x16x16_bf16" in text and "v_cvt_pk_bf16_f32" in text and "xf32" not in text.lower()


def test_logic7_gfx950_solution_on_the_emulator(build) -> None:
    sol = _logic7_gfx950()
    built, emu = build(sol)
    mt0, mt1 = sol.macro_tile
    worst = 0.0
    for n, (problem, alpha, beta) in enumerate((
            (GemmProblem(2 * mt0, 2 * mt1, 64, 1), 1.0, 0.0),
            (harness.padded(sol.problem_type, mt0 + 5, mt1 + 3, 37, 2), -0.75, 0.5),
            (GemmProblem(mt0 - 1, mt1, 16 * 9 + 3, 1), 1.5, -1.0))):
        worst = max(worst, _check_split_bound(built, emu, problem, alpha, beta, seed=n + 11))
    # far inside what xf32 MFMAs promise (2 * 2^-11 per product): the lo terms are there
    assert worst < 2.0 ** -14


@pytest.mark.parametrize("trans_a, trans_b, big", [(False, False, False), (True, False, True), (False, True, False),
                                                   (True, True, True)])
def test_hand_made_shapes(trans_a: bool, trans_b: bool, big: bool, build) -> None:
    """Every transpose, the 16x16x16 and 32x32x8 bf16 MFMAs, wave tiles of two blocks, K tails."""
    sol = emulated(trans_a, trans_b, big=big)
    assert unsupported_reasons(sol) == ()
    built, emu = build(sol)
    mt0, mt1 = sol.macro_tile
    for n, (problem, alpha, beta) in enumerate((
            (GemmProblem(mt0, mt1, 64, 1), 1.0, 0.0),
            (harness.padded(sol.problem_type, mt0 + 3, 2 * mt1 - 1, 45, 2), 2.0, -0.5))):
        _check_split_bound(built, emu, problem, alpha, beta, seed=n)


def test_where_emulation_is_refused() -> None:
    """UseF32XEmulation needs xf32 data and a target with an RNE f32 -> bf16 conversion (gfx950)."""
    assert "UseF32XEmulation on gfx942" in unsupported_reasons(emulated(False, True, arch="gfx942"))
    pt = problem_type("SS", False, True)
    plain = solution(pt, arch="gfx950", mi=(16, 16, 4), UseF32XEmulation=True)
    assert "UseF32XEmulation without xf32" in unsupported_reasons(plain)
    # without the key, xf32 on gfx950 has no MFMA to run on
    pt_x = problem_type("SS", False, True, **XF32)
    assert "F32XdlMathOp:X" in unsupported_reasons(solution(pt_x, arch="gfx950", mi=(16, 16, 8)))
