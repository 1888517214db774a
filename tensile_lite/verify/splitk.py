"""In-kernel split-K (GlobalSplitUAlgorithm MultipleBufferSingleKernel, globalAccumulation 3) as the
runtime launches it (spec/epilogue_semantics.md §5.4, asm/gemm/splitk.py).

The call's GSU workgroups per tile each sum one slice of K into a workspace slice; the last to arrive
on the tile's Synchronizer counter adds the slices and runs the epilogue into the real D. For such a
call the runtime sends the workspace in D's place with packed D and C strides (ld = M, batch stride
M x N), then dstD, the Synchronizer and GSUSync. The verifier:

- launches with the solution's GSU, except where upstream's runtime could not: a problem whose C or D
  is padded runs with GSU 1 (with GSU > 1 upstream addresses C and D with the packed strides, §5.4 and
  §7 #8, so only a GSU-1 override computes it right), and so does one whose K is below the solution's
  GlobalSplitUCheckMinK at its GSU (the runtime would not send it with that GSU). Both need the library
  to let the runtime override GSU (`internalArgsSupport.gsu`); without it they keep the solution's GSU
  and the predicates decide;
- allocates the workspace as the runtime sizes it (`requiredWorkspaceSize`), filled with 1e30 so a
  reduction that reads a slice nobody wrote is far off (also for MultipleBuffer calls, conversion.py),
  and a zeroed Synchronizer;
- requires every Synchronizer counter back at 0 after the launch: the runtime zeroes that buffer once
  per handle and never again, so a counter left behind breaks the next call.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import numpy as np

from tensile_lite.host import GemmProblem, workspace_bytes
from tensile_lite.host.splitk import uses_workspace
from tensile_lite.model import ProblemType
from tensile_lite.verify import runtime_args
from tensile_lite.verify.runtime_view import RuntimeSolution

WORKSPACE = "workspace"
SYNCHRONIZER = "synchronizer"
POISON = 0x7149F2CA  # 1e30 as f32
GSU_ROUND_ROBIN_BIT = 14  # of internalArgs: the slice is wg1 / nwg1 (GSUWGMRR)
# Counters past the ones a launch may use: a kernel indexing beyond its tiles shows up as a non-zero one.
_SPARE_COUNTERS = 64
_SHOWN = 4


def packed_cd(pt: ProblemType, problem: GemmProblem) -> bool:
    """C and D have the packed strides a split-K call addresses them with."""
    dense = attrs.evolve(problem, strides_c=None, strides_d=None)
    return all(problem.tensor_strides(pt, t) == dense.tensor_strides(pt, t) for t in "CD")


def overridable(rs: RuntimeSolution) -> bool:
    """Whether the runtime may launch the kernel with a GSU other than the solution's."""
    return bool(rs.internal_support.get("gsu", True))


def launch_gsu(rs: RuntimeSolution, problem: GemmProblem, gsu: int | None = None) -> int:
    """The GSU a call of `problem` runs with: the one asked for (None: the solution's) as the runtime
    takes it, except 1 for an in-kernel split-K kernel whose C or D is padded, when the library lets the
    runtime override GSU and the runtime is the 2024 one (with GSU > 1 it addresses C and D packed: spec
    §7 #8; 7.x passes their own strides)."""
    if gsu is None and rs.split_k and overridable(rs) and not rs.own_split_strides \
            and not packed_cd(rs.problem_type, problem):
        return 1
    return runtime_args.launch_gsu(rs, gsu)


def workspace(rs: RuntimeSolution, problem: GemmProblem, gsu: int) -> dict[str, np.ndarray]:
    """The workspace of one call, by its buffer name, poisoned: sized as the runtime sizes it
    (`host.workspace_bytes`), and present whenever the call sends it in D's place, even for an empty
    problem (one dword then: the pointer is packed whatever the size)."""
    if not uses_workspace(rs.solution, gsu):
        return {}
    size = workspace_bytes(rs.solution, problem, gsu=gsu)
    return {WORKSPACE: np.full(max(-(-size // 4), 1), POISON, dtype=np.uint32)}


def synchronizer(rs: RuntimeSolution, problem: GemmProblem) -> dict[str, np.ndarray]:
    """The zeroed Synchronizer of an in-kernel split-K call (one counter per tile and wave, and spares),
    by its buffer name; none for other kernels."""
    if not rs.split_k:
        return {}
    mt0, mt1 = rs.solution.macro_tile
    batch = problem.batch if rs.problem_type.num_indices_c == 3 else 1
    counters = -(-problem.m // mt0) * -(-problem.n // mt1) * batch * rs.solution.num_waves
    return {SYNCHRONIZER: np.zeros(counters + _SPARE_COUNTERS, dtype=np.uint32)}


def buffers(rs: RuntimeSolution, problem: GemmProblem, gsu: int) -> dict[str, np.ndarray]:
    """Contents of the split-K buffers of one call with GSU `gsu` (none for other kernels): the
    workspace of either algorithm and the Synchronizer of the in-kernel one."""
    return {**workspace(rs, problem, gsu), **synchronizer(rs, problem)}


def counters_left(name: str, counters: np.ndarray, checked: np.ndarray | None = None) -> str | None:
    """None when every counter of a synchronisation buffer (those where `checked` is true, when given)
    is 0; else which are not."""
    left = np.flatnonzero(counters if checked is None else np.where(checked, counters, 0))
    if not left.size:
        return None
    shown = ", ".join(f"[{int(i)}] = {int(counters[i])}" for i in left[:_SHOWN])
    return (f"{left.size} {name} counters are not back to 0 after the launch ({shown}): the runtime never "
            "re-zeroes them, so the next call would start from these")


def check(after: Mapping[str, np.ndarray]) -> str | None:
    """The Synchronizer of a launch's buffers (`after`, by name) left at 0."""
    sync = after.get(SYNCHRONIZER)
    return None if sync is None else counters_left("Synchronizer", sync)
