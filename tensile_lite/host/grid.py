"""How many workgroups the runtime launches for a GEMM (spec/kernel_anatomy.md §1.6): on gfx9/gfx11
the grid is flattened to one dimension, ceil(M / MT0) x ceil(N / MT1) x GSU x batch."""

from __future__ import annotations

import math

from tensile_lite.host.call import GemmProblem
from tensile_lite.host.header import runtime_gsu
from tensile_lite.model import Solution


def tiles(sol: Solution, problem: GemmProblem, *, gsu: int | None = None) -> int:
    """Workgroups of one GEMM: its output tiles times the batch count times the call's GSU."""
    mt0, mt1 = sol.macro_tile
    batch = problem.batch if sol.problem_type.num_indices_c == 3 else 1
    return math.ceil(problem.m / mt0) * math.ceil(problem.n / mt1) * batch * runtime_gsu(sol, gsu)


def num_workgroups(sol: Solution, problem: GemmProblem, *, gsu: int | None = None) -> int:
    """The flattened 1-D grid of one call (the header's numWorkGroups)."""
    return tiles(sol, problem, gsu=gsu)
