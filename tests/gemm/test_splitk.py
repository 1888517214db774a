"""Split-K in one kernel (GlobalSplitU with MultipleBufferSingleKernel) on the emulator: the same
problem with GSU 1, 2, 3 and 8 all match numpy, K not a multiple of DepthU x GSU, beta and the fused
epilogue applied once, both GSU workgroup mappings, workgroups run in reversed and shuffled order
(whoever arrives last reduces, with the same bits), grouped launches, the argument contract, and
real dev-set MBSK solutions built with the real assembler."""

from __future__ import annotations

import struct
from pathlib import Path

import attrs
import numpy as np
import pytest

from tensile_lite.asm.gemm import unsupported_reasons
from tensile_lite.asm.gemm.abi import argument_layout, solution_layout, splits_in_kernel
from tensile_lite.asm.gemm.support import runtime_overrides_read
from tensile_lite.emu import Emulator
from tensile_lite.host import (
    ARG_TYPE_TABLE,
    ARG_TYPE_USER,
    GemmProblem,
    internal_args,
    num_workgroups,
    pack_kernel_args,
    workspace_bytes,
)
from tensile_lite.model import DataType, Solution, kernel_key
from tensile_lite.verify import device
from tensile_lite.verify.splitk import POISON, SYNCHRONIZER, WORKSPACE
from tests.gemm import harness
from tests.gemm.devset import logic_files
from tests.gemm.epilogue_ref import Epilogue
from tests.gemm.solutions import problem_type, solution
from tests.gemm.test_abi import _upstream_kernel_of

MBSK = {"GlobalSplitUAlgorithm": "MultipleBufferSingleKernel"}


def _mbsk(pt, gsu: int = 2, **tuning) -> Solution:
    return solution(pt, GlobalSplitU=gsu, **MBSK, **tuning)



class Run:
    """One split-K launch through the harness (a poisoned workspace, a zeroed Synchronizer), its
    workgroups in the order asked for, some held back."""

    def __init__(self, built: harness.Built, emu: Emulator, problem: GemmProblem, *, gsu: int | None = None,
                 alpha: float = 1.0, beta: float = 0.0, epilogue: Epilogue | None = None, seed: int = 0,
                 order: str = "in order", held_back: frozenset[int] = frozenset()) -> None:
        made = harness.setup(built, problem, alpha=alpha, beta=beta, seed=seed, emulator=emu, epilogue=epilogue,
                             gsu=gsu)
        (self.gemm,) = made.launches
        ids = [(i, 0, 0) for i in range(num_workgroups(built.solution, problem, gsu=made.gsu))]
        if order == "reversed":
            ids.reverse()
        elif order == "shuffled":
            np.random.default_rng(seed + 1).shuffle(ids)
        self.call, self.sol = made.call, built.solution
        ran = device.run(self.gemm.only(i for i in ids if i[0] not in held_back))
        self.result = harness.result(self.sol, self.call, ran.instructions)
        self.counters = self.call.buffers.read(SYNCHRONIZER)
        self.partials = self.call.buffers.read(WORKSPACE) if WORKSPACE in self.call.buffers else None

    def finish(self, ids: list[int]) -> harness.Result:
        """Run the workgroups held back, on the same memory."""
        device.run(self.gemm.only((i, 0, 0) for i in ids))
        self.result = harness.result(self.sol, self.call, 0)
        self.counters = self.call.buffers.read(SYNCHRONIZER)
        return self.result


def _check(run: Run) -> harness.Result:
    # the result's check includes every arrival counter back at 0, ready for the next launch without a memset
    run.result.check()
    return run.result


def test_gsu_1_2_3_8_match_numpy(build) -> None:
    """The issue's statement: one problem (edge tiles in M and N, a K tail, two batches), GSU 1, 2, 3
    and 8 from the runtime header of one kernel, all matching numpy. With DepthU 32 and K 100, GSU 8
    leaves slices with no K at all."""
    pt = problem_type("HHS", False, True)
    built, emu = build(_mbsk(pt, gsu=2))
    problem = GemmProblem(40, 36, 100, 2)
    got = {}
    for gsu in (1, 2, 3, 8):
        run = Run(built, emu, problem, gsu=gsu, alpha=0.75, beta=0.5)
        got[gsu] = _check(run).got
        if gsu > 1:
            # the partial tiles really went through the workspace
            assert run.partials is not None and (run.partials != POISON).sum() == gsu * 40 * 36 * 2
    assert not np.array_equal(got[1], np.full_like(got[1], np.nan))


@pytest.mark.parametrize("types, trans", [("BBS", (True, False)), ("SS", (False, False)), ("HSS", (True, True))])
def test_k_not_a_multiple_of_depthu_times_gsu(build, types: str, trans: tuple[bool, bool]) -> None:
    pt = problem_type(types, *trans)
    mi = (16, 16, 4) if types == "SS" else (16, 16, 16)
    sol = _mbsk(pt, gsu=3, mi=mi, wave_tile=(2, 1), depth_u=16 if types == "SS" else 32)
    built, emu = build(sol)
    du = sol.depth_u
    for k in (3 * du * 2 + 5, du - 1, 7 * du):
        _check(Run(built, emu, GemmProblem(70, 20, k, 2), alpha=1.25, beta=-1.0 if k % 2 else 0.0))


def test_fused_epilogue_runs_once(build) -> None:
    """Bias, activation and scaleAlphaVec after the reduction: adding the bias per slice, or scaling
    per slice before C, would miss numpy by a bias or by a factor."""
    pt = problem_type("BBS", True, False, UseScaleAlphaVec=1, UseBias=1, BiasDataTypeList=[0, 7],
                      Activation=True, ActivationType="hipblaslt_all")
    built, emu = build(_mbsk(pt, gsu=4, ActivationFused=True))
    problem = GemmProblem(33, 40, 150, 2)
    for ep, beta in ((Epilogue(bias=DataType.S, activation="relu"), 1.5),
                     (Epilogue(bias=DataType.B, activation="gelu", stride_bias=33), 0.0)):
        _check(Run(built, emu, problem, alpha=0.5, beta=beta, epilogue=ep))


@pytest.mark.parametrize("round_robin", [False, True])
def test_any_order_gives_the_same_bits(build, round_robin: bool) -> None:
    """Workgroups reversed and shuffled: a different one arrives last and reduces each tile, always
    summing slices 0..GSU-1 in order, so D is bit for bit the in-order result. Both GSU mappings."""
    pt = problem_type("HSS", False, False)
    sol = _mbsk(pt, gsu=3, GlobalSplitUWorkGroupMappingRoundRobin=int(round_robin),
                GlobalSplitUCoalesced=1)
    built, emu = build(sol)
    assert internal_args(sol)[0] >> 14 & 1 == int(round_robin)
    problem = GemmProblem(50, 70, 200, 2)
    runs = [Run(built, emu, problem, alpha=1.0, beta=0.25, order=order, seed=3)
            for order in ("in order", "reversed", "shuffled")]
    first = _check(runs[0]).got
    for run in runs[1:]:
        assert np.array_equal(_check(run).got, first)


def test_only_the_last_arrival_writes_d(build) -> None:
    """Hold back the workgroups of one slice: no tile is complete, so D stays untouched and every
    counter waits at 1 (GSU - 1 arrivals); running them afterwards completes D and resets the
    counters. Slice g of workgroup id w (GSUWGMRR 0): (w % (tiles x GSU)) / nwg0 % GSU."""
    pt = problem_type("HHS", True, False)
    built, emu = build(_mbsk(pt, gsu=3))
    problem = GemmProblem(40, 36, 130, 2)
    mt0, mt1 = built.solution.macro_tile
    nwg0, nwg1 = -(-problem.m // mt0), -(-problem.n // mt1)
    grid = nwg0 * nwg1 * 3 * problem.batch
    for held in (0, 1, 2):
        ids = frozenset(w for w in range(grid) if (w % (nwg0 * nwg1 * 3)) // nwg0 % 3 == held)
        run = Run(built, emu, problem, alpha=1.0, beta=0.5, held_back=ids)
        assert run.result.untouched and np.isnan(run.result.got).all()
        assert list(run.counters[:nwg0 * nwg1 * problem.batch]) == [1] * (nwg0 * nwg1 * problem.batch)
        assert not run.counters[nwg0 * nwg1 * problem.batch:].any()
        run.finish(sorted(ids))
        _check(run)


@pytest.mark.parametrize("arch", ["gfx90a", "gfx950"])
def test_other_archs_and_no_batch(build, arch: str) -> None:
    """gfx90a (agent-scope release is a wait, acquire invalidates L1) and gfx950 (write back L2,
    invalidate after), on a problem type without a batch index."""
    pt = problem_type("BSS", False, True, batched=False)
    built, emu = build(_mbsk(pt, gsu=3, arch=arch, wave_tile=(1, 2)))
    for gsu in (None, 1, 5):
        _check(Run(built, emu, GemmProblem(45, 70, 190, 1), gsu=gsu, alpha=1.0, beta=-0.5))


def test_alpha_zero_and_empty_k(build) -> None:
    pt = problem_type("HHS", False, False)
    built, emu = build(_mbsk(pt, gsu=2))
    _check(Run(built, emu, GemmProblem(20, 40, 64, 1), alpha=0.0, beta=2.0))
    _check(Run(built, emu, GemmProblem(20, 40, 0, 2), alpha=1.0, beta=0.5))


def _grouped(built: harness.Built, emu: Emulator, problems: list[GemmProblem], arg_type: int) -> None:
    # each GEMM of the table has its own workspace and counters; the workgroups run in reverse
    n = len(problems)
    for result in harness.run_grouped(built, problems, arg_type=arg_type, alphas=[1.0] * n, betas=[0.5] * n,
                                      emulator=emu, seed=5, reverse=True):
        result.check()


@pytest.mark.parametrize("arg_type", [ARG_TYPE_TABLE, ARG_TYPE_USER])
def test_grouped_launches(build, arg_type: int) -> None:
    """argType 1 records carry the split-K arguments; argType 2 (hipBLASLt's struct has none) runs
    unsplit: slice 0 of each tile sums all of K and the other slices' workgroups end."""
    pt = problem_type("HHS", False, True)
    built, emu = build(_mbsk(pt, gsu=3))
    problems = [GemmProblem(40, 20, 90, 2), GemmProblem(16, 50, 33, 1)]
    _grouped(built, emu, problems, arg_type)


@pytest.mark.parametrize("gsu", [2, 5])
def test_7x_passes_d_and_c_strides_of_their_own(build, gsu: int) -> None:
    """ROCm 7.x sends a single-kernel split-K call D's and C's own strides (the 2024 runtime the
    workspace's packed ones): the kernel places its tiles in the packed workspace from the sizes, so the
    same kernel matches numpy on padded C and D, batched, with edge tiles, under 7.x's packing."""
    pt = problem_type("HHS", False, True)
    built, emu = build(_mbsk(pt, gsu=3))
    built7 = attrs.evolve(built, runtime=attrs.evolve(built.runtime, own_split_strides=True))
    problem = GemmProblem(40, 36, 100, 2, strides_c=(43, 1700), strides_d=(41, 1600))
    run = Run(built7, emu, problem, gsu=gsu, alpha=0.75, beta=0.5)
    _check(run)
    # every partial went to the packed slices, none past them (the workspace is sized packed)
    assert run.partials is not None and (run.partials != POISON).sum() == gsu * 40 * 36 * 2


def test_split_k_arguments_decode_at_their_offsets() -> None:
    """Runtime packing vs the kernel's metadata: the workspace in D's place with packed D/C strides,
    dstD / Synchronizer / GSUSync last; with GSU 1 the ordinary D and strides."""
    pt = problem_type("HHS", False, False, UseBias=1, BiasDataTypeList=[0])
    sol = _mbsk(pt, gsu=4)
    layout = solution_layout(sol)
    names = [p.argument.name for p in layout.arguments]
    assert names[-3:] == ["dstD", "Synchronizer", "GSUSync"]
    assert layout.size == argument_layout(pt).size + 20
    at = {p.argument.name: p.offset for p in layout.arguments}
    buffers = {"A": 0xA000, "B": 0xB000, "C": 0xC000, "D": 0xD000, "workspace": 0x5000, "synchronizer": 0x7000}
    problem = GemmProblem(30, 20, 64, 3, strides_c=(31, 700), strides_d=(32, 800))
    for gsu, d, strides in ((None, 0x5000, (30, 600)), (1, 0xD000, (32, 800)), (5, 0x5000, (30, 600))):
        blob = pack_kernel_args(sol, problem, buffers, 1.0, 0.0, gsu=gsu)
        assert len(blob) == layout.size

        def u32(name: str, blob: bytes = blob) -> int:
            return struct.unpack_from("<I", blob, at[name])[0]

        def ptr(name: str, blob: bytes = blob) -> int:
            return struct.unpack_from("<Q", blob, at[name])[0]

        assert u32("kernel info0") & 0x3FFF == (gsu or 4)
        assert u32("numWG") == 1 * 1 * 3 * (gsu or 4)
        assert (ptr("D"), ptr("C"), ptr("dstD"), ptr("Synchronizer"), u32("GSUSync")) == (d, 0xC000, 0xD000,
                                                                                           0x7000, 0)
        assert (u32("strideD0"), u32("strideD1")) == strides
        assert (u32("strideC0"), u32("strideC1")) == (strides if gsu != 1 else (31, 700))
        # 7.x: D's and C's own strides with the workspace in D's place
        blob7 = pack_kernel_args(sol, problem, buffers, 1.0, 0.0, gsu=gsu, own_split_strides=True)
        assert (u32("strideD0", blob7), u32("strideD1", blob7), u32("strideC0", blob7)) == (32, 800, 31)
        assert (ptr("D", blob7), ptr("dstD", blob7)) == (d, 0xD000)
    # the workspace the host sizes: GSU slices of M x N x batch f32, and a counter per tile and wave
    assert workspace_bytes(sol, problem) == 30 * 20 * 3 * 4 * 4 + 1 * 1 * 4 * 4
    assert workspace_bytes(sol, problem, gsu=1) == 0


def test_devset_mbsk_solutions_are_built_and_declared() -> None:
    """Every non-custom dev-set MBSK solution is accepted, honours the runtime GSU, and its argument
    layout is upstream's kernel's, offsets, sizes and types (the three split-K arguments included)."""
    checked = 0
    for lf in logic_files():
        upstream = _upstream_kernel_of(lf.arch)
        name = Path(lf.path).name
        for index, sol in enumerate(lf.solutions):
            if not splits_in_kernel(sol) or sol.is_custom:
                continue
            assert unsupported_reasons(sol) == (), (sol.name, unsupported_reasons(sol))
            assert runtime_overrides_read(sol)["gsu"]
            kernel = upstream.get((name, index))
            if kernel is None:
                continue
            ours = [(p.offset, p.argument.size, p.argument.value_kind, p.argument.value_type, p.argument.name)
                    for p in solution_layout(sol).arguments]
            theirs = [(a["offset"], a["size"], a["value_kind"], a.get("value_type"), a["name"]) for a in kernel["args"]]
            assert ours == theirs, kernel["name"]
            assert kernel["kernarg_segment_size"] == solution_layout(sol).segment_size
            checked += 1
    assert checked >= 10


def _devset_cases(sol: Solution) -> list[tuple[GemmProblem, int | None, float, str]]:
    """An edge problem with a K tail at the solution's GSU; full tiles at a runtime GSU of 3, reversed."""
    mt0, mt1 = sol.macro_tile
    du = sol.depth_u
    g = sol.runtime.global_split_u
    return [(GemmProblem(mt0 + 3, mt1 - 1 if mt1 > 16 else mt1 + 5, du * (g + 1) + 9, 2), None, 0.5, "in order"),
            (GemmProblem(mt0, 2 * mt1, 2 * du, 1), 3, 0.0, "reversed")]


def _devset_kernels() -> list[Solution]:
    """The dev set's distinct MBSK kernels our writer builds (custom kernels are hipBLASLt's own text,
    verified in tests/custom)."""
    seen, out = set(), []
    for lf in logic_files():
        for sol in lf.solutions:
            if splits_in_kernel(sol) and not sol.is_custom and not unsupported_reasons(sol) \
                    and kernel_key(sol) not in seen:
                seen.add(kernel_key(sol))
                out.append(sol)
    return out


def _verify_devset(build, sol: Solution) -> None:
    built, emu = build(sol)
    for problem, gsu, beta, order in _devset_cases(sol):
        _check(Run(built, emu, problem, gsu=gsu, alpha=1.0, beta=beta, order=order))


def test_devset_mbsk_kernels_small(build) -> None:
    """Two real dev-set MBSK kernels (the smallest macro tiles, one with GSU > 1), real assembler."""
    kernels = sorted(_devset_kernels(), key=lambda s: (s.macro_tile[0] * s.macro_tile[1], s.runtime.global_split_u))
    picked = [kernels[0], next(s for s in kernels if s.runtime.global_split_u > 1)]
    for sol in picked:
        _verify_devset(build, sol)


@pytest.mark.slow
def test_devset_mbsk_kernels_all(build) -> None:
    for sol in _devset_kernels():
        _verify_devset(build, sol)
