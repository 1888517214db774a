"""Verify a built library on the CPU emulator: every kernel, on problems consistent with its solution,
against a float64 numpy reference.

    report = verify_library("OUT", arch="gfx942", limit=None, seed=0, progress=print)
    report.to_json()   # {"kernels", "passed", "failed": [...], "skipped": [...], ...}

The pieces are usable alone: `runtime_view.runtime_solution(entry, arch)` (or `from_model(solution)`)
gives the solution as the runtime sees it; `problems.cases` sizes the problems; `runtime_args.pack`
and `pack_grouped` pack the arguments as the runtime does; `device` is the one way anything (this
package, the emulator tests) runs a kernel: a `Launch` record, `run`/`run_all`, and its builders for
argType 0, grouped and conversion launches; `launch.run_case(emulator, kernel, rs, Case(...), rng)` runs
one problem and compares D; `grouped.run_group(emulator, kernel, rs, cases, arg_type, rng_of)` runs a
grouped-GEMM kernel's cases as one launch through the argument table (argType 1) or hipBLASLt's
UserArguments (argType 2) and compares every GEMM's D; `reference.expected` is the reference with its
tolerance. In-kernel split-K kernels (globalAccumulation 3) get the runtime's workspace and Synchronizer
(`splitk`), MultipleBuffer ones (globalAccumulation 2) a workspace (`splitk`) and the runtime's conversion kernel from
the helper code object (`conversion`), OutputAmaxD kernels their amax buffers and check (`amax`), UseE
kernels their E buffer (`epilogue`). 8-bit floats follow the target's encoding (`float8`, `elements`).
Memory stays bounded: the runner releases each kernel's compiled image once it is verified and drops a
code object's emulator after its last kernel.
"""

from tensile_lite.verify.errors import NotVerifiable, VerifyError
from tensile_lite.verify.report import Failure, KernelOutcome, Report
from tensile_lite.verify.runner import select, verify_kernel, verify_library

__all__ = [
    "Failure", "KernelOutcome", "NotVerifiable", "Report", "VerifyError", "select", "verify_kernel",
    "verify_library",
]
