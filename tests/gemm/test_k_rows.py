"""M/N-contiguous operands stored in LDS as loaded (plan.OperandPlan.k_rows): whole-vector LDS writes, one
LDS read per k, narrow elements packed into the MFMA's registers after the reads (local_read.py); on the
emulator against numpy with edges, K remainders, batches and beta, on CDNA and RDNA; the packing step
shown to matter; and the transposing fallback where the packing registers do not fit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tensile_lite.asm.gemm import build_plan, generate, unsupported_reasons
from tensile_lite.asm.gemm import mainloop as mainloop_module
from tensile_lite.asm.gemm.support import Buildable, decide
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.host import GemmProblem
from tensile_lite.model import Solution
from tests.gemm import harness
from tests.gemm.conftest import arch_toolchain
from tests.gemm.solutions import problem_type, solution
from tests.gemm.test_fp8 import make
from tests.gemm.test_fp8 import problem_type as fp8_problem_type
from tests.gemm.test_lsu import lsu_solution
from tests.gemm.test_wmma import wmma

CASES = {
    "f16-NN": lambda: solution(problem_type("HHS", False, False), wave_tile=(2, 2), depth_u=32),
    "f16-NT": lambda: solution(problem_type("HHS", False, True), wave_tile=(2, 1), depth_u=64),
    "bf16-NN": lambda: solution(problem_type("BSS", False, False), mi=(32, 32, 8), wave_tile=(1, 2), depth_u=32),
    "f32-NT": lambda: solution(problem_type("SS", False, True), mi=(16, 16, 4), wave_tile=(2, 1), depth_u=16),
    "f16-NN-lsu2": lambda: lsu_solution(problem_type("HHS", False, False), 2, wave_group=(1, 2), depth_u=64),
    "fp8-NN": lambda: make("F8", "H", "NN"),
    "fp8-NT-big": lambda: make("F8", "S", "NT", big=True),
    "hf8-NN": lambda: make("HF8", "H", "NN"),
    "f16-NT-gfx1100": lambda: wmma(problem_type("HHS", False, True), "gfx1100"),
    "bf16-NN-gfx1201": lambda: wmma(problem_type("BBS", False, False), "gfx1201", wave_tile=(1, 2)),
}


def _cases(sol: Solution) -> list[tuple[GemmProblem, float, float]]:
    pt = sol.problem_type
    mt0, mt1 = sol.macro_tile
    du = sol.depth_u
    return [(GemmProblem(mt0, mt1, 2 * du, 1), 1.0, 0.0),                            # full tiles
            (harness.padded(pt, mt0 + 5, 2 * mt1 - 3, du + 9, 2), 0.5, -1.5),         # edges, K tail, batch
            (GemmProblem(2 * mt0 - 1, mt1 + 1, 3 * du - 2, 1), 1.0, 0.25)]            # several iterations


def _ds(text: str, prefix: str) -> list[str]:
    return [line.split()[0] for line in text.splitlines() if line.strip().startswith(prefix)]


@pytest.mark.parametrize("case", sorted(CASES))
def test_stored_as_loaded_and_correct(case: str, build) -> None:
    sol = CASES[case]()
    plan = build_plan(sol)
    text = generate(sol)
    for op, transposed in ((plan.a, sol.problem_type.tlu_a), (plan.b, sol.problem_type.tlu_b)):
        assert op.k_rows == transposed, op.name  # every M/N-contiguous operand, none of the others
        if op.k_rows:
            assert op.pack == max(1, 4 // op.lds_bpe)
            assert op.lds_bytes == op.depth_u * op.lds_stride * op.lds_bpe and op.lds_stride >= op.tile
    reads, writes = _ds(text, ("ds_read", "ds_load")), _ds(text, ("ds_write", "ds_store"))
    # CDNA zeroes the other half on D16 loads: no half-register LDS reads; no element-wise transposing writes
    assert not [r for r in reads if "d16" in r]
    assert not [w for w in writes if re.search(r"_(b16|b8)(_d16_hi)?$", w)]
    if any(op.pack > 1 for op in (plan.a, plan.b)):
        assert "v_lshl_or_b32" in text
        assert any(r.endswith(("_u16", "_u8")) for r in reads)
    harness.check_cases(*build(sol), _cases(sol), seed=lambda problem: problem.n)


def test_packing_matters(toolchain: Toolchain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the packing step only each register's first element reaches the MFMA: results differ."""
    sol = CASES["f16-NN"]()
    monkeypatch.setattr(mainloop_module, "pack_step", lambda *args: None)
    built = harness.build(arch_toolchain(toolchain, sol.arch), sol, tmp_path)
    mt0, mt1 = sol.macro_tile
    result = harness.run(built, GemmProblem(mt0, mt1, 2 * sol.depth_u, 1), emulator=harness.emulator_for(built))
    with pytest.raises(AssertionError):
        result.check()


def test_transposed_where_packing_does_not_fit() -> None:
    """A one-wave fp8 NN tile of 128x64x128: three packing registers per MFMA input register overflow the
    VGPRs, so the gate builds the operand transposed at write time instead of rejecting the solution."""
    sol = solution(fp8_problem_type("F8", "H", "NN"), mi=(16, 16, 32), wave_tile=(8, 4), wave_group=(1, 1),
                   depth_u=128, GlobalReadVectorWidthA=16, GlobalReadVectorWidthB=16)
    packing = build_plan(sol)
    assert packing.a.pack == 4
    decision = decide(sol)
    assert isinstance(decision, Buildable), unsupported_reasons(sol)
    assert not decision.plan.a.k_rows and decision.plan.a.pack == 1
    text = generate(sol)
    assert "ds_write_b8" in text and not [r for r in _ds(text, "ds_read") if r.endswith("_u8")]
