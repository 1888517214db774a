"""LocalSplitU: the workgroup is `lsu` groups of waves (WorkGroup[2]); every group covers the whole
macro tile and sums its own 1/lsu of each DepthU (the LDS read addresses start at
group * DepthU / lsu, setup.thread_addresses), so after the loop each group holds a partial sum of
every accumulator.

    reduce      every wave is done with the tiles in LDS (barrier); the waves of groups 1..lsu-1
                write their accumulators to LDS; barrier; the waves of group 0 add them, group by
                group in order (so the sum does not depend on timing), into their accumulators
    end_others  the other groups' waves end, once the epilogue's vectors are staged (which takes
                every thread of the workgroup)

The LDS layout is one slot per wave past group 0 (slot = (group - 1) * group waves + place in the
group), lane-major inside a slot so that four accumulators move with one 16-byte access.
"""

from __future__ import annotations

from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.modifiers import DS
from tensile_lite.asm.operands import Reg


def _wave_index(e: Emitter, dst: Reg) -> None:
    """dst (SGPR) = this wave's index in the workgroup."""
    isa, r = e.isa, e.r
    v = r.vtmp[0]
    e(isa.v_lshrrev_b32(v, e.plan.lanes.wave_shift, r.tid), isa.v_readfirstlane_b32(dst, v))


def _slot_address(e: Emitter, addr: Reg, wave: Reg, group_delta: int) -> None:
    """addr = LDS byte address of this lane's part of the slot of the wave `group_delta` groups after
    `wave` (an SGPR) minus one group: ((wave + delta * group_waves - group_waves) * lanes + lane) * acc * 4."""
    isa, r, plan = e.isa, e.r, e.plan
    t = r.stmp[0]
    acc = r.acc.count
    lanes = plan.lanes.wave
    e(isa.s_add_u32(t, wave, (group_delta - 1) * plan.group_waves))
    e.s_mul_const(t, t, lanes * acc * 4)
    e(isa.v_and_b32(addr, lanes - 1, r.tid))
    e.v_mul_const(addr, addr, acc * 4)
    e(isa.v_add_u32(addr, t, addr))


def reduce(e: Emitter) -> None:
    isa, r, plan = e.isa, e.r, e.plan
    wave = r.stmp[1]
    addr = r.epilogue[0]
    v = r.vtmp
    acc = r.acc
    add = isa.v_add_u32 if plan.integer else isa.v_add_f32
    e.wait(lgkmcnt=0)
    e(e.barrier())
    _wave_index(e, wave)
    first = e.new_label("LsuFirstGroup")
    added = e.new_label("LsuAdded")
    e(isa.s_cmp_lt_u32(wave, plan.group_waves), isa.s_cbranch_scc1(first))
    # groups 1..lsu-1: accumulators out
    _slot_address(e, addr, wave, 0)
    for q in range(0, acc.count, 4):
        e(e.acc_read(v[i], acc[q + i]) for i in range(4))
        e(isa.ds_write_b128(addr, v[0:4], mods=DS(offset=4 * q)))
    e.wait(lgkmcnt=0)
    e(e.barrier())
    e(isa.s_branch(added))
    # group 0: the other groups' partials added in group order
    e.label(first)
    e(e.barrier())
    for group in range(1, plan.lsu):
        _slot_address(e, addr, wave, group)
        for q in range(0, acc.count, 4):
            e(isa.ds_read_b128(v[0:4], addr, mods=DS(offset=4 * q)))
            e(e.acc_read(v[4 + i], acc[q + i]) for i in range(4))
            e.wait(lgkmcnt=0)
            e(add(v[4 + i], v[4 + i], v[i]) for i in range(4))
            e(e.acc_write(acc[q + i], v[4 + i]) for i in range(4))
    # an AGPR written by a VALU is read by the epilogue's v_accvgpr_read: 2 wait states on gfx90a+
    e.nops(2)
    e.label(added)


def end_others(e: Emitter) -> None:
    """The waves past group 0 end (their sums are in group 0's accumulators)."""
    isa, r, plan = e.isa, e.r, e.plan
    wave = r.stmp[0]
    _wave_index(e, wave)
    go = e.new_label("LsuGroupZero")
    e(isa.s_cmp_lt_u32(wave, plan.group_waves), isa.s_cbranch_scc1(go), isa.s_endpgm())
    e.label(go)
