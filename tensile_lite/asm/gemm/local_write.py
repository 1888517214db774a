"""Stage 3: the loaded tile from registers into LDS, K contiguous in every row.

A vector that runs along K is one LDS write; a vector that runs along the free dimension is
scattered, one element per row (16-bit elements from either half of a register).
"""

from __future__ import annotations

from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.gemm.layout import OperandRegs
from tensile_lite.asm.gemm.plan import OperandPlan
from tensile_lite.asm.modifiers import DS

_WRITES = {16: "ds_write_b128", 8: "ds_write_b64", 4: "ds_write_b32", 2: "ds_write_b16"}


def write_tile(e: Emitter, op: OperandPlan, o: OperandRegs) -> None:
    isa = e.isa
    rpl = op.regs_per_load
    for n, (cc, oc) in enumerate(op.load_offsets):
        src = o.tile[n * rpl:(n + 1) * rpl]
        if op.k_contiguous:
            offset = (oc * op.lds_stride + cc) * op.bpe
            e(isa.op(_WRITES[op.vector * op.bpe])(o.lds_write, src, mods=DS(offset=offset)))
            continue
        for el in range(op.vector):
            offset = ((cc + el) * op.lds_stride + oc) * op.bpe
            if op.bpe == 4:
                e(isa.ds_write_b32(o.lds_write, src[el], mods=DS(offset=offset)))
            else:
                write = isa.ds_write_b16_d16_hi if el % 2 else isa.ds_write_b16
                e(write(o.lds_write, src[el // 2], mods=DS(offset=offset)))
