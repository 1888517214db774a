"""Split-K: GlobalSplitU > 1 with the MultipleBufferSingleKernel algorithm (the kernel reduces), or with
MultipleBuffer (the runtime's conversion kernel reduces, postgsu.py: the kernel only stores its slice).

The runtime launches GSU workgroups per output tile (spec/epilogue_semantics.md §5.4, §5.5, §6.1)
and reads the GSU value from the argument header (internalArgs bits 0-13), so a user's GSU
override is honoured. For GSU > 1 it passes the workspace in D's place and the real D as `dstD`, with
D's and C's strides packed (M, M x N) by the 2024 runtime and as they are by 7.x's (for the single kernel;
MultipleBuffer still gets packed ones): the workspace is addressed from the sizes, D and C with the
strides passed, so one kernel serves both; for GSU 1 the ordinary arguments. Per workgroup:

    map_workgroup   flat id -> (tile, batch, slice g), GSUWGMRR (bit 14) picking the order
    slice_k         slice g sums DepthU blocks [start, start + n) of K, contiguous (the coalesced
                    split): n = q + (g < r), start = q*g + min(g, r) with q, r = divmod(K / DepthU, GSU),
                    and the K remainder goes to g == (q ? GSU - 1 : r). SizesSum0 then holds the
                    slice's K and A/B start at it, so the main loop runs unchanged.
    reduce          (epilogue, GSU > 1) store the f32 partial tile into workspace slice g (upstream's
                    layout: element (m, n, b) of slice g at g*M*N*B + m + n*M + b*M*N), release,
                    count the arrival on the tile's Synchronizer counter; the workgroup that arrives
                    last acquires, sums slices 0..GSU-1 in order into the accumulators and falls
                    through to the ordinary epilogue, storing to dstD; the others end.

The slice a workgroup sums and the order of workgroups are private to the kernel (no second kernel
reads the workspace), so GSUC (bit 15) is not needed for correctness and is ignored. The counter
of tile (wg0, wg1, batch) is dword wg0 + wg1*nwg0 + batch*nwg0*nwg1 of the Synchronizer (upstream's
index of wave 0); `s_atomic_dec`-style wrapping (`buffer_atomic_dec` with GSU - 1) returns it to 0
after GSU arrivals, so the buffer never needs re-zeroing. The reduction order, and so the result, does
not depend on which workgroup arrives last.

MultipleBuffer: the runtime passes the workspace in D's (and C's) place with packed strides and no
extra arguments; with GSU > 1 each workgroup stores its slice (f32, or the exact int32 sums of an
integer kernel) in the same layout and ends, and the conversion kernel sums the slices and runs the
epilogue. With LocalSplitU the groups' partials are first added in LDS (lsu.reduce); the waves past
group 0 then end and group 0's waves store the slice.

An argType-2 launch (hipBLASLt's user arguments) carries no split-K arguments: its workgroups of
slices other than 0 end at once and slice 0 sums all of K into D, as with GSU 1.
"""

from __future__ import annotations

from collections.abc import Callable

from tensile_lite.asm.arith import add64, mul32x32_64, udiv_const, udiv_scalar
from tensile_lite.asm.gemm import lsu, wgm
from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.gemm.grid import flatten_3d_grid
from tensile_lite.asm.gemm.layout import OperandRegs
from tensile_lite.asm.gemm.plan import MULTIPLE_BUFFER, SINGLE_KERNEL
from tensile_lite.asm.modifiers import NO_CACHE, Buf, CachePolicy
from tensile_lite.asm.operands import EXEC, Reg
from tensile_lite.targets import get_target

GSU_MASK = 0x3FFF
GSU_ROUND_ROBIN_BIT = 14
ARG_TYPE_USER = 2

# Agent-scope release before the arrival counter and acquire after it (LLVM AMDGPUUsage memory model):
# gfx90a's L2 is coherent across the device, so only the CU's L1 is invalidated; gfx94x/gfx950 have one
# L2 per XCD, so dirty lines are written back first and stale ones invalidated after, and the atomic
# itself runs at device scope (sc1).
_SC1 = CachePolicy(slc=True)
_COHERENT_L2 = ((), ("buffer_wbinvl1_vol",), CachePolicy(glc=True))
_L2_PER_XCD = (("buffer_wbl2_sc1",), ("buffer_inv_sc1",), CachePolicy(glc=True, slc=True))


def memory_model(arch: str) -> tuple[tuple[str, ...], tuple[str, ...], CachePolicy]:
    """(release instructions, acquire instructions, the atomic's cache policy) of an agent-scope
    handoff between workgroups on `arch` (a CDNA target: RDNA builds no split-K reduction)."""
    return _L2_PER_XCD if get_target(arch).l2_per_xcd else _COHERENT_L2


def _regs(e: Emitter) -> tuple[Reg, Reg, Reg, Reg]:
    """(GSU, slice index, the tile's counter byte offset, slice start in DepthU blocks)."""
    sk = e.r.split_k
    assert sk is not None
    return sk[0], sk[1], sk[2], sk[3]


def _workspace(e: Emitter) -> Reg:
    """The workspace's resource during the reduction: A's, free once the main loop is done."""
    return e.r.a.srd


def _end_if(e: Emitter, branch: str) -> None:
    skip = e.new_label("Continue")
    e(e.isa.op(branch)(skip), e.isa.s_endpgm())
    e.label(skip)


def map_workgroup(e: Emitter) -> None:
    """(tile0, tile1, batch, slice) from the flat workgroup id; the slice splits wg1 as upstream's
    GSU.graWorkGroup does (GSUWGMRR 0: g = wg1 % GSU, 1: g = wg1 / nwg1)."""
    isa, r, plan = e.isa, e.r, e.plan
    gsu, g, counter, _ = _regs(e)
    m, n = r.arg("SizesFree0"), r.arg("SizesFree1")
    t = r.stmp
    nwg0, nwg1, tiles, rem, tmp, q = t[0], t[1], t[2], t[3], t[4], t[5]
    info0 = r.args[1]
    e(isa.s_cmp_eq_u32(m, 0))
    _end_if(e, "s_cbranch_scc0")
    e(isa.s_cmp_eq_u32(n, 0))
    _end_if(e, "s_cbranch_scc0")
    mt0, mt1 = plan.macro_tile
    e(isa.s_add_u32(tmp, m, mt0 - 1))
    e(udiv_const(isa, nwg0, tmp, mt0, q))
    e(isa.s_add_u32(tmp, n, mt1 - 1))
    e(udiv_const(isa, nwg1, tmp, mt1, q))
    # the launch's GSU (0 would be a host bug; treat it as 1 rather than divide by it)
    e(isa.s_and_b32(gsu, info0, GSU_MASK), isa.s_max_u32(gsu, gsu, 1))
    e(isa.s_mul_i32(tiles, nwg0, nwg1), isa.s_mul_i32(tmp, tiles, gsu))
    if plan.arch.workgroup_id_source == "ttmp":
        # gfx12's 3-D grid (nwg0, nwg1 x GSU, batch), made flat as on the other targets
        flatten_3d_grid(e, nwg0, tmp, rem)
    vt = r.vtmp[0:4]
    if plan.batched:
        e(udiv_scalar(isa, r.batch, rem, r.workgroup_id, tmp, vt))
        e(isa.s_cmp_lt_u32(r.batch, r.arg("SizesFree2")))
        _end_if(e, "s_cbranch_scc1")
    else:
        e(isa.s_mov_b32(r.batch, 0), isa.s_mov_b32(rem, r.workgroup_id))
        e(isa.s_cmp_lt_u32(rem, tmp))
        _end_if(e, "s_cbranch_scc1")
    # rem = wg0 + wg1' * nwg0 with wg1' in [0, nwg1 * GSU)
    e(udiv_scalar(isa, tmp, r.tile0, rem, nwg0, vt))
    round_robin = e.new_label("GsuRoundRobin")
    split = e.new_label("GsuSplit")
    e(isa.s_bitcmp1_b32(info0, GSU_ROUND_ROBIN_BIT), isa.s_cbranch_scc1(round_robin))
    e(udiv_scalar(isa, r.tile1, g, tmp, gsu, vt))
    e(isa.s_branch(split))
    e.label(round_robin)
    e(udiv_scalar(isa, g, r.tile1, tmp, nwg1, vt))
    e.label(split)
    # the tile's arrival counter: (wg0 + wg1 * nwg0 + batch * nwg0 * nwg1) dwords
    e(isa.s_mul_i32(counter, r.batch, tiles), isa.s_mul_i32(tmp, r.tile1, nwg0))
    e(isa.s_add_u32(counter, counter, tmp), isa.s_add_u32(counter, counter, r.tile0))
    e(isa.s_lshl_b32(counter, counter, 2))
    # the runtime's WorkGroupMapping order (every slice of a tile moves with it: the counter is the
    # tile's own, whatever order the tiles run in)
    wgm.swizzle(e, r.tile0, r.tile1, nwg0, nwg1, t[2:6])
    # user arguments have no workspace: slice 0 does the whole GEMM, the others end
    e(isa.s_lshr_b32(tmp, r.args[0], 30), isa.s_cmp_eq_u32(tmp, ARG_TYPE_USER))
    unsplit = e.new_label("GsuUnsplit")
    done = e.new_label("GsuMapped")
    e(isa.s_cbranch_scc1(unsplit), isa.s_branch(done))
    e.label(unsplit)
    e(isa.s_cmp_eq_u32(g, 0))
    _end_if(e, "s_cbranch_scc1")
    e(isa.s_mov_b32(gsu, 1))
    e.label(done)
    e.s_mul_const(r.tile0, r.tile0, mt0)
    e.s_mul_const(r.tile1, r.tile1, mt1)


def slice_k(e: Emitter) -> None:
    """SizesSum0 := the K of this workgroup's slice; its first DepthU block into the start register."""
    isa, r, plan = e.isa, e.r, e.plan
    gsu, g, _, start = _regs(e)
    k = r.arg("SizesSum0")
    du = plan.depth_u
    t = r.stmp
    blocks, q, rem, end, tmp = t[0], t[1], t[2], t[3], t[4]
    e(udiv_const(isa, blocks, k, du, tmp))
    e(udiv_scalar(isa, q, rem, blocks, gsu, r.vtmp[0:4]))
    # start = q * g + min(g, r); end = start + q + (g < r)
    e(isa.s_mul_i32(start, q, g), isa.s_min_u32(tmp, g, rem), isa.s_add_u32(start, start, tmp))
    e(isa.s_cmp_lt_u32(g, rem), isa.s_cselect_b32(tmp, 1, 0))
    e(isa.s_add_u32(end, start, q), isa.s_add_u32(end, end, tmp))
    e.s_mul_const(end, end, du)
    # the remainder's owner: GSU - 1 when every slice has a block, else the first slice without one
    e(isa.s_sub_u32(tmp, gsu, 1), isa.s_cmp_eq_u32(q, 0), isa.s_cselect_b32(tmp, rem, tmp))
    e(isa.s_cmp_eq_u32(g, tmp), isa.s_cselect_b32(end, k, end))
    e.s_mul_const(tmp, start, du)
    e(isa.s_sub_u32(k, end, tmp))


def shift_operand(e: Emitter, o: OperandRegs) -> None:
    """Move A's or B's resource to the slice's first DepthU block (its bound already counts the
    slice's K from there)."""
    start = _regs(e)[3]
    prod = e.r.stmp[0:2]
    e(mul32x32_64(e.isa, prod, start, o.increment))
    e(add64(e.isa, o.srd[0:2], o.srd[0:2], prod))


def output_resources(e: Emitter) -> None:
    """MultipleBufferSingleKernel with GSU > 1: D's resource moves from the workspace (D's place) to
    dstD at the same offset (both are D's place at this tile with the strides the call passes for D, which
    the workspace itself does not use: _workspace_resource). MultipleBuffer keeps the workspace."""
    isa, r = e.isa, e.r
    if e.plan.split_k != SINGLE_KERNEL:
        return
    gsu = _regs(e)[0]
    t = r.stmp
    done = e.new_label("SplitKResourcesDone")
    e(isa.s_cmp_le_u32(gsu, 1), isa.s_cbranch_scc1(done))
    d = r.arg("D")
    e(isa.s_sub_u32(t[0], r.srd_d[0], d[0]), isa.s_subb_u32(t[1], r.srd_d[1], d[1]))
    e(add64(isa, r.srd_d[0:2], r.arg("dstD"), t[0:2]))
    e.label(done)


def _workspace_resource(e: Emitter) -> None:
    """The workspace resource at this tile of slice g. The workspace is packed whatever strides the call
    passes for D and C (the 2024 runtime sends packed ones, 7.x D's and C's own for the single kernel:
    ContractionSolution.cpp, "Pass wsStride if it's not in MBSK mode"), so the tile's place in it comes
    from the sizes: element (tile0, tile1, batch) of slice g at tile0 + M * (tile1 + N * batch) + g slices
    of M x N x batch f32, in D's place (the workspace pointer both algorithms pass there)."""
    isa, r, plan = e.isa, e.r, e.plan
    _, g, _, _ = _regs(e)
    ws = _workspace(e)
    t = r.stmp
    m, n = r.arg("SizesFree0"), r.arg("SizesFree1")
    if plan.batched:
        e(isa.s_mul_i32(t[2], r.batch, n), isa.s_add_u32(t[2], t[2], r.tile1))
    else:
        e(isa.s_mov_b32(t[2], r.tile1))
    e(mul32x32_64(isa, t[0:2], t[2], m))
    e(isa.s_add_u32(t[0], t[0], r.tile0), isa.s_addc_u32(t[1], t[1], 0))
    e(isa.s_lshl_b64(t[0:2], t[0:2], 2))
    e(add64(isa, ws[0:2], r.arg("D"), t[0:2]))
    # bytes from the tile's origin to the end of its matrix: (N - tile1 - 1) * M + (M - tile0) elements
    e(isa.s_sub_u32(t[2], n, r.tile1), isa.s_sub_u32(t[2], t[2], 1), isa.s_mul_i32(t[2], t[2], m))
    e(isa.s_sub_u32(t[3], m, r.tile0), isa.s_add_u32(t[2], t[2], t[3]))
    e(isa.s_lshl_b32(ws[2], t[2], 2))
    e(isa.s_mov_b32(ws[3], r.srd_d[3]))
    _slice_bytes(e, t[2])
    e(mul32x32_64(isa, t[0:2], t[2], g))
    e(add64(isa, ws[0:2], ws[0:2], t[0:2]))


def _slice_bytes(e: Emitter, dst: Reg) -> None:
    """dst = M * N * batch * 4 (one workspace slice)."""
    isa, r = e.isa, e.r
    e(isa.s_mul_i32(dst, r.arg("SizesFree0"), r.arg("SizesFree1")))
    if e.plan.batched:
        e(isa.s_mul_i32(dst, dst, r.arg("SizesFree2")))
    e(isa.s_lshl_b32(dst, dst, 2))


# ---- epilogue side ---------------------------------------------------------------------------


def _quads(e: Emitter) -> list[int]:
    runs = e.plan.lanes.row_runs
    assert all(length == 4 for _, _, length in runs)
    return [row for _, row, _ in runs]


class _Lane:
    """Per-lane registers of the reduction, in the epilogue's working block (the epilogue lays its
    own out again afterwards)."""

    def __init__(self, e: Emitter) -> None:
        cd = e.plan.mfma.cd_regs
        blk = e.r.epilogue
        self.row, self.col, self.offset = blk[0], blk[1], blk[2]
        self.values = blk[4 : 4 + cd]
        self.loaded = blk[4 + cd : 4 + 2 * cd]
        rest = blk[4 + 2 * cd :]
        self.rows_left, self.limit, self.addr, self.t = rest[0], rest[1], rest[2], rest[3]


def _lane_coordinates(e: Emitter, w: _Lane) -> None:
    """The lane's first row and column in the tile, its f32 byte offset in a workspace slice, and
    the rows of M left below its first row."""
    isa, r, plan = e.isa, e.r, e.plan
    v = r.vtmp
    n = plan.mfma.n  # the lane's column is lane % n within its block
    wt0, wt1 = plan.wave_tile
    wg0 = plan.wave_group[0]
    lanes = plan.lanes
    e(isa.v_lshrrev_b32(v[0], lanes.wave_shift, r.tid), isa.v_and_b32(v[1], lanes.wave - 1, r.tid))
    e(udiv_const(isa, v[2], v[0], wg0, v[3], v[4]))  # v2 = wave / wg0, v4 = wave % wg0
    e(udiv_const(isa, v[5], v[1], n, v[3], v[6]))  # v5 = lane / n, v6 = lane % n
    e.v_mul_const(w.row, v[4], wt0 * plan.block_m)
    e.v_mul_const(v[5], v[5], lanes.row_step)
    e(isa.v_add_u32(w.row, w.row, v[5]))
    e.v_mul_const(w.col, v[2], wt1 * plan.block_n)
    e(isa.v_add_u32(w.col, w.col, v[6]))
    # the packed workspace's column stride is M (see _workspace_resource)
    e(isa.v_mul_lo_u32(v[0], w.col, r.arg("SizesFree0")), isa.v_add_u32(v[0], v[0], w.row))
    e(isa.v_lshlrev_b32(w.offset, 2, v[0]))
    t = r.stmp
    e(isa.s_sub_u32(t[0], r.arg("SizesFree0"), r.tile0))
    e(isa.v_sub_u32(w.rows_left, t[0], w.row))


def _block_column(e: Emitter, w: _Lane, t1: int, soff: Reg) -> None:
    """soff = the byte offset of block column t1 in a slice; w.limit = the lane's row limit there
    (rows_left if its column is inside N, else 0)."""
    isa, r, plan = e.isa, e.r, e.plan
    vcc = plan.arch.vcc
    t = r.stmp
    e(isa.s_mul_i32(soff, r.arg("SizesFree0"), t1 * plan.block_n * 4))
    e(isa.s_sub_u32(t[0], r.arg("SizesFree1"), r.tile1))
    e(isa.s_sub_i32(t[0], t[0], t1 * plan.block_n))
    e(isa.v_cmp_gt_i32(vcc, t[0], w.col))
    e(isa.v_cndmask_b32(w.limit, 0, w.rows_left, vcc))


def _block_rows(e: Emitter, t0: int) -> list[int]:
    plan = e.plan
    return [t0 * plan.block_m + row for row in plan.lanes.rows]


def _transfer(e: Emitter, w: _Lane, srd: Reg, regs: Reg, t0: int, soff: Reg, edge: bool, store: bool) -> None:
    """Store `regs` to (or load them from) one block of a slice: four rows per vector in full tiles,
    element by element with rows outside M x N pointed out of bounds in edge tiles."""
    isa, r, plan = e.isa, e.r, e.plan
    vcc = plan.arch.vcc
    if not edge:
        op = isa.buffer_store_dwordx4 if store else isa.buffer_load_dwordx4
        for q, row in enumerate(_quads(e)):
            mods = _mods(e, (t0 * plan.block_m + row) * 4, store)
            e(op(regs[4 * q : 4 * q + 4], w.offset, srd, soff, mods=mods))
        return
    e(isa.v_add_u32(w.addr, soff, w.offset))
    op = isa.buffer_store_dword if store else isa.buffer_load_dword
    for i, row in enumerate(_block_rows(e, t0)):
        e(isa.v_cmp_lt_i32(vcc, row, w.limit))
        e(isa.v_cndmask_b32(r.vtmp[0], r.oob, w.addr, vcc))
        e(op(regs[i], r.vtmp[0], srd, e.soff0, mods=_mods(e, row * 4, store)))


def _mods(e: Emitter, offset: int, store: bool) -> Buf:
    sc1 = store and e.plan.arch.force_store_sc1
    return Buf(offen=True, offset=offset, cache=_SC1 if sc1 else NO_CACHE)


def _blocks(e: Emitter) -> list[tuple[int, int, int]]:
    """(t0, t1, first accumulator) of every MFMA block of the wave, column by column."""
    plan = e.plan
    wt0, wt1 = plan.wave_tile
    cd = plan.mfma.cd_regs
    return [(t0, t1, (t0 * wt1 + t1) * cd) for t1 in range(wt1) for t0 in range(wt0)]


def _store_partials(e: Emitter, w: _Lane, edge: bool) -> None:
    r = e.r
    ws = _workspace(e)
    cd = e.plan.mfma.cd_regs
    soff = r.stmp[5]
    for t0, t1, base in _blocks(e):
        if t0 == 0:
            _block_column(e, w, t1, soff)
        e(e.acc_read(w.values[i], r.acc[base + i]) for i in range(cd))
        _transfer(e, w, ws, w.values, t0, soff, edge, store=True)
        # a store of more than 8 bytes must read its data before a VALU overwrites it
        e.nops(1)


def _sum_slice(e: Emitter, w: _Lane, edge: bool, first: bool) -> None:
    """acc (+)= the slice at the workspace resource, block by block."""
    isa, r = e.isa, e.r
    ws = _workspace(e)
    cd = e.plan.mfma.cd_regs
    soff = r.stmp[5]
    for t0, t1, base in _blocks(e):
        if t0 == 0:
            _block_column(e, w, t1, soff)
        dst = w.values if first else w.loaded
        _transfer(e, w, ws, dst, t0, soff, edge, store=False)
        e.wait(vmcnt=0)
        if not first:
            e(e.acc_read(w.values[i], r.acc[base + i]) for i in range(cd))
            # VALU reading an AGPR read's result: no extra wait on gfx9
            e(isa.v_add_f32(w.values[i], w.values[i], w.loaded[i]) for i in range(cd))
        e(e.acc_write(r.acc[base + i], w.values[i]) for i in range(cd))


def _both_shapes(e: Emitter, body: Callable[[bool], None]) -> None:
    """body(edge) for full tiles and for edge tiles, chosen by the edge flag at run time (every tile
    is an edge tile for layouts without runs of four rows)."""
    isa, r = e.isa, e.r
    if e.plan.lanes.run_length < 4:
        body(True)
        return
    edge = e.new_label("SplitKEdge")
    done = e.new_label("SplitKShapeDone")
    e(isa.s_cmp_lg_u32(r.edge, 0), isa.s_cbranch_scc1(edge))
    body(False)
    e(isa.s_branch(done))
    e.label(edge)
    body(True)
    e.label(done)


def _arrive(e: Emitter) -> None:
    """Count this workgroup's arrival on its tile's counter; every workgroup but the last ends."""
    isa, r, plan = e.isa, e.r, e.plan
    gsu, _, counter, _ = _regs(e)
    release, acquire, atomic = memory_model(plan.arch.name)
    t = r.stmp
    v = r.vtmp
    vcc = plan.arch.vcc
    # every wave's partial stores are complete before one lane of the workgroup releases them
    e.wait(vmcnt=0)
    e(e.barrier())
    e(isa.v_cmp_eq_u32(vcc, 0, r.tid), isa.s_and_saveexec_b64(r.mask, vcc))
    e(isa.op(name)() for name in release)
    e.wait(vmcnt=0)
    # the counter's resource in t[0:4] (the Synchronizer from its base, no bound needed beyond it)
    sync = r.arg("Synchronizer")
    e(
        isa.s_mov_b32(t[0], sync[0]),
        isa.s_mov_b32(t[1], sync[1]),
        isa.s_mov_b32(t[2], 0xFFFFFFFF),
        isa.s_mov_b32(t[3], plan.arch.srd_word3),
    )
    e(isa.s_sub_u32(t[4], gsu, 1), isa.v_mov_b32(v[1], t[4]), isa.v_mov_b32(v[0], counter))
    e(isa.buffer_atomic_dec(v[1], v[0], t[0:4], 0, mods=Buf(offen=True, cache=atomic)))
    e.wait(vmcnt=0)
    # the old value, for every wave: 1 means this arrival took the counter back to 0
    e(isa.v_mov_b32(v[2], 0), isa.ds_write_b32(v[2], v[1]))
    e.wait(lgkmcnt=0)
    e(isa.s_mov_b64(EXEC, r.mask), *e.barrier())
    e(isa.v_mov_b32(v[2], 0), isa.ds_read_b32(v[1], v[2]))
    e.wait(lgkmcnt=0)
    e(isa.v_readfirstlane_b32(t[4], v[1]), isa.s_cmp_eq_u32(t[4], 1))
    _end_if(e, "s_cbranch_scc1")
    e(isa.op(name)() for name in acquire)
    # later LDS writes (the epilogue's vectors) must not overtake the reads of the count
    e(e.barrier())


def reduce(e: Emitter) -> None:
    """For GSU > 1: partials out, then (single kernel) arrival, and in the last workgroup the sum of
    every slice in slice order in the accumulators, or (MultipleBuffer) the end; GSU 1 goes straight
    on to the epilogue."""
    isa, r = e.isa, e.r
    gsu, g, _, _ = _regs(e)
    ws = _workspace(e)
    t = r.stmp
    done = e.new_label("SplitKDone")
    e(isa.s_cmp_le_u32(gsu, 1), isa.s_cbranch_scc1(done))
    if e.plan.lsu > 1:
        # LocalSplitU (MultipleBuffer only, support.py): group 0 holds the workgroup's sums (lsu.reduce)
        lsu.end_others(e)
    _workspace_resource(e)
    w = _Lane(e)
    _lane_coordinates(e, w)
    _both_shapes(e, lambda edge: _store_partials(e, w, edge))
    if e.plan.split_k == MULTIPLE_BUFFER:
        e(isa.s_endpgm())
        e.label(done)
        return
    _arrive(e)
    # back to slice 0: ws -= g * slice bytes (t[6] keeps the slice size; t[0:2] the product)
    _slice_bytes(e, t[6])
    e(mul32x32_64(isa, t[0:2], t[6], g))
    e(isa.s_sub_u32(ws[0], ws[0], t[0]), isa.s_subb_u32(ws[1], ws[1], t[1]))
    loop = e.new_label("SplitKSum")
    counter = t[4]

    def sum_all(edge: bool) -> None:
        _sum_slice(e, w, edge, first=True)
        e(isa.s_mov_b32(counter, 1))
        e.label(loop if not edge else edge_loop)
        e(add64(isa, ws[0:2], ws[0:2], t[6]))
        _sum_slice(e, w, edge, first=False)
        e(isa.s_add_u32(counter, counter, 1), isa.s_cmp_lt_u32(counter, gsu))
        e(isa.s_cbranch_scc1(loop if not edge else edge_loop))

    edge_loop = e.new_label("SplitKSumEdge")
    _both_shapes(e, sum_all)
    # an AGPR written by a VALU is read by the epilogue's v_accvgpr_read: 2 wait states on gfx90a+
    e.nops(2)
    e.label(done)
