"""What a kernel must agree on with the runtime before any problem runs: the launch features the
verifier can drive, and the kernel-argument layout in the code object's metadata.

A kernel whose `.args` differ from what the runtime packs (from the `.dat` entry) reads garbage on a
real GPU whatever its arithmetic, so a difference is a failure, not a skip.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tensile_lite.verify import epilogue, grouped, runtime_args
from tensile_lite.verify.errors import NotVerifiable
from tensile_lite.verify.runtime_view import RuntimeSolution


def check_launchable(rs: RuntimeSolution) -> None:
    """NotVerifiable for launches the verifier does not drive (split-K through SingleBuffer atomics,
    stream-K, ...). In-kernel split-K (globalAccumulation 3) and split-K reduced by the runtime's
    conversion kernel (MultipleBuffer, globalAccumulation 2) are driven."""
    pt, sol = rs.problem_type, rs.solution
    if sol.kernel_language != "Assembly":
        raise NotVerifiable("source (HIP) kernels are not verified")
    if pt.grouped_gemm:
        grouped.check_launchable(rs)
    if sol.runtime.global_split_u != 1 and not (rs.split_k or rs.multiple_buffer):
        raise NotVerifiable(f"GlobalSplitU {sol.runtime.global_split_u} with globalAccumulation "
                            f"{rs.global_accumulation}: split-K through the runtime's extra kernels")
    if rs.stream_k:
        raise NotVerifiable(f"StreamK {rs.stream_k}")
    runtime_args.layout(rs)  # NotVerifiable for the legacy layout and arguments the packer cannot describe
    epilogue.check_supported(pt)


def argument_mismatch(rs: RuntimeSolution, metadata: Mapping[str, Any]) -> str | None:
    """None when the kernel's `.args` have the offsets and sizes the runtime packs; else the difference."""
    want = runtime_args.layout(rs)
    args = metadata.get(".args")
    if not isinstance(args, list):
        return "the kernel's metadata has no .args"
    got = [(str(a.get(".name")), int(a.get(".offset", -1)), int(a.get(".size", -1))) for a in args]
    if len(got) != len(want):
        return f"the kernel declares {len(got)} arguments; the runtime packs {len(want)}"
    for (gname, goff, gsize), (wname, woff, wsize) in zip(got, want, strict=True):
        if (goff, gsize) != (woff, wsize):
            return (f"argument {gname!r} is at offset {goff} ({gsize} bytes) in the kernel; the runtime puts "
                    f"{wname!r} at offset {woff} ({wsize} bytes)")
    segment = int(metadata.get(".kernarg_segment_size", 0) or 0)
    size = want[-1][1] + want[-1][2] if want else 0
    if segment < size:
        return f".kernarg_segment_size {segment} is smaller than the {size} bytes the runtime packs"
    return None


def workgroup_mismatch(rs: RuntimeSolution, metadata: Mapping[str, Any]) -> str | None:
    sol = rs.solution
    max_flat = metadata.get(".max_flat_workgroup_size")
    if isinstance(max_flat, int) and max_flat < sol.num_threads:
        return (f"the library launches {sol.num_threads} threads per workgroup but the kernel allows "
                f"{max_flat} (.max_flat_workgroup_size)")
    wave = metadata.get(".wavefront_size")
    if isinstance(wave, int) and wave != sol.wavefront_size:
        return f"the library assumes wave{sol.wavefront_size} but the kernel is wave{wave}"
    return None
