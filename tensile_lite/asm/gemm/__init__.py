"""The MFMA GEMM kernel writer and the kernel's side of the argument contract (the host's side, the
packing, is `tensile_lite.host`).

    decide(solution) -> Buildable | Rejected           # the support gate: the plan, or the reasons
    unsupported_reasons(solution) -> tuple[str, ...]   # decide(solution).reasons: empty when buildable
    generate(solution, name=None, decision=None) -> str   # comment-free assembly text
    GemmKernel.of(solution, name)                      # a KernelSource for the pipeline
    kernel_arguments(problem_type), solution_layout(solution), user_argument_offsets(solution)
"""

from tensile_lite.asm.gemm.abi import argument_layout, kernel_arguments, solution_layout
from tensile_lite.asm.gemm.grouped import user_argument_offsets
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
    "Buildable", "Decision", "GemmKernel", "GemmPlan", "Rejected", "Unsupported", "argument_layout",
    "build_plan", "decide", "generate", "kernel_arguments", "kernel_name", "runtime_overrides_read",
    "solution_layout", "unsupported_details", "unsupported_reasons",
    "user_argument_offsets",
]
