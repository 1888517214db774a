"""Stage 3: the loaded tile from registers into LDS, in the rows the plan lays out.

A vector that runs along an LDS row (K-contiguous, or a k_rows operand's vector along its free
dimension) is one LDS write (or two or four, where row padding leaves rows only 8- or 4-byte aligned);
a vector along the free dimension of a transposed operand is scattered, one element per row (16-bit
elements from either half of a register, bytes from any of its four). An operand stored in another
format than the MFMA reads is converted first (convert.py), in place.
"""

from __future__ import annotations

from tensile_lite.asm.gemm.convert import convert_load
from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.gemm.layout import OperandRegs
from tensile_lite.asm.gemm.plan import OperandPlan
from tensile_lite.asm.modifiers import DS
from tensile_lite.asm.operands import Reg

_WRITES = {16: "ds_write_b128", 8: "ds_write_b64", 4: "ds_write_b32", 2: "ds_write_b16", 1: "ds_write_b8"}


def write_tile(e: Emitter, op: OperandPlan, o: OperandRegs) -> None:
    for n in range(op.loads):
        write_load(e, op, o, n)


def write_load(e: Emitter, op: OperandPlan, o: OperandRegs, n: int) -> None:
    """The LDS writes of one global load's registers (a scheduler may place each load's on its own)."""
    isa = e.isa
    rpl = op.regs_per_load
    bpe = op.lds_bpe
    cc, oc = op.load_offsets[n]
    src = o.tile[n * rpl:(n + 1) * rpl]
    if op.converted:
        convert_load(e, op, src)
    if op.k_contiguous or op.k_rows:
        offset = (oc * op.lds_stride + cc) * bpe
        piece = op.write_bytes
        for at in range(0, max(op.vector * bpe, piece), piece):
            data = src[at // 4:max(1, (at + piece) // 4)]
            e(isa.op(_WRITES[piece])(o.lds_write, data, mods=DS(offset=offset + at)))
    else:
        for el in range(op.vector):
            offset = ((cc + el) * op.lds_stride + oc) * bpe
            if bpe == 8:
                e(isa.ds_write_b64(o.lds_write, src[2 * el:2 * el + 2], mods=DS(offset=offset)))
            elif bpe == 4:
                e(isa.ds_write_b32(o.lds_write, src[el], mods=DS(offset=offset)))
            elif bpe == 2:
                write = isa.ds_write_b16_d16_hi if el % 2 else isa.ds_write_b16
                e(write(o.lds_write, src[el // 2], mods=DS(offset=offset)))
            else:
                _write_byte(e, o, src[el // 4], el % 4, offset)


def _write_byte(e: Emitter, o: OperandRegs, reg: Reg, pos: int, offset: int) -> None:
    """Byte `pos` of `reg` to LDS: bytes 0 and 2 directly (low byte of either half), bytes 1 and 3
    from a copy shifted down by 8 bits (made once per register, at byte 1)."""
    isa = e.isa
    shifted = e.r.vtmp[0]
    if pos == 1:
        e(isa.v_lshrrev_b32(shifted, 8, reg))
    source = reg if pos % 2 == 0 else shifted
    write = isa.ds_write_b8_d16_hi if pos >= 2 else isa.ds_write_b8
    e(write(o.lds_write, source, mods=DS(offset=offset)))
