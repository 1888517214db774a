"""The MFMA GEMM kernel writer (family v1) and the runtime's argument contract.

    unsupported_reasons(solution) -> tuple[str, ...]   # empty: the writer builds it
    generate(solution, name=None) -> str               # comment-free assembly text
    GemmKernel.of(solution, name)                      # a KernelSource for the pipeline
    kernel_arguments(problem_type), pack_kernel_args(solution, problem, buffers, alpha, beta)
"""

from tensile_lite.asm.gemm.abi import (
    GemmProblem,
    argument_layout,
    internal_args,
    kernel_arguments,
    num_workgroups,
    pack_kernel_args,
)
from tensile_lite.asm.gemm.plan import GemmPlan, Unsupported, build_plan
from tensile_lite.asm.gemm.support import runtime_overrides_read, unsupported_details, unsupported_reasons
from tensile_lite.asm.gemm.writer import GemmKernel, generate, kernel_name

__all__ = [
    "GemmKernel", "GemmPlan", "GemmProblem", "Unsupported", "argument_layout", "build_plan", "generate",
    "internal_args", "kernel_arguments", "kernel_name", "num_workgroups", "pack_kernel_args",
    "runtime_overrides_read", "unsupported_details", "unsupported_reasons",
]
