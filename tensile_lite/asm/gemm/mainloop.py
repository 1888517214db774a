"""Stage 5: the summation loop.

One iteration per DepthU tile, with the global read of the next tile in flight while the current
one is multiplied (prefetch depth 1):

    wait for the tile's global reads; barrier (every wave is done reading LDS)
    write the tile to LDS; wait; barrier (the tile is visible)
    start the global reads of the next tile (guarded for the K remainder and edge tiles)
    k-steps: LDS reads of step s+1 overlap the MFMAs of step s

The K remainder is the last iteration: its loads zero every k >= K, so it needs no separate code
path. PrefetchGlobalRead 2, PrefetchLocalRead > 1 and the interleaving knobs of a solution are
scheduling choices that do not change results; this schedule stands in for all of them.
"""

from __future__ import annotations

from tensile_lite.asm.gemm import xf32_split
from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.gemm.global_read import advance, load_tile, set_k_bound
from tensile_lite.asm.gemm.local_read import read_step
from tensile_lite.asm.gemm.local_write import write_tile
from tensile_lite.asm.gemm.mac import MAC
from tensile_lite.asm.gemm.mac import compute_tile as mac_compute_tile
from tensile_lite.asm.modifiers import Sel

# Wait states between an MFMA and a VALU access of its result, for the slowest MFMA (16 passes:
# passes + 3 by AMD's CDNA2/CDNA3 hazard tables, one more for gfx950's XDL ops, as LLVM's hazard
# recognizer has it); also covers SrcC hazards conservatively.
MFMA_RESULT_WAIT = 20


def zero_accumulators(e: Emitter) -> None:
    acc = e.r.acc
    e(e.acc_write(acc[i], 0) for i in range(acc.count))
    if e.plan.mfma.kind != MAC:
        # a VALU write read by an MFMA needs 2 wait states
        e.nops(2)


def _mfmas(e: Emitter, buffer: int) -> None:
    plan, r = e.plan, e.r
    op = e.isa.op(plan.mfma.name)
    cd = plan.mfma.cd_regs
    wt0, wt1 = plan.wave_tile
    ra, rb = plan.mfma.a_regs, plan.mfma.b_regs
    a_buf, b_buf = r.a.mfma[buffer], r.b.mfma[buffer]
    # RDNA's integer WMMA reads unsigned bytes unless neg_lo marks A and B signed
    mods = Sel(neg_lo=(1, 1)) if plan.mfma.kind == "wmma" and plan.mfma.a_type == "iu8" else None
    if plan.xf32_split:
        _split_mfmas(e, buffer)
        return
    for t0 in range(wt0):
        for t1 in range(wt1):
            acc = r.acc[(t0 * wt1 + t1) * cd:(t0 * wt1 + t1 + 1) * cd]
            args = (acc, a_buf[t0 * ra:(t0 + 1) * ra], b_buf[t1 * rb:(t1 + 1) * rb], acc)
            e(op(*args, mods=mods) if mods is not None else op(*args))


def _split_mfmas(e: Emitter, buffer: int) -> None:
    """Emulated xf32 (xf32_split.py): split every block's f32 inputs, then three bf16 MFMAs per block."""
    plan, r = e.plan, e.r
    op = e.isa.op(plan.mfma.name)
    cd = plan.mfma.cd_regs
    wt0, wt1 = plan.wave_tile
    ra, rb = plan.a.mfma_regs, plan.b.mfma_regs
    a_buf, b_buf = r.a.mfma[buffer], r.b.mfma[buffer]
    tmp = r.vtmp[0:xf32_split.scratch_needed(max(ra, rb))]
    for t in range(wt0):
        xf32_split.split(e, a_buf[t * ra:(t + 1) * ra], tmp)
    for t in range(wt1):
        xf32_split.split(e, b_buf[t * rb:(t + 1) * rb], tmp)
    for t0 in range(wt0):
        for t1 in range(wt1):
            acc = r.acc[(t0 * wt1 + t1) * cd:(t0 * wt1 + t1 + 1) * cd]
            for a, b in xf32_split.products(a_buf[t0 * ra:(t0 + 1) * ra], b_buf[t1 * rb:(t1 + 1) * rb]):
                e(op(acc, a, b, acc))


def _same_acc_wait(e: Emitter) -> int:
    """Wait states between dependent MFMAs on one accumulator (only when every block is one)."""
    plan = e.plan
    if plan.wave_tile[0] * plan.wave_tile[1] > 1:
        return 0
    passes = plan.mfma.passes
    return 0 if passes is not None and passes >= 4 else 3


def compute_tile(e: Emitter) -> None:
    plan, r = e.plan, e.r
    steps = plan.steps
    read_step(e, plan.a, r.a, 0, 0)
    read_step(e, plan.b, r.b, 0, 0)
    same_acc = _same_acc_wait(e)
    for s in range(steps):
        e.wait(lgkmcnt=0)
        if s + 1 < steps:
            read_step(e, plan.a, r.a, s + 1, (s + 1) % 2)
            read_step(e, plan.b, r.b, s + 1, (s + 1) % 2)
        if s and same_acc:
            e.nops(same_acc)
        _mfmas(e, s % 2)


def summation(e: Emitter) -> None:
    isa, r, plan = e.isa, e.r, e.plan
    mac = plan.mfma.kind == MAC
    zero_accumulators(e)
    end = e.new_label("SummationEnd")
    loop = e.new_label("LoopBegin")
    no_prefetch = e.new_label("NoPrefetch")
    e(isa.s_cmp_eq_u32(r.iters, 0), isa.s_cbranch_scc1(end))
    e(isa.s_mov_b32(r.counter, 0))
    set_k_bound(e)
    load_tile(e, plan.a, r.a)
    load_tile(e, plan.b, r.b)
    e.label(loop)
    e.wait(vmcnt=0)
    e(e.barrier())
    write_tile(e, plan.a, r.a)
    write_tile(e, plan.b, r.b)
    e.wait(lgkmcnt=0)
    e(e.barrier())
    e(isa.s_add_u32(r.counter, r.counter, 1))
    e(isa.s_cmp_lt_u32(r.counter, r.iters), isa.s_cbranch_scc0(no_prefetch))
    advance(e, r.a)
    advance(e, r.b)
    set_k_bound(e)
    load_tile(e, plan.a, r.a)
    load_tile(e, plan.b, r.b)
    e.label(no_prefetch)
    if mac:
        mac_compute_tile(e)
    else:
        compute_tile(e)
    e(isa.s_cmp_lt_u32(r.counter, r.iters), isa.s_cbranch_scc1(loop))
    e.label(end)
    if not mac:
        e.nops(MFMA_RESULT_WAIT)
