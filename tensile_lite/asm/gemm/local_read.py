"""Stage 4: matrix-instruction inputs from LDS. Lane l of a wave feeds row l % M of its block with
`k_runs` runs of `k_per_lane` consecutive k (lanes.py, spec/matrix_instructions.md §3): one LDS
read per run and block, split into reads of at most 16 bytes."""

from __future__ import annotations

from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.gemm.layout import OperandRegs
from tensile_lite.asm.gemm.plan import OperandPlan
from tensile_lite.asm.modifiers import DS

_READS = {16: "ds_read_b128", 8: "ds_read_b64", 4: "ds_read_b32"}
MAX_READ_BYTES = 16


def read_step(e: Emitter, op: OperandPlan, o: OperandRegs, step: int, buffer: int) -> None:
    """Inputs of k-step `step` for every block of the wave into MFMA buffer `buffer`."""
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
