"""StaggerU: each workgroup starts its summation at its own DepthU tile, so that workgroups running side
by side read different DRAM channels (spec/epilogue_semantics.md §6.2; the runtime packs StaggerU, the
stride shift and StaggerUMapping into bits 16-31 of the header's internalArgs0).

With L full tiles and a start s, the loads visit tiles s, s+1, ..., L-1, 0, ..., s-1 and then the K
remainder L, if any. Only the order of the sums changes. The main loop's counter keeps counting loads
(0, 1, ...), so the remainder is still the load with counter == L and every guard that compares the
counter with L or K stays as it is; what moves are the A and B resources:
- setup puts them at tile s and sets `wrap` = L - s, the load that goes back to tile 0 (0 when s is 0:
  no load has counter 0 after the first, so nothing wraps);
- `advance` moves them one tile, back L - 1 tiles for the load `wrap`, and forward L - s + 1 tiles
  (= wrap + 1, which is 1 when unstaggered) for the remainder.
The pipelined loop's fast body keeps its plain one-tile advance and leaves the wrapping load to the slow
body (mainloop.summation).
"""

from __future__ import annotations

from tensile_lite.asm.arith import udiv_const
from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.gemm.layout import OperandRegs
from tensile_lite.asm.operands import Reg

INFO0 = 1  # the header dword holding internalArgs0


def start(e: Emitter) -> None:
    """After the loop counts and the operand resources: the start tile s from the header and this
    workgroup's tile, the resources moved there, and `wrap`. Uses stmp[0:5]."""
    isa, r, plan = e.isa, e.r, e.plan
    su, index, t, shift, cur = (r.stmp[i] for i in range(5))
    mt0, mt1 = plan.macro_tile
    e(isa.s_lshr_b32(su, r.args[INFO0], 16))
    # the index follows wg1 for StaggerUMapping 0 and wg0 for any other (the branch sense upstream's
    # kernels have, §6.2), taken after the GSU split and WorkGroupMapping
    e(udiv_const(isa, index, r.tile1, mt1, t))
    e(udiv_const(isa, shift, r.tile0, mt0, t))
    e(isa.s_lshr_b32(t, su, 13), isa.s_cmp_eq_u32(t, 0), isa.s_cselect_b32(index, index, shift))
    e(isa.s_lshr_b32(shift, su, 8), isa.s_and_b32(shift, shift, 0x1F), isa.s_and_b32(cur, su, 0xFF))
    # halve StaggerU until its span (StaggerU << shift tiles) fits in L
    fits = e.new_label("StaggerFits")
    halve = e.new_label("StaggerHalve")
    e.label(halve)
    e(isa.s_lshl_b32(t, cur, shift), isa.s_cmp_lt_u32(r.full_iters, t), isa.s_cbranch_scc0(fits))
    e(isa.s_lshr_b32(cur, cur, 1), isa.s_branch(halve))
    e.label(fits)
    # s = ((StaggerU - 1) & index) << shift, 0 when StaggerU has become 0
    e(isa.s_sub_u32(t, cur, 1), isa.s_cmp_eq_u32(cur, 0), isa.s_cselect_b32(t, 0, t))
    e(isa.s_and_b32(t, t, index), isa.s_lshl_b32(t, t, shift))
    e(isa.s_sub_u32(su, r.full_iters, t), isa.s_cmp_eq_u32(t, 0), isa.s_cselect_b32(r.stagger_wrap, 0, su))
    for o in (r.a, r.b):
        e(isa.s_mul_i32(su, t, o.increment))
        e(isa.s_add_u32(o.srd[0], o.srd[0], su), isa.s_addc_u32(o.srd[1], o.srd[1], 0),
          isa.s_sub_u32(o.srd[2], o.srd[2], su))


def advance(e: Emitter) -> None:
    """Move A's and B's resources to the tile load `counter` reads (base and bound by the same bytes).
    Uses stmp[0:4]."""
    isa, r = e.isa, e.r
    fwd, back, fb, bb = (r.stmp[i] for i in range(4))
    e(isa.s_add_u32(fwd, r.stagger_wrap, 1), isa.s_cmp_eq_u32(r.counter, r.full_iters),
      isa.s_cselect_b32(fwd, fwd, 1))
    e(isa.s_sub_u32(back, r.full_iters, 1), isa.s_cmp_eq_u32(r.counter, r.stagger_wrap),
      isa.s_cselect_b32(fwd, 0, fwd), isa.s_cselect_b32(back, back, 0))
    for o in (r.a, r.b):
        _move(e, o, fwd, back, fb, bb)


def _move(e: Emitter, o: OperandRegs, fwd: Reg, back: Reg, fb: Reg, bb: Reg) -> None:
    isa = e.isa
    e(isa.s_mul_i32(fb, fwd, o.increment), isa.s_mul_i32(bb, back, o.increment))
    e(isa.s_add_u32(o.srd[0], o.srd[0], fb), isa.s_addc_u32(o.srd[1], o.srd[1], 0),
      isa.s_sub_u32(o.srd[0], o.srd[0], bb), isa.s_subb_u32(o.srd[1], o.srd[1], 0),
      isa.s_sub_u32(o.srd[2], o.srd[2], fb), isa.s_add_u32(o.srd[2], o.srd[2], bb))
