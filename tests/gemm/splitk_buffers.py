"""The extra device buffers of a split-K (MultipleBufferSingleKernel) launch, for the emulator
harness: a workspace as the host sizes it (poisoned with 1e30, so a reduction reading a slice nobody
wrote fails the comparison) and a zeroed Synchronizer."""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import numpy as np

from tensile_lite.emu import DeviceMemory
from tensile_lite.host import GemmProblem, workspace_bytes
from tensile_lite.host.splitk import splits_in_kernel, splits_k
from tensile_lite.model import Solution

POISON = 0x7149F2CA  # 1e30 as f32
SYNC_DWORDS = 1024   # counters: one per tile and batch (the runtime's buffer holds 16 x 40960)


def packed_cd(sol: Solution, problem: GemmProblem) -> bool:
    """C and D are packed: the only layout a split-K call can address (the host sends packed strides)."""
    pt = sol.problem_type
    dense = attrs.evolve(problem, strides_c=None, strides_d=None)
    return all(problem.tensor_strides(pt, t) == dense.tensor_strides(pt, t) for t in "CD")


def launch_gsu(sol: Solution, problem: GemmProblem) -> int | None:
    """The GSU to launch `sol` with: the solution's (None), or 1 for a split-K kernel whose C or D is
    padded (upstream's host would address them packed: spec epilogue_semantics.md §7 #8)."""
    return 1 if splits_in_kernel(sol) and not packed_cd(sol, problem) else None


def with_split_k_buffers(sol: Solution, problem: GemmProblem, mem: DeviceMemory, buffers: Mapping[str, int],
                         gsu: int | None = None) -> dict[str, int]:
    out = dict(buffers)
    if splits_k(sol):
        words = max(workspace_bytes(sol, problem, gsu=gsu) // 4, 1)
        out["workspace"] = mem.alloc(np.full(words, POISON, np.uint32))
        out["synchronizer"] = mem.alloc(np.zeros(SYNC_DWORDS, np.uint32))
    return out
