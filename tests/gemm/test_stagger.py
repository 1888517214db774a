"""StaggerU in the kernel (asm/gemm/stagger.py): each workgroup sums its DepthU tiles from the start the
header's StaggerU fields give (spec/epilogue_semantics.md §6.2), wraps to tile 0 and ends with the K
remainder.

The order is made visible in the result: tile 0 of K adds 2^25, the remainder subtracts it again, and each
other tile adds 1. A 1 added while the sum holds 2^25 is lost (f32 spacing 4 there), so a tile of D holds
the number of tiles summed before tile 0, which is L - s for a start s > 0 and 0 for s = 0. With a stride
shift of 2 and L = 16, every start is a multiple of 4 and every count exact. The expected start of each
tile of D comes from an independent model of the runtime's fields."""

from __future__ import annotations

import numpy as np
import pytest

from tensile_lite.asm.gemm import runtime_overrides_read
from tensile_lite.host import GemmProblem
from tensile_lite.library import derived
from tensile_lite.model import Solution
from tensile_lite.verify import device
from tensile_lite.verify.tensors import assignments, place
from tests.gemm import harness
from tests.gemm.solutions import problem_type, solution

DU = 16
FULL = 16  # full DepthU tiles of K
BIG = 2.0**25


def _sol(trans_a: bool, **tuning: object) -> Solution:
    pt = problem_type("HHS", trans_a, False)
    return solution(pt, wave_group=(1, 1), depth_u=DU, WorkGroup=[16, 4, 1], WorkGroupMapping=2,
                    StaggerUStride=DU * 2 * 4, **tuning)


def _start(su: int, shift: int, mapping: int, full: int, tile: tuple[int, int]) -> int:
    """The first DepthU tile a workgroup on `tile` (wg0, wg1) sums, per §6.2."""
    cur = su
    while full < (cur << shift):
        cur >>= 1
    mask = cur - 1 if cur >= 1 else 0
    index = tile[1] if mapping == 0 else tile[0]
    return (mask & index) << shift


def _marked(sol: Solution, problem: GemmProblem, tensor: str, by_k: dict[int, float]) -> np.ndarray:
    """Values of A or B (memory order): `by_k[k]` at every element of summation index k, 0 elsewhere."""
    pt = sol.problem_type
    ids = assignments(pt, tensor)
    sizes = [problem.index_size(pt, i) for i in ids]
    k_axis = ids.index(pt.indices_summation[0])
    ks = np.zeros(sizes[k_axis])
    for k, v in by_k.items():
        ks[k] = v
    shape = [1] * len(sizes)
    shape[k_axis] = sizes[k_axis]
    return np.broadcast_to(ks.reshape(shape), sizes).copy()


CASES = {
    "tn-su4": (True, {"StaggerU": 4, "StaggerUMapping": 0}),
    # StaggerU 8 << 2 spans 32 tiles, more than 16: halved to 4 (mask 3), else starts past the end
    "nn-su8-halved": (False, {"StaggerU": 8, "StaggerUMapping": 0}),
    # any non-zero mapping follows wg0
    "tn-su4-wg0": (True, {"StaggerU": 4, "StaggerUMapping": 1}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_summation_starts_where_the_header_says(case: str, build) -> None:
    trans_a, tuning = CASES[case]
    sol = _sol(trans_a, **tuning)
    built, emu = build(sol)
    mt0, mt1 = sol.macro_tile
    # 5 x 5 tiles (the last row and column partial), K with a remainder of 5
    problem = GemmProblem(5 * mt0 - 3, 5 * mt1 - 1, FULL * DU + 5, 1)
    s = harness.setup(built, problem, emulator=emu)
    pt, mem = sol.problem_type, s.call.buffers.memory
    tail = FULL * DU
    a = {0: 2.0**12, tail: -(2.0**12), **{j * DU: 1.0 for j in range(1, FULL)}}
    b = {0: 2.0**13, tail: 2.0**13, **{j * DU: 1.0 for j in range(1, FULL)}}
    for name, by_k in (("A", a), ("B", b)):
        t = s.call.tensors[name]
        mem.write(s.call.buffers.addresses[name], place(pt, problem, name, t.element,
                                                        t.element.round(_marked(sol, problem, name, by_k))).flat)
    device.run_all(s.launches)
    got = harness.result(sol, s.call, 0).got[:, :, 0]
    su, mapping = int(tuning["StaggerU"]), int(tuning["StaggerUMapping"])
    shift = derived.stagger_stride_shift(sol)
    assert shift == 2
    starts = set()
    for i0 in range(5):
        for i1 in range(5):
            start = _start(su, shift, mapping, FULL, (i0, i1))
            starts.add(start)
            want = FULL - start if start else 0
            block = got[i0 * mt0:(i0 + 1) * mt0, i1 * mt1:(i1 + 1) * mt1]
            assert np.all(block == want), (i0, i1, start, np.unique(block))
    assert len(starts) == 4, starts  # every start 0, 4, 8, 12 occurs


@pytest.mark.parametrize("tuning", [
    {"StaggerU": 32, "StaggerUStride": 256},
    {"StaggerU": 4, "StaggerUStride": 64, "GlobalSplitU": 3, "GlobalSplitUAlgorithm": "MultipleBufferSingleKernel"},
], ids=["su32", "su4-splitk"])
def test_staggered_results_match_numpy(tuning: dict[str, object], build) -> None:
    """Random data, K with and without a remainder and shorter than the stagger's span."""
    sol = solution(problem_type("HHS", False, True), wave_group=(1, 1), depth_u=DU, WorkGroup=[16, 4, 1],
                   **tuning)
    built, emu = build(sol)
    mt0, mt1 = sol.macro_tile
    cases = [(GemmProblem(3 * mt0 - 1, 4 * mt1, k, 2), 1.0, 0.5) for k in (DU * 9, DU * 23 + 7, DU * 2 + 3, 5)]
    harness.check_cases(built, emu, cases)


def test_library_declares_stagger_u() -> None:
    assert runtime_overrides_read(_sol(True, StaggerU=4))["staggerU"] is True
