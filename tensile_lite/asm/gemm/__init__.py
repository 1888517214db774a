"""The MFMA GEMM kernel writer and the runtime's argument contract.

    decide(solution) -> Buildable | Rejected           # the support gate: the plan, or the reasons
    unsupported_reasons(solution) -> tuple[str, ...]   # decide(solution).reasons: empty when buildable
    generate(solution, name=None, decision=None) -> str   # comment-free assembly text
    GemmKernel.of(solution, name)                      # a KernelSource for the pipeline
    kernel_arguments(problem_type), pack_kernel_args(solution, problem, buffers, alpha, beta,
                                                     epilogue=EpilogueArgs(...))
    pack_grouped(solution, problems, buffers, alphas, betas, table_address=..., arg_type=1 | 2)
"""

from tensile_lite.asm.gemm.abi import (
    EpilogueArgs,
    GemmProblem,
    argument_layout,
    internal_args,
    kernel_arguments,
    num_workgroups,
    pack_gemm_args,
    pack_kernel_args,
    solution_layout,
)
from tensile_lite.asm.gemm.grouped import ARG_TYPE_TABLE, ARG_TYPE_USER, pack_grouped, user_argument_offsets
from tensile_lite.asm.gemm.plan import GemmPlan, Unsupported, build_plan
from tensile_lite.asm.gemm.support import (
    Buildable,
    Decision,
    Rejected,
    decide,
    runtime_overrides_read,
    unsupported_details,
    unsupported_reasons,
)
from tensile_lite.asm.gemm.writer import GemmKernel, generate, kernel_name

__all__ = [
    "ARG_TYPE_TABLE", "ARG_TYPE_USER", "Buildable", "Decision", "EpilogueArgs", "GemmKernel", "GemmPlan",
    "GemmProblem", "Rejected", "Unsupported", "argument_layout", "build_plan", "decide", "generate",
    "internal_args", "kernel_arguments", "kernel_name", "num_workgroups", "pack_gemm_args", "pack_grouped",
    "pack_kernel_args", "runtime_overrides_read", "solution_layout", "unsupported_details", "unsupported_reasons",
    "user_argument_offsets",
]
