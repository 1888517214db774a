"""Stage 6 for f64 (DataType D, compute D; the MAC kernels): per element, in f64,

    t = alpha * acc
    t = fma(C, beta, t)       only when beta has non-zero bits (+0.0 never reads C)
    D = t

the order and rounding of the f32 epilogue (spec/epilogue_semantics.md §1.1) with one rounding per
step in f64. No epilogue feature is built for f64 compute (support.py names them), so the three
lines are the whole epilogue.

The accumulators hold one element per lane and block, two VGPRs each (mac.py: lane l has row
l / n, column l % n of every m x n block), so every element is loaded and stored on its own:
elements outside M x N are pointed past every buffer (their stores are dropped, their C loads read
0), which serves full and edge tiles alike.
"""

from __future__ import annotations

from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.gemm.epilogue import Regs, _column_offsets, _lane_coordinates, _store_mods
from tensile_lite.asm.modifiers import Buf
from tensile_lite.asm.operands import Reg


def _block(e: Emitter, w: Regs, t0: int, t1: int, beta: bool) -> None:
    isa, r, plan = e.isa, e.r, e.plan
    vcc = plan.arch.vcc
    words = plan.mfma.cd_regs
    soff_d, soff_c = _column_offsets(e, t1)
    base = (t0 * plan.wave_tile[1] + t1) * words
    row = t0 * plan.block_m
    # the lane's element is inside the problem when its column is below N and its row below M
    t = r.stmp
    e(isa.s_sub_u32(t[0], r.arg("SizesFree1"), r.tile1))
    e(isa.s_sub_i32(t[0], t[0], t1 * plan.block_n))
    e(isa.v_cmp_gt_i32(vcc, t[0], w.col))
    e(isa.v_cndmask_b32(r.vtmp[1], 0, w.rows_left, vcc))
    e(isa.v_cmp_lt_i32(vcc, row, r.vtmp[1]))
    for addr, off, soff in ((w.addr_d, w.off_d, soff_d), (w.addr_c, w.off_c, soff_c)):
        if not isinstance(soff, Reg):
            e(isa.v_cndmask_b32(addr, r.oob, off, vcc))
        else:
            e(isa.v_add_u32(r.vtmp[0], soff, off), isa.v_cndmask_b32(addr, r.oob, r.vtmp[0], vcc))
    values = w.values[0:words]
    e(e.acc_read(values[i], r.acc[base + i]) for i in range(words))
    e(isa.v_mul_f64(values, r.arg("alpha"), values))
    mods = Buf(offen=True, offset=row * plan.dest_bpe)
    if beta:
        c = w.c[0:words]
        e(isa.buffer_load_dwordx2(c, w.addr_c, r.srd_c, e.soff0, mods=mods))
        e.wait(vmcnt=0)
        e(isa.v_fma_f64(values, c, r.arg("beta"), values))
    e(isa.buffer_store_dwordx2(values, w.addr_d, r.srd_d, e.soff0, mods=_store_mods(e, row * plan.dest_bpe)))


def _variant(e: Emitter, w: Regs, beta: bool) -> None:
    wt0, wt1 = e.plan.wave_tile
    for t1 in range(wt1):
        for t0 in range(wt0):
            _block(e, w, t0, t1, beta)
    e(e.isa.s_endpgm())


def epilogue(e: Emitter) -> None:
    isa, r, plan = e.isa, e.r, e.plan
    w = Regs(e)
    _lane_coordinates(e, w)
    if plan.use_beta:
        beta_zero = e.new_label("BetaZero")
        e(isa.s_cmp_eq_u64(r.arg("beta"), 0), isa.s_cbranch_scc1(beta_zero))
        _variant(e, w, True)
        e.label(beta_zero)
    _variant(e, w, False)
