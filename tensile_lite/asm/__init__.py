"""The assembly layer: typed operands, table-driven instructions per target, registers, and
comment-free streaming text. Kernel writers (`tensile_lite.asm.gemm`) and the emulator build on it.

Targets
    `get_arch("gfx942")` -> `Arch`: wavefront size, register files (AGPRs, unified file), LDS size,
    wait counters, buffer resource word 3, workgroup-id source, cache-bit spellings, hazards, and
    `arch.matrix` (MFMA/WMMA shapes with register counts). `ARCHS` holds all thirteen targets.

Operands (`operands.py`)
    `vgpr(i, n=1)`, `sgpr(i, n=1)`, `agpr(i, n=1)`, `ttmp(i)` -> `Reg` (ranges index Python-style:
    `r[1]`, `r[0:2]`, print inclusive: `v[4:7]`); `VCC`, `VCC_LO`, `EXEC`, `EXEC_LO`, `M0`,
    `NULL_REG`, `OFF_ADDR`; `Label(name)`; `WaitCounts(vmcnt=, expcnt=, lgkmcnt=)`. Plain ints and
    floats are constants; the builder decides inline constant vs literal.

Instructions (`isa.py`, table in `table.py`)
    `isa = isa_for("gfx942")`; every row of the table is a method named by its canonical (gfx9)
    name, spelled for the target: `isa.v_add_u32(vgpr(1), vgpr(2), 3)` prints `v_add_nc_u32 ...` on
    gfx11. Modifiers go in `mods=`: `Buf(offen=True, offset=16, cache=CachePolicy(glc=True))`,
    `Glb`, `DS(offset=)`, `DS2(offset0=, offset1=)`, `Sel(op_sel=..., neg_lo=...)`, `Mfma(cbsz=...)`,
    `DPP.quad_perm(...)`. A builder checks operand kinds, widths, alignment, register limits,
    literal and constant-bus rules; a mnemonic the target lacks raises `UnsupportedInstruction`.
    Results are frozen `Instruction`s with `.text`, `.name`, `.mnemonic`, `.family`, `.mem`.
    MFMA/WMMA by shape: `arch.find_matrix("f32", "f16", 16, 16, 16)` -> `MatrixInstruction`,
    whose `.name` is the builder: `isa.op(mi.name)(d, a, b, c)`.

Registers (`registers.py`)
    `Registers(arch, kernel)` with pools `.s`, `.v`, `.a`: `alloc(n, align=, name=)`, `reserve`,
    `free`, `named`, `temp(n)` (context manager), `high_water`; `counts()` -> `RegisterCounts` for
    the descriptor. Overflow raises `RegisterOverflow` naming the kernel and register class.

Text (`writer.py`, `kernel.py`)
    `AsmWriter(sink, annotate=False)`: `emit(ins)`, `extend(instructions)`, `label`, `directive`,
    `comment` (dropped unless annotating); sinks are lists, callables or objects with `write`.
    `Labels().new("Loop")` gives deterministic unique labels.
    `KernelSpec(name, arch, arguments, workgroup_size, lds_bytes=, workgroup_ids=,
    code_object_version=)` with `KernelArgument.value(name, "u32")` / `.pointer(name)`;
    `pack_arguments(args)` gives the tightly packed offsets. A kernel is
    `kernel_header(spec)` + body + `kernel_trailer(spec, regs.counts())` (descriptor and metadata
    come last because the register counts are known only then); with counts known up front,
    `kernel_prologue(spec, counts)` + body + `kernel_epilogue(spec)` gives upstream's order.
    `reserve_entry_registers` claims
    s[0:1] (kernarg pointer), the workgroup-id SGPRs and v0.

Helpers (`waitcnt.py`, `arith.py`)
    `waitcnt(isa, vmcnt=0, ...)` (gfx12: loadcnt/storecnt/dscnt/kmcnt instructions),
    `wait_counts(arch, pending_events, retire)`, `wait_for(isa, pending, retire)`;
    `magic_divisor(d)`, `udiv_const`, `udiv_vector`, `udiv_scalar` (runtime divisor), `add64`,
    `mul32x32_64`, `buffer_resource`.
"""

from tensile_lite.asm.arch import ARCHS, LDS, LOAD, MEM_EVENTS, SMEM, STORE, Arch, Hazards, get_arch
from tensile_lite.asm.arith import (
    MagicDivisor,
    add64,
    buffer_resource,
    magic_divisor,
    mul32x32_64,
    udiv_const,
    udiv_scalar,
    udiv_vector,
)
from tensile_lite.asm.errors import AsmError, OperandError, RegisterOverflow, UnsupportedInstruction
from tensile_lite.asm.isa import Instruction, InstructionSet, Op, isa_for
from tensile_lite.asm.kernel import (
    ArgumentLayout,
    EntryRegisters,
    KernelArgument,
    KernelSpec,
    entry_registers,
    kernel_epilogue,
    kernel_header,
    kernel_prologue,
    kernel_trailer,
    pack_arguments,
    reserve_entry_registers,
)
from tensile_lite.asm.matrix import MatrixInstruction
from tensile_lite.asm.modifiers import DPP, DS, DS2, Buf, CachePolicy, Glb, Mfma, Sel
from tensile_lite.asm.operands import (
    EXEC,
    EXEC_HI,
    EXEC_LO,
    M0,
    NULL_REG,
    OFF_ADDR,
    VCC,
    VCC_HI,
    VCC_LO,
    Label,
    Reg,
    Special,
    WaitCounts,
    agpr,
    sgpr,
    ttmp,
    vgpr,
)
from tensile_lite.asm.registers import RegisterCounts, RegisterPool, Registers
from tensile_lite.asm.waitcnt import wait_counts, wait_for, waitcnt
from tensile_lite.asm.writer import AsmWriter, Labels, render

__all__ = [
    "ARCHS", "DPP", "DS", "DS2", "EXEC", "EXEC_HI", "EXEC_LO", "LDS", "LOAD", "M0", "MEM_EVENTS", "NULL_REG",
    "OFF_ADDR", "SMEM", "STORE", "VCC", "VCC_HI", "VCC_LO", "Arch", "ArgumentLayout", "AsmError", "AsmWriter",
    "Buf", "CachePolicy", "EntryRegisters", "Glb", "Hazards", "Instruction", "InstructionSet",
    "KernelArgument", "KernelSpec", "Label", "Labels", "MagicDivisor", "MatrixInstruction", "Mfma", "Op",
    "OperandError", "Reg", "RegisterCounts", "RegisterOverflow", "RegisterPool", "Registers", "Sel",
    "Special", "UnsupportedInstruction", "WaitCounts", "add64", "agpr", "buffer_resource", "entry_registers",
    "get_arch", "isa_for", "kernel_epilogue", "kernel_header", "kernel_prologue", "kernel_trailer",
    "magic_divisor", "mul32x32_64", "pack_arguments", "render", "reserve_entry_registers", "sgpr", "ttmp",
    "udiv_const", "udiv_scalar", "udiv_vector", "vgpr", "wait_counts", "wait_for", "waitcnt",
]
