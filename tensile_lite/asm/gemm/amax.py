"""Stage 6b: OutputAmaxD, the largest |value| of D before scaleD, over the whole GEMM, as one f32.

Per lane, the epilogue keeps the running max of |t| after the activation and before `* scaleD`
(spec/epilogue_semantics.md §1.6) over the elements it stores; elements outside M x N count 0. At
the end of the workgroup:

    wg max      each thread's max to LDS, then a tree of max over LDS (the main loop's LDS is free)
    one group   the workgroup is the whole GEMM: its max goes straight to AddrAmaxOut
    otherwise   the max goes to AmaxWS[wg] (f32), released; an arrival is counted on the GEMM's
                AmaxSync counter with `buffer_atomic_dec` wrapping at groups - 1, so the counter is
                back at 0 after the last arrival; the workgroup that saw 1 acquires, reduces every
                partial (the whole workgroup, a tree again) and writes AddrAmaxOut

Choices that differ from upstream's kernels, on purpose:
- every element counts, whatever the store vector width (upstream skips the packed route, §1.6);
- the groups are nwg0 x nwg1 x batch and the index includes the batch, so batched GEMMs are right
  (upstream counts nwg0 x nwg1 only); the host's AmaxWS holds numWorkGroups f32, batch included;
- in a grouped launch GEMM i counts on dword i of AmaxSync, so GEMMs never share a counter;
- hipBLASLt's user-arguments struct has no amax fields: an argType-2 launch writes no amax, and a
  null AddrAmaxOut skips the stage.
The max of f32 values with `v_max_f32` drops NaN (IEEE maxNum), as upstream's does.
"""

from __future__ import annotations

from tensile_lite.asm.arith import udiv_const
from tensile_lite.asm.gemm.emit import Emitter, store_cache
from tensile_lite.asm.gemm.splitk import memory_model
from tensile_lite.asm.modifiers import DS, Buf, CachePolicy
from tensile_lite.asm.operands import EXEC, Reg

ABS_MASK = 0x7FFFFFFF


def start(e: Emitter, amax: Reg) -> None:
    e(e.isa.v_mov_b32(amax, 0))


def update(e: Emitter, amax: Reg, values: list[Reg], tmp: Reg) -> None:
    """amax = max(amax, |v|) for each value (all in bounds)."""
    isa = e.isa
    for v in values:
        e(isa.v_and_b32(tmp, ABS_MASK, v), isa.v_max_f32(amax, amax, tmp))


def update_guarded(e: Emitter, amax: Reg, value: Reg, row: int, limit: Reg, tmp: Reg) -> None:
    """amax = max(amax, |value|) when the element's row is below the lane's limit, else unchanged."""
    isa = e.isa
    vcc = e.plan.arch.vcc
    e(isa.v_cmp_lt_i32(vcc, row, limit))
    e(isa.v_cndmask_b32(tmp, 0, value, vcc))
    e(isa.v_and_b32(tmp, ABS_MASK, tmp), isa.v_max_f32(amax, amax, tmp))


def _tree(e: Emitter, amax: Reg, addr: Reg, tmp: Reg) -> None:
    """Every thread's amax to LDS[tid]; afterwards thread 0's amax (and LDS[0]) is the workgroup's max."""
    isa, r, plan = e.isa, e.r, e.plan
    vcc = plan.arch.vcc
    e(isa.ds_write_b32(addr, amax))
    e.wait(lgkmcnt=0)
    e(e.barrier())
    half = plan.num_threads // 2
    while half:
        e(isa.v_cmp_gt_u32(vcc, half, r.tid), isa.s_and_saveexec_b64(r.mask, vcc))
        e(isa.ds_read_b32(tmp, addr, mods=DS(offset=4 * half)))
        e.wait(lgkmcnt=0)
        e(isa.v_max_f32(amax, amax, tmp), isa.ds_write_b32(addr, amax))
        e.wait(lgkmcnt=0)
        e(isa.s_mov_b64(EXEC, r.mask), *e.barrier())
        half //= 2


def _resource(e: Emitter, srd: Reg, pointer: Reg, num_records: Reg | int) -> None:
    isa = e.isa
    e(isa.s_mov_b32(srd[0], pointer[0]), isa.s_mov_b32(srd[1], pointer[1]))
    e(isa.s_mov_b32(srd[2], num_records), isa.s_mov_b32(srd[3], e.plan.arch.srd_word3))


def _write_result(e: Emitter, amax: Reg, addr: Reg) -> None:
    """Thread 0 stores the workgroup's amax to AddrAmaxOut; the program ends."""
    isa, r, plan = e.isa, e.r, e.plan
    vcc = plan.arch.vcc
    srd = r.srd_c
    _resource(e, srd, r.arg("AddrAmaxOut"), 4)
    e(isa.v_cmp_eq_u32(vcc, 0, r.tid), isa.s_and_saveexec_b64(r.mask, vcc))
    e(isa.v_mov_b32(addr, 0))
    e(isa.buffer_store_dword(amax, addr, srd, 0, mods=Buf(offen=True, cache=_store_cache(e))))
    e(isa.s_endpgm())


def _store_cache(e: Emitter) -> CachePolicy:
    return store_cache(e.plan.arch)


def finish(e: Emitter, amax: Reg) -> None:
    """The end of every epilogue variant: the cross-workgroup reduction, then the end of the program."""
    isa, r, plan = e.isa, e.r, e.plan
    vcc = plan.arch.vcc
    t = r.stmp
    v = r.vtmp
    addr, tmp = v[6], v[7]
    groups, index = t[0], t[1]
    release, acquire, atomic = memory_model(plan.arch.name)
    out = r.arg("AddrAmaxOut")
    # (the pointer's dwords may sit at an odd SGPR: compare their OR)
    e(isa.s_or_b32(t[0], out[0], out[1]), isa.s_cmp_eq_u32(t[0], 0))
    skip = e.new_label("AmaxGo")
    e(isa.s_cbranch_scc0(skip), isa.s_endpgm())
    e.label(skip)
    # the epilogue's LDS vectors are read by now in every wave
    e.wait(lgkmcnt=0)
    e(*e.barrier(), isa.v_lshlrev_b32(addr, 2, r.tid))
    _tree(e, amax, addr, tmp)
    # groups = nwg0 * nwg1 * batch; index = wg0 + wg1 * nwg0 + batch * nwg0 * nwg1
    mt0, mt1 = plan.macro_tile
    e(isa.s_add_u32(t[2], r.arg("SizesFree0"), mt0 - 1))
    e(udiv_const(isa, groups, t[2], mt0, t[3]))
    e(udiv_const(isa, index, r.tile1, mt1, t[3]))
    e(isa.s_mul_i32(index, index, groups))
    e(udiv_const(isa, t[2], r.tile0, mt0, t[3]))
    e(isa.s_add_u32(index, index, t[2]))
    e(isa.s_add_u32(t[2], r.arg("SizesFree1"), mt1 - 1))
    e(udiv_const(isa, t[4], t[2], mt1, t[3]))
    e(isa.s_mul_i32(groups, groups, t[4]))
    if plan.batched:
        e(isa.s_mul_i32(t[2], r.batch, groups), isa.s_add_u32(index, index, t[2]))
        e(isa.s_mul_i32(groups, groups, r.arg("SizesFree2")))
    several = e.new_label("AmaxGroups")
    e(isa.s_cmp_gt_u32(groups, 1), isa.s_cbranch_scc1(several))
    _write_result(e, amax, addr)
    e.label(several)
    # the partial to AmaxWS[index], then one arrival on the GEMM's counter (thread 0)
    ws = r.a.srd
    e(isa.s_lshl_b32(t[2], groups, 2))
    _resource(e, ws, r.arg("AmaxWS"), t[2])
    e(isa.v_cmp_eq_u32(vcc, 0, r.tid), isa.s_and_saveexec_b64(r.mask, vcc))
    e(isa.s_lshl_b32(t[3], index, 2), isa.v_mov_b32(tmp, t[3]))
    e(isa.buffer_store_dword(amax, tmp, ws, 0, mods=Buf(offen=True, cache=CachePolicy(glc=True, slc=True))))
    e.wait(vmcnt=0)
    e(isa.op(name)() for name in release)
    e.wait(vmcnt=0)
    sync = r.b.srd
    _resource(e, sync, r.arg("AmaxSync"), 0xFFFFFFFF)
    counter = r.gemm_index if r.gemm_index is not None else None
    e(isa.s_sub_u32(t[4], groups, 1), isa.v_mov_b32(v[5], t[4]))
    if counter is not None:
        e(isa.s_lshl_b32(t[5], counter, 2), isa.v_mov_b32(tmp, t[5]))
    else:
        e(isa.v_mov_b32(tmp, 0))
    e(isa.buffer_atomic_dec(v[5], tmp, sync, 0, mods=Buf(offen=True, cache=atomic)))
    e.wait(vmcnt=0)
    # the old count, for every wave: 1 means this was the last arrival
    e(isa.v_mov_b32(tmp, 0), isa.ds_write_b32(tmp, v[5]))
    e.wait(lgkmcnt=0)
    e(isa.s_mov_b64(EXEC, r.mask), *e.barrier())
    e(isa.v_mov_b32(tmp, 0), isa.ds_read_b32(v[5], tmp))
    e.wait(lgkmcnt=0)
    e(isa.v_readfirstlane_b32(t[4], v[5]), isa.s_cmp_eq_u32(t[4], 1))
    last = e.new_label("AmaxLast")
    e(isa.s_cbranch_scc1(last), isa.s_endpgm())
    e.label(last)
    e(isa.op(name)() for name in acquire)
    # every partial, strided over the threads (reads past the last one return 0)
    e(isa.v_mov_b32(amax, 0), isa.s_mov_b32(t[5], 0))
    loop = e.new_label("AmaxPartials")
    e.label(loop)
    e(isa.buffer_load_dword(tmp, addr, ws, t[5], mods=Buf(offen=True, cache=CachePolicy(glc=True))))
    e.wait(vmcnt=0)
    e(isa.v_max_f32(amax, amax, tmp))
    e(isa.s_add_u32(t[5], t[5], 4 * plan.num_threads), isa.s_cmp_lt_u32(t[5], t[2]))
    e(isa.s_cbranch_scc1(loop))
    # the count's LDS word is read by every wave before the tree overwrites it
    e(e.barrier())
    _tree(e, amax, addr, tmp)
    _write_result(e, amax, addr)
