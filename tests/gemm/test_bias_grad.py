"""BGRADB (Gradient + UseBias + BiasSrc B, asm/gemm/bias_grad.py) on the emulator against numpy: the
bias is B's column sums over K of batch 0, written in the run-time bias type by the workgroups of
M-tile 0, and D is the forward epilogue's without a bias. Through the verifier's own cases and
checks (verify.launch.run_case: the bias output is N + 8 sentinels; columns of tiles that did not run
and the elements past N must stay untouched), on the dev set's two solutions and on hand-made ones
that take the other paths: N-contiguous B (one element per load), 16-bit and f32 B, a 32x32 MFMA,
columns in two passes, threads left idle (MT1 not dividing the threads), K below one chunk.
"""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from tensile_lite.asm.gemm import bias_grad as kernel_bias_grad
from tensile_lite.asm.gemm import unsupported_reasons
from tensile_lite.emu import Emulator
from tensile_lite.host import GemmProblem
from tensile_lite.model import DataType, Solution
from tensile_lite.verify import bias_grad, compare, device, epilogue, launch, mapping, problems, runtime_args
from tensile_lite.verify.elements import element
from tensile_lite.verify.launch import Inputs
from tensile_lite.verify.problems import Case
from tensile_lite.verify.tensors import read_back
from tests.gemm.devset import logic_files
from tests.gemm.harness import Built
from tests.gemm.solutions import problem_type, solution
from tests.gemm.test_fp8 import problem_type as f8_problem_type

BGRADB = {"Gradient": True, "UseBias": 1, "BiasSrc": "B", "BiasDataTypeList": [0, 4, 7]}


def _dev() -> list[Solution]:
    return [s for lf in logic_files() for s in lf.solutions if "BiasSrcB" in s.problem_type.name
            and not unsupported_reasons(s)]


def _hand_made() -> dict[str, Solution]:
    return {
        # B N-contiguous (Bjlk): one element per load, the column stride 2 bytes; 4 waves
        "hhs_nt": solution(problem_type("HHS", False, True, **BGRADB)),
        # bf16 B, K-contiguous, a 32x32 MFMA, two blocks per wave along N
        "bbs_32": solution(problem_type("BBS", True, False, **BGRADB), mi=(32, 32, 8), wave_tile=(1, 2),
                           depth_u=16),
        # f32 B, one wave of 64 threads over MT1 = 128 columns: two passes
        "ss_passes": solution(problem_type("SS", True, False, **BGRADB), mi=(16, 16, 4), wave_group=(1, 1),
                              wave_tile=(1, 8), depth_u=16),
        # MT1 = 48 of 64 threads: 16 idle while the sums run
        "hss_idle": solution(problem_type("HSS", True, False, **BGRADB), wave_group=(1, 1), wave_tile=(1, 3)),
        # fp8 B in 16-element chunks over 4 groups: K remainders of up to 15 elements, 4 per group
        "f8": solution(f8_problem_type("F8", "S", "TN", **BGRADB), mi=(16, 16, 32), wave_group=(1, 1),
                       depth_u=64, GlobalReadVectorWidthA=16, GlobalReadVectorWidthB=16),
    }


def _run(built_emu: tuple[Built, Emulator], case: Case, seed: int = 0) -> launch.CaseResult:
    built, emu = built_emu
    return launch.run_case(emu, built.name, built.runtime, case, np.random.default_rng(seed))


def _cases(sol: Solution, built: Built) -> list[Case]:
    rs = built.runtime
    out, _ = problems.cases(rs, None)
    mt0, mt1 = sol.macro_tile
    du = sol.depth_u
    # the whole grid of two batches (B differs between them): only batch 0's sums may land
    out.append(Case("edges", GemmProblem(mt0, 2 * mt1 + 5, 3 * du + 5, 2), -0.5, 0.0))
    # K below one load's chunk, N below one tile
    out.append(Case("small", GemmProblem(mt0 + 3, max(mt1 - 5, 1), 3, 1), 1.0, 1.0))
    return out


@pytest.mark.parametrize("which", sorted(_hand_made()))
def test_hand_made_solutions(build, which: str) -> None:
    sol = _hand_made()[which]
    assert unsupported_reasons(sol) == ()
    built_emu = build(sol)
    for case in _cases(sol, built_emu[0]):
        result = _run(built_emu, case, seed=case.problem.k)
        assert result.error is None, f"{which} {case.describe()}: {result.error}"


def test_dev_set_solutions(build) -> None:
    sols = _dev()
    if not sols:
        pytest.skip("the dev set's BiasSrcB file is not present")
    assert len(sols) == 2
    for sol in sols:
        built_emu = build(sol)
        for case in _cases(sol, built_emu[0]):
            result = _run(built_emu, case, seed=case.problem.n)
            assert result.error is None, f"{sol.name} {case.describe()}: {result.error}"


def _inputs(built: Built, case: Case, bias_type: DataType | None) -> Inputs:
    t = launch.make_inputs(built.runtime, case, np.random.default_rng(1))
    ep = t.epilogue
    assert ep is not None and ep.bias_out is not None
    if bias_type is None:  # a null bias pointer
        buffers = {k: v for k, v in ep.buffers.items() if k != "bias"}
        ep = attrs.evolve(ep, buffers=buffers)
    else:
        ep = attrs.evolve(ep, args=attrs.evolve(ep.args, bias_type=bias_type))
    return attrs.evolve(t, epilogue=ep)


def _launch(built: Built, emu: Emulator, case: Case, t: Inputs, tiles: list[tuple[int, int, int]] | None = None) -> device.Buffers:
    rs = built.runtime
    buffers = device.place(device.DeviceMemory(), launch.contents(t))
    ids = None
    if tiles is not None:
        grid = launch.grid_of(rs, case)
        table = mapping.workgroups_of(runtime_args.tile_order(rs), grid)
        ids = [wg for tile in tiles for wg in table[tile]]
    assert t.epilogue is not None
    device.run(device.gemm(emu, built.name, rs, case.problem, buffers, case.alpha, case.beta, t.epilogue.args,
                           workgroups=ids))
    return buffers


def _check_d(built: Built, case: Case, t: Inputs, buffers: device.Buffers) -> None:
    want = launch.reference_of(built.runtime, case, t)
    d_bits, d_values, _ = read_back(t.d, buffers.read("D"))
    bits = compare.as_mnb(d_bits)
    assert compare.mismatches(bits, compare.as_mnb(d_values), want, t.d.element, np.ones(bits.shape, dtype=bool)) \
        is None


def test_only_m_tile_0_writes_and_other_types_write_nothing(build) -> None:
    sol = _hand_made()["hss_idle"]
    built, emu = build(sol)
    mt0, mt1 = sol.macro_tile
    case = Case("full", GemmProblem(3 * mt0, 2 * mt1, 40, 1), 1.0, 0.0)
    sentinel_bias = element(DataType.S)
    assert sentinel_bias is not None
    # the workgroups of M-tiles 1 and 2 alone write no bias (every column's sum is theirs to compute too)
    t = _inputs(built, case, DataType.S)
    bits = _launch(built, emu, case, t, [(1, 0, 0), (2, 1, 0)]).read("bias")
    assert (bits == sentinel_bias.sentinel).all()
    # M-tile 0 of N-tile 1 writes exactly its columns
    bits = _launch(built, emu, case, t, [(0, 1, 0), (2, 0, 0)]).read("bias")
    assert bias_grad.mismatch(sol.problem_type, sentinel_bias, bits, t.b, mt1, [1]) is None
    assert bias_grad.mismatch(sol.problem_type, sentinel_bias, bits, t.b, mt1, [0, 1]) is not None
    # a type the kernel was not built for (E8M0 is in no bias list), or a null pointer: nothing, and D is right
    for bias_type in (DataType.I, None):
        t = _inputs(built, case, bias_type)
        buffers = _launch(built, emu, case, t)
        if bias_type is not None:
            assert (buffers.read("bias") == sentinel_bias.sentinel).all()
        _check_d(built, case, t, buffers)


def test_alpha_zero_still_reads_a_and_b(build) -> None:
    """Upstream runs the main loop whatever alpha is in this mode: NaN in A reaches D at alpha 0."""
    sol = _hand_made()["hss_idle"]
    built, emu = build(sol)
    mt0, mt1 = sol.macro_tile
    case = Case("alpha0", GemmProblem(mt0, mt1, 32, 1), 0.0, 0.0)
    t = launch.make_inputs(built.runtime, case, np.random.default_rng(3))
    a = t.a
    flat = a.flat.copy()
    flat[a.offsets.reshape(-1)[0]] = np.asarray(0x7E00, dtype=flat.dtype)  # an f16 NaN at A[0, 0]
    t = attrs.evolve(t, a=attrs.evolve(a, flat=flat))
    _, values, _ = read_back(t.d, _launch(built, emu, case, t).read("D"))
    assert np.isnan(values).any()


def test_thread_split() -> None:
    """(columns per pass, groups per column, passes)."""
    assert kernel_bias_grad.columns(16, 64) == (16, 4, 1)
    assert kernel_bias_grad.columns(48, 64) == (48, 1, 1)
    assert kernel_bias_grad.columns(128, 64) == (64, 1, 2)


def test_epilogue_wiring() -> None:
    """The verifier's epilogue gives a BGRADB type its bias output and D no bias term."""
    pt = problem_type("HSS", True, False, **BGRADB)
    ep = epilogue.make(pt, GemmProblem(8, 20, 16, 2), "edges", np.random.default_rng(0))
    assert ep is not None and ep.bias is None and ep.bias_out is DataType.H
    assert ep.buffers["bias"].shape == (20 + bias_grad.PAD,)
