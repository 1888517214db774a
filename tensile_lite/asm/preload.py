"""The first 256 bytes of a kernel that asks for kernarg preload (`KernelSpec.kernarg_preload`).

When the descriptor's preload length is non-zero, firmware that supports the feature fills the user
SGPRs after the kernarg pointer with the leading kernarg dwords and starts the wave 256 bytes past
the entry; older firmware starts at the entry and fills nothing (AMDGPUUsage, "Preloaded Kernel
Arguments"). So a preloading kernel begins with a block that loads those dwords into exactly the
SGPRs the hardware would have filled, waits, and branches to byte 256. Both starts then reach the
same state at byte 256, and the rest of the kernel cannot tell them apart.
"""

from __future__ import annotations

from tensile_lite.asm.errors import AsmError
from tensile_lite.asm.isa import Instruction, isa_for
from tensile_lite.asm.kernel import KERNARG_POINTER_SGPRS, KernelSpec, entry_registers
from tensile_lite.asm.operands import Label, sgpr
from tensile_lite.asm.waitcnt import waitcnt

# Bytes of code that preloading firmware skips (AMDGPUUsage: it adds 256 to the entry offset).
PRELOAD_ENTRY_SKIP = 256

_LOADS = ((16, "s_load_dwordx16"), (8, "s_load_dwordx8"), (4, "s_load_dwordx4"), (2, "s_load_dwordx2"),
          (1, "s_load_dword"))


def compat_loads(spec: KernelSpec) -> list[Instruction]:
    """Scalar loads of kernarg dwords 0..n-1 into s[2:2+n], as few as SGPR alignment allows (a load
    of w > 1 dwords must start at an SGPR that is a multiple of min(w, 4))."""
    isa = isa_for(spec.arch.name)
    kernarg = entry_registers(spec).kernarg
    out: list[Instruction] = []
    pos, end = 0, spec.kernarg_preload
    while pos < end:
        reg = KERNARG_POINTER_SGPRS + pos
        for width, name in _LOADS:
            if width <= end - pos and reg % min(width, 4) == 0:
                out.append(isa.op(name)(sgpr(reg, width), kernarg, 4 * pos))
                pos += width
                break
    return out


def compat_block(spec: KernelSpec, main: Label) -> list[str]:
    """Lines from the entry to the `main` label at byte 256: the loads, a wait, a branch, and
    `.p2align 8`, which the assembler fills with `s_nop 0` in code (the entry is 256-aligned:
    `kernel_header` aligns the symbol). Empty for a kernel without preload."""
    if not spec.kernarg_preload:
        return []
    isa = isa_for(spec.arch.name)
    body = [*compat_loads(spec), *waitcnt(isa, lgkmcnt=0), isa.s_branch(main)]
    # every instruction here is at most 8 bytes; the padding must not be empty or overflow
    if 8 * len(body) >= PRELOAD_ENTRY_SKIP:
        raise AsmError(f"kernel {spec.name}: the kernarg preload block does not fit in {PRELOAD_ENTRY_SKIP} bytes")
    return [*(i.text for i in body), ".p2align 8", f"{main.text}:"]
