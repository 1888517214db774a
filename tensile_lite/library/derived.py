"""Solution values the library needs that upstream re-derives instead of trusting the logic file.

Upstream rebuilds every solution's derived parameters before writing the library, so a logic file written
by an older Tensile (e.g. `WorkspaceCheck: [0, 0]`) still gets today's values. These functions apply the
same rules to the few values the `.dat` carries; everything else is read from the file as written.
"""

from __future__ import annotations

import math
from typing import Any

from tensile_lite.errors import LogicError, Where
from tensile_lite.library.problem_view import ProblemView, problem_view
from tensile_lite.model.solution import Solution

# Kernel-argument support a solution has unless its file says otherwise (upstream's defaults).
INTERNAL_SUPPORT_DEFAULTS: dict[str, Any] = {
    "KernArgsVersion": 2, "SupportUserGSU": True, "SupportCustomWGM": True, "SupportCustomStaggerU": True,
    "UseUniversalArgs": True,
}

# The GSU post-reduction kernel's fixed split, a constant of the runtime's ABI.
GLOBAL_SPLIT_U_PGR = 16
# Smallest K for which a split-K (GSU) kernel is selected.
MIN_K_FOR_GSU = 32

_ACCUMULATION_CODES = {None: 0, "SingleBuffer": 1, "MultipleBuffer": 2, "MultipleBufferSingleKernel": 3,
                       "PartialsBuffer": 4}


def view(sol: Solution) -> ProblemView:
    return problem_view(sol.problem_type)


def stream_k(sol: Solution) -> int:
    return int(sol.tuning("StreamK") or 0)


def stream_k_atomic(sol: Solution) -> int:
    # Without Stream-K the atomic flag is cleared so it cannot tell kernels apart.
    return int(sol.tuning("StreamKAtomic") or 0) if stream_k(sol) else 0


def global_split_u(sol: Solution) -> int:
    # Stream-K and GSU exclude each other; Stream-K kernels carry GSU 0.
    return 0 if stream_k(sol) else sol.runtime.global_split_u


def global_split_u_algorithm(sol: Solution) -> str:
    return "MultipleBuffer" if stream_k(sol) else sol.global_split_u_algorithm


def global_accumulation(sol: Solution) -> str | None:
    """Where partial sums of a split-K kernel go (None: straight into D)."""
    if stream_k(sol) and not stream_k_atomic(sol):
        return "PartialsBuffer"
    algorithm = global_split_u_algorithm(sol)
    if algorithm == "SingleBuffer":
        v = view(sol)
        return "SingleBuffer" if v.compute_type is not v.c_type else None
    if algorithm in ("MultipleBuffer", "MultipleBufferSingleKernel"):
        return algorithm
    return None


def global_accumulation_code(sol: Solution) -> int:
    return _ACCUMULATION_CODES[global_accumulation(sol)]


def workspace_bytes_per_element(sol: Solution) -> tuple[int, int]:
    """(bytes per C element, bytes per bias element) of the split-K workspace."""
    v = view(sol)
    per_c = v.compute_type.num_bytes
    per_bias = per_c if v.use_bias and v.gradient else 0
    return per_c, per_bias


def workspace_check(sol: Solution) -> tuple[int, int, int]:
    per_c, per_bias = workspace_bytes_per_element(sol)
    multiple = global_split_u_algorithm(sol) == "MultipleBuffer" \
        or global_accumulation(sol) == "MultipleBufferSingleKernel"
    return per_c, per_bias, global_split_u(sol) if multiple else 1


def stagger_u(sol: Solution) -> int:
    # Stagger is not implemented for more than one summation index.
    return 0 if len(sol.problem_type.indices_summation) > 1 else sol.runtime.stagger_u


def stagger_u_mapping(sol: Solution) -> int:
    return sol.runtime.stagger_u_mapping if sol.runtime.stagger_u else 0


def stagger_stride_shift(sol: Solution) -> int:
    """log2 of loop iterations per stagger step, from StaggerUStride (bytes) over one unroll's bytes."""
    if not sol.runtime.stagger_u:
        return 0
    bytes_per_iter = sol.depth_u * sol.problem_type.data_type.num_bytes
    stride = sol.runtime.stagger_u_stride
    if stride == -1:
        stride = bytes_per_iter
    if stride <= 0:
        return 0
    shift = math.ceil(math.log2(stride / bytes_per_iter))
    if shift < 0:
        raise LogicError(f"StaggerUStride {stride} is smaller than DepthU x element size ({bytes_per_iter})",
                         _where(sol, "StaggerUStride"))
    return shift


def internal_support(sol: Solution) -> dict[str, Any]:
    given = sol.params.get("InternalSupportParams") or {}
    merged = {k: given.get(k, default) for k, default in INTERNAL_SUPPORT_DEFAULTS.items()}
    return {
        "version": int(merged["KernArgsVersion"]), "gsu": bool(merged["SupportUserGSU"]),
        "wgm": bool(merged["SupportCustomWGM"]), "staggerU": bool(merged["SupportCustomStaggerU"]),
        "useUniversalArgs": bool(merged["UseUniversalArgs"]),
    }


def synchronizer_size_check(sol: Solution) -> bool:
    # Single-kernel split-K needs its synchronizer buffer checked; the file may also ask for it.
    return global_accumulation(sol) == "MultipleBufferSingleKernel" or "SynchronizerSizeCheck" in sol.params


def required(sol: Solution, key: str) -> Any:
    """A parameter the library needs and upstream never defaults; a clear error when a file lacks it."""
    if key not in sol.params:
        raise LogicError("missing (the library metadata needs it)", _where(sol, key))
    return sol.params[key]


def _where(sol: Solution, parameter: str) -> Where:
    return Where(solution_index=sol.index, solution_name=sol.name or None, parameter=parameter)
