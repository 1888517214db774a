"""Stage 4: MFMA inputs from LDS. Lane l of a wave feeds row l % mi of its block with k values
(l / mi) * k_per_lane onwards (spec/matrix_instructions.md §3.1), one LDS read per block."""

from __future__ import annotations

from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.gemm.layout import OperandRegs
from tensile_lite.asm.gemm.plan import OperandPlan
from tensile_lite.asm.modifiers import DS

_READS = {16: "ds_read_b128", 8: "ds_read_b64", 4: "ds_read_b32"}


def read_step(e: Emitter, op: OperandPlan, o: OperandRegs, step: int, buffer: int) -> None:
    """Inputs of k-step `step` for every block of the wave into MFMA buffer `buffer`."""
    read = e.isa.op(_READS[op.k_per_lane * op.lds_bpe])
    k = step * e.plan.mfma.k
    regs = op.mfma_regs
    for t in range(op.wave_tile):
        offset = (t * op.mi_size * op.lds_stride + k) * op.lds_bpe
        e(read(o.mfma[buffer][t * regs:(t + 1) * regs], o.lds_read, mods=DS(offset=offset)))
