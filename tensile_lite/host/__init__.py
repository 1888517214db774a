"""The runtime's side of a kernel launch: what hipBLASLt's host code sends to a GEMM kernel and to the
split-K conversion kernels (argument bytes of argType 0, 1 and 2, header words, grids, workspaces,
conversion-kernel names).

Written from the runtime's contract (spec/kernel_anatomy.md §1.5-1.6, spec/epilogue_semantics.md §4-5),
never from the kernel writer's argument list: `tensile_lite.asm` is not imported here, so a layout bug
shared by both sides shows up as a disagreement (tests/host/test_independence.py).

    pack_kernel_args(solution, problem, buffers, alpha, beta, epilogue=EpilogueArgs(...), gsu=None)
    pack_grouped(solution, problems, buffers, alphas, betas, table_address=..., arg_type=1 | 2)
    num_workgroups(solution, problem, gsu=None), workspace_bytes(solution, problem, gsu=None)
    conversion.conversion_name(...), conversion.pack_call(...)
"""

from tensile_lite.host.args import gemm_fields, pack_gemm_args, pack_kernel_args
from tensile_lite.host.call import EpilogueArgs, GemmProblem
from tensile_lite.host.grid import launch_grid, num_workgroups, tiles
from tensile_lite.host.grouped import ARG_TYPE_TABLE, ARG_TYPE_USER, pack_grouped
from tensile_lite.host.header import ARG_TYPE_INLINE, internal_args, runtime_gsu
from tensile_lite.host.splitk import splits_for_conversion, splits_in_kernel, splits_k, workspace_bytes

__all__ = [
    "ARG_TYPE_INLINE",
    "ARG_TYPE_TABLE",
    "ARG_TYPE_USER",
    "EpilogueArgs",
    "GemmProblem",
    "gemm_fields",
    "internal_args",
    "launch_grid",
    "num_workgroups",
    "pack_gemm_args",
    "pack_grouped",
    "pack_kernel_args",
    "runtime_gsu",
    "splits_for_conversion",
    "splits_in_kernel",
    "splits_k",
    "tiles",
    "workspace_bytes",
]
