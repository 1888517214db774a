"""PreloadKernArgs for GEMM kernels: how many leading kernarg dwords arrive in SGPRs, and the
kernel's entry when they do (the compatibility block, then copies into the argument registers).

The preloaded dwords are the leading dwords of the kernarg segment: the 16-byte header always
(which every launch, grouped or not, carries inline) and, for argType 0, the first arguments after
it. They are copied from s[2:2+n] into `args[0:n]`, so every later stage reads arguments from one
place whichever way the kernel started; `setup.load_arguments` loads only the dwords after them.
"""

from __future__ import annotations

from tensile_lite.asm.arch import get_arch
from tensile_lite.asm.gemm.abi import solution_layout
from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.kernel import MAX_KERNARG_PRELOAD, KernelSpec, entry_registers
from tensile_lite.asm.preload import compat_block
from tensile_lite.model import Solution

# GEMM kernels enable workgroup id x only (the runtime flattens the grid).
WORKGROUP_ID_SGPRS = 1


def preload_dwords(sol: Solution) -> int:
    """Kernarg dwords `sol`'s kernel preloads: none unless PreloadKernArgs is set and the target
    supports it. Otherwise at most what hipBLASLt's kernels take (user plus workgroup-id SGPRs
    within 16, its proven configuration) and the declared arguments, rounded down to a multiple of
    four: the loads of the remaining arguments then start 4-aligned and need the fewest s_loads
    (12 dwords: the header, the sizes, D and C for a batched GEMM)."""
    if not sol.tuning("PreloadKernArgs") or not get_arch(sol.arch).kernarg_preload:
        return 0
    dwords = min(MAX_KERNARG_PRELOAD - WORKGROUP_ID_SGPRS, -(-solution_layout(sol).size // 4))
    return dwords - dwords % 4


def enter(e: Emitter, spec: KernelSpec) -> None:
    """The compatibility block, the label at byte 256, and the copies of the preloaded dwords into
    the argument registers (nothing without preload)."""
    if not spec.kernarg_preload:
        return
    assert e.r.preload is not None and len(e.r.preload) == spec.kernarg_preload
    e.out.lines_of(compat_block(spec, e.new_label("KernargPreloaded")))
    src = entry_registers(spec).preloaded
    assert src is not None and src == e.r.preload
    isa, args, n = e.isa, e.r.args, spec.kernarg_preload
    # both ranges start at even SGPRs (s2 and the 4-aligned args), so pairs move as one
    for k in range(0, n - 1, 2):
        e(isa.s_mov_b64(args[k:k + 2], src[k:k + 2]))
    if n % 2:
        e(isa.s_mov_b32(args[n - 1], src[n - 1]))
