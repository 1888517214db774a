"""Split-K from the runtime's side (spec/epilogue_semantics.md §5): which global-accumulation path a
solution takes, and the workspace a call needs."""

from __future__ import annotations

import math

from tensile_lite.host.call import GemmProblem
from tensile_lite.host.header import runtime_gsu
from tensile_lite.model import Solution
from tensile_lite.model.kernel_key import splits_into_workspace


def _stream_k(sol: Solution) -> bool:
    return bool(sol.tuning("StreamK"))


def is_single_kernel(sol: Solution) -> bool:
    """MultipleBufferSingleKernel (GA 3): the runtime appends dstD, Synchronizer and GSUSync to every
    call, whatever its GSU, and with GSU > 1 sends the workspace in D's place."""
    return sol.global_split_u_algorithm == "MultipleBufferSingleKernel" and not _stream_k(sol)


def is_multiple_buffer(sol: Solution) -> bool:
    """MultipleBuffer (GA 2) with GSU > 1 in the library: the kernel leaves GSU slices in the workspace
    and the runtime launches a conversion kernel (conversion.py). The library lets the runtime change
    the GSU of these solutions only."""
    return splits_into_workspace(sol) and not _stream_k(sol)


def splits_k(sol: Solution) -> bool:
    """The runtime may send a GSU above 1 to this solution's kernel (either algorithm)."""
    return is_single_kernel(sol) or is_multiple_buffer(sol)


def uses_workspace(sol: Solution, gsu: int | None = None) -> bool:
    """This call sends the workspace in D's place (and packed D/C strides)."""
    return splits_k(sol) and runtime_gsu(sol, gsu) > 1


def workspace_bytes(sol: Solution, problem: GemmProblem, *, gsu: int | None = None) -> int:
    """`requiredWorkspaceSize` of one call: GSU partial slices of M x N x batch compute-type elements,
    plus one u32 per tile and wave for GA 3; 0 when the call does not split K."""
    g = runtime_gsu(sol, gsu)
    if g <= 1:
        return 0
    pt = sol.problem_type
    batch = problem.batch if pt.num_indices_c == 3 else 1
    size = problem.m * problem.n * batch * pt.compute_type.num_bytes * g
    if is_single_kernel(sol):
        mt0, mt1 = sol.macro_tile
        size += math.ceil(problem.m / mt0) * math.ceil(problem.n / mt1) * sol.num_waves * 4
    return size
