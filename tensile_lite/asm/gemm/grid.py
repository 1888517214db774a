"""gfx12's workgroup ids: the runtime keeps the 3-D grid for argType 0 and delivers the ids in ttmp9 (x)
and ttmp7 (y | z << 16) (spec epilogue_semantics.md §6.1); grouped launches stay 1-D."""

from __future__ import annotations

from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.operands import Reg, ttmp

TTMP7, TTMP9 = ttmp(7), ttmp(9)


def flatten_3d_grid(e: Emitter, nwg0: Reg, tiles: Reg, tmp: Reg) -> None:
    """gfx12 launches argType 0 on a 3-D grid (nwg0, nwg1, batch) (spec epilogue_semantics.md §6.1);
    grouped launches stay 1-D. Make the id flat, wg0 + wg1 * nwg0 + wg2 * nwg0 * nwg1, so one mapping
    serves both."""
    isa, r = e.isa, e.r
    done = e.new_label("FlatId")
    e(isa.s_lshr_b32(tmp, r.args[0], 30), isa.s_cmp_eq_u32(tmp, 0), isa.s_cbranch_scc0(done))
    e(isa.s_and_b32(tmp, TTMP7, 0xFFFF), isa.s_mul_i32(tmp, tmp, nwg0))
    e(isa.s_add_u32(r.workgroup_id, r.workgroup_id, tmp))
    e(isa.s_lshr_b32(tmp, TTMP7, 16), isa.s_mul_i32(tmp, tmp, tiles))
    e(isa.s_add_u32(r.workgroup_id, r.workgroup_id, tmp))
    e.label(done)
