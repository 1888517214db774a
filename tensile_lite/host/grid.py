"""How many workgroups the runtime launches for a GEMM (spec/kernel_anatomy.md §1.6): on gfx9/gfx11
the grid is flattened to one dimension, ceil(M / MT0) x ceil(N / MT1) x GSU x batch."""

from __future__ import annotations

import math

from tensile_lite.host.call import GemmProblem
from tensile_lite.host.header import runtime_gsu
from tensile_lite.model import Solution
from tensile_lite.targets import get_target


def tiles(sol: Solution, problem: GemmProblem, *, gsu: int | None = None) -> int:
    """Workgroups of one GEMM: its output tiles times the batch count times the call's GSU."""
    mt0, mt1 = sol.macro_tile
    batch = problem.batch if sol.problem_type.num_indices_c == 3 else 1
    return math.ceil(problem.m / mt0) * math.ceil(problem.n / mt1) * batch * runtime_gsu(sol, gsu)


def num_workgroups(sol: Solution, problem: GemmProblem, *, gsu: int | None = None) -> int:
    """The flattened 1-D grid of one call (the header's numWorkGroups)."""
    return tiles(sol, problem, gsu=gsu)


def launch_grid(sol: Solution, problem: GemmProblem, *, gsu: int | None = None,
                args_version: int = 2) -> tuple[int, int, int]:
    """The grid of an argType-0 call, in workgroups: flattened to (total, 1, 1), except on targets that
    take their workgroup ids from ttmp registers (gfx12) or for argument version 0, which keep
    (tiles along M, tiles along N x GSU, batch)."""
    total = num_workgroups(sol, problem, gsu=gsu)
    if args_version >= 1 and not get_target(sol.arch).workgroup_ids_in_ttmp:
        return (max(total, 1), 1, 1)
    nwg0 = math.ceil(problem.m / sol.macro_tile[0])
    batch = problem.batch if sol.problem_type.num_indices_c == 3 else 1
    return (max(nwg0, 1), max(total // max(nwg0 * batch, 1), 1), max(batch, 1))
