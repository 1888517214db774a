"""Split-K from the runtime's side (spec/epilogue_semantics.md §5): which global-accumulation path a
solution takes, and the workspace a call needs."""

from __future__ import annotations

import math

from tensile_lite.host.call import GemmProblem
from tensile_lite.host.header import runtime_gsu
from tensile_lite.model import Solution

# re-exported: which split-K path a solution takes is the model's fact, read by both sides
from tensile_lite.model.kernel_key import splits_for_conversion as splits_for_conversion
from tensile_lite.model.kernel_key import splits_in_kernel as splits_in_kernel
from tensile_lite.model.kernel_key import splits_k as splits_k


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
    if splits_in_kernel(sol):
        mt0, mt1 = sol.macro_tile
        size += math.ceil(problem.m / mt0) * math.ceil(problem.n / mt1) * sol.num_waves * 4
    return size
