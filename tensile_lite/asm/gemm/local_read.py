"""Stage 4: matrix-instruction inputs from LDS. Lane l of a wave feeds row l % M of its block with
`k_runs` runs of `k_per_lane` consecutive k (lanes.py, spec/matrix_instructions.md §3).

K-contiguous rows: one LDS read per run and block, split into reads of at most 16 bytes.
k_rows (plan.py): the lane's k values lie one row apart, so each is its own read. Elements narrower
than a dword are read zero-extended, the first of each register into the register itself and the
others into packing registers, and `pack_step` ORs them into place once the reads are waited for: CDNA
zeroes the other half on D16 loads (spec/hardware_semantics.md §1), so halves are never loaded in place.
"""

from __future__ import annotations

from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.gemm.layout import OperandRegs
from tensile_lite.asm.gemm.plan import OperandPlan
from tensile_lite.asm.modifiers import DS
from tensile_lite.asm.operands import Reg

_READS = {16: "ds_read_b128", 8: "ds_read_b64", 4: "ds_read_b32", 2: "ds_read_u16", 1: "ds_read_u8"}
MAX_READ_BYTES = 16


def read_step(e: Emitter, op: OperandPlan, o: OperandRegs, step: int, buffer: int) -> None:
    """Inputs of k-step `step` for every block of the wave into MFMA buffer `buffer`."""
    if op.k_rows:
        _read_k_rows(e, op, o, step, buffer)
        return
    run_bytes = op.k_per_lane * op.lds_bpe
    width = min(run_bytes, MAX_READ_BYTES)
    read = e.isa.op(_READS[width])
    k = step * e.plan.mfma.k
    regs = op.mfma_regs
    run_regs = run_bytes // 4
    for t in range(op.wave_tile):
        dst = o.mfma[buffer][t * regs:(t + 1) * regs]
        for c in range(op.k_runs):
            first = (t * op.mi_size * op.lds_stride + k + c * op.k_groups * op.k_per_lane) * op.lds_bpe
            for part in range(run_bytes // width):
                lo = c * run_regs + part * width // 4
                e(read(dst[lo:lo + width // 4], o.lds_read, mods=DS(offset=first + part * width)))


def _pack_reg(op: OperandPlan, o: OperandRegs, buffer: int, reg: int, pos: int) -> Reg:
    """The packing register of element `pos` (1..pack-1) of MFMA input register `reg`."""
    assert o.pack is not None
    return o.pack[buffer][reg * (op.pack - 1) + pos - 1]


def _read_k_rows(e: Emitter, op: OperandPlan, o: OperandRegs, step: int, buffer: int) -> None:
    bpe = op.lds_bpe
    read = e.isa.op(_READS[min(bpe, MAX_READ_BYTES)])
    k = step * e.plan.mfma.k
    regs = op.mfma_regs
    for t in range(op.wave_tile):
        for c in range(op.k_runs):
            for el in range(op.k_per_lane):
                index = c * op.k_per_lane + el  # the element's place among the lane's inputs of this block
                first = ((k + c * op.k_groups * op.k_per_lane + el) * op.lds_stride + t * op.mi_size) * bpe
                if bpe >= 4:
                    lo = t * regs + index * bpe // 4
                    dst = o.mfma[buffer][lo:lo + bpe // 4]
                else:
                    reg, pos = t * regs + index // op.pack, index % op.pack
                    dst = o.mfma[buffer][reg] if pos == 0 else _pack_reg(op, o, buffer, reg, pos)
                e(read(dst, o.lds_read, mods=DS(offset=first)))


def pack_step(e: Emitter, op: OperandPlan, o: OperandRegs, buffer: int) -> None:
    """Assemble buffer `buffer`'s MFMA inputs from their packing registers (k_rows of narrow data),
    after the reads have been waited for; element p of a register goes to bits p * 8 * lds_bpe up."""
    if op.pack == 1:
        return
    isa = e.isa
    bits = 8 * op.lds_bpe
    for reg in range(op.wave_tile * op.mfma_regs):
        dst = o.mfma[buffer][reg]
        for pos in range(1, op.pack):
            e(isa.v_lshl_or_b32(dst, _pack_reg(op, o, buffer, reg, pos), pos * bits, dst))
