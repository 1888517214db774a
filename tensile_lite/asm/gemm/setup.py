"""Stage 1: kernel arguments and work distribution.

Loads the GEMM's arguments (inline, or for a grouped launch from its argument table after finding
the GEMM the workgroup belongs to, §4.4), rebuilds (tile0, tile1, batch) from the flattened 1-D
workgroup id the runtime launches on gfx9 (spec/epilogue_semantics.md §6.1; with the GSU slice for
split-K kernels, splitk.py), derives the loop counts
(alpha == 0 and K == 0 run no iteration), and sets up every address: buffer resources of A, B, C,
D at this workgroup's tile, and each thread's global-read, LDS-write and LDS-read addresses.

The tile order is the runtime's: WorkGroupMappingXCC and WorkGroupMapping from the header's
internalArgs1 (wgm.py); the summation starts at the DepthU tile StaggerU in internalArgs0 says
(stagger.py).
"""

from __future__ import annotations

from tensile_lite.asm.arith import add64, mul32x32_64, udiv_const, udiv_scalar
from tensile_lite.asm.gemm import splitk, stagger, wgm
from tensile_lite.asm.gemm.abi import HEADER_BYTES
from tensile_lite.asm.gemm.emit import OUT_OF_BOUNDS, Emitter
from tensile_lite.asm.gemm.grid import TTMP9, flatten_3d_grid
from tensile_lite.asm.gemm.layout import OperandRegs
from tensile_lite.asm.gemm.plan import OperandPlan
from tensile_lite.asm.operands import Reg

_LOAD_WIDTHS = (
    (16, "s_load_dwordx16"),
    (8, "s_load_dwordx8"),
    (4, "s_load_dwordx4"),
    (2, "s_load_dwordx2"),
    (1, "s_load_dword"),
)


def _load_block(e: Emitter, first: int, count: int, base: Reg, offset: int) -> None:
    """args[first:first + count] = the dwords at base + offset, with as few scalar loads as the
    destination's alignment allows (a load of n > 1 dwords starts at a multiple of min(n, 4))."""
    r = e.r
    pos, end = first, first + count
    while pos < end:
        for width, name in _LOAD_WIDTHS:
            if width <= end - pos and pos % min(width, 4) == 0:
                e(e.isa.op(name)(r.args[pos : pos + width], base, offset + (pos - first) * 4))
                pos += width
                break


def _end_if(e: Emitter, branch: str) -> None:
    """End the program when SCC says so (`branch` names the s_cbranch that skips the end)."""
    skip = e.new_label("Continue")
    e(e.isa.op(branch)(skip), e.isa.s_endpgm())
    e.label(skip)


def _ceil_tiles(e: Emitter, dst: Reg, size: Reg, tile: int, tmp: Reg, q: Reg) -> None:
    e(e.isa.s_add_u32(tmp, size, tile - 1))
    e(udiv_const(e.isa, dst, tmp, tile, q))


def _find_gemm(e: Emitter) -> None:
    """Grouped launch (argType 1 or 2): scan the table for the GEMM this workgroup's flattened id
    falls in, make the id local to it and load that GEMM's arguments (spec §4.4)."""
    isa, r, plan = e.isa, e.r, e.plan
    t = r.stmp
    count, stride, index, accum, tiles, tmp, q = t[0], t[1], t[2], t[3], t[4], t[5], t[6]
    cur = r.mask  # the current record's address
    header = r.args[0]
    user = e.new_label("UserArgs")
    found = e.new_label("GemmFound")
    scan = e.new_label("GemmScan")
    loaded = e.new_label("GemmArgsLoaded")
    e(isa.s_load_dwordx2(cur, r.kernarg, HEADER_BYTES))
    e(isa.s_and_b32(count, header, 0x3FFFFFFF), isa.s_lshr_b32(tmp, header, 30))
    # argType 1 records start after the wgTable; argType 2 structs at the pointer
    e(isa.s_lshl_b32(q, count, 2))
    e(isa.s_mov_b32(stride, plan.args.record_bytes), isa.s_cmp_eq_u32(tmp, 2))
    e(isa.s_cmov_b32(stride, plan.args.user_args_bytes), isa.s_cselect_b32(q, 0, q))
    e.wait(lgkmcnt=0)
    e(isa.s_add_u32(cur[0], cur[0], q), isa.s_addc_u32(cur[1], cur[1], 0))
    e(isa.s_mov_b32(index, 0), isa.s_mov_b32(accum, 0))
    e.label(scan)
    # the sizes lead both record kinds: M, N[, batch], K
    _load_block(e, 4, plan.args.num_sizes, cur, 0)
    e.wait(lgkmcnt=0)
    mt0, mt1 = plan.macro_tile
    # tile0 / tile1 are free until map_workgroup
    _ceil_tiles(e, tiles, r.arg("SizesFree0"), mt0, tmp, q)
    _ceil_tiles(e, r.tile1, r.arg("SizesFree1"), mt1, tmp, q)
    e(isa.s_mul_i32(tiles, tiles, r.tile1))
    if plan.batched:
        e(isa.s_mul_i32(tiles, tiles, r.arg("SizesFree2")))
    if r.split_k is not None:
        # the host launches GSU workgroups per tile (the header's GSU, whatever the argType)
        e(
            isa.s_and_b32(q, r.args[1], splitk.GSU_MASK),
            isa.s_max_u32(q, q, 1),
            isa.s_mul_i32(tiles, tiles, q),
        )
    e(isa.s_add_u32(accum, accum, tiles))
    e(isa.s_cmp_lt_u32(r.workgroup_id, accum), isa.s_cbranch_scc1(found))
    e(isa.s_add_u32(cur[0], cur[0], stride), isa.s_addc_u32(cur[1], cur[1], 0))
    e(isa.s_add_u32(index, index, 1), isa.s_cmp_lt_u32(index, count))
    e(isa.s_cbranch_scc1(scan), isa.s_endpgm())
    e.label(found)
    if r.gemm_index is not None:
        e(isa.s_mov_b32(r.gemm_index, index))
    e(isa.s_sub_u32(accum, accum, tiles), isa.s_sub_u32(r.workgroup_id, r.workgroup_id, accum))
    e(isa.s_lshr_b32(tmp, header, 30), isa.s_cmp_eq_u32(tmp, 2), isa.s_cbranch_scc1(user))
    _load_block(e, 4, r.args.count - 4, cur, 0)
    e(isa.s_branch(loaded))
    e.label(user)
    for first, offset, dwords in plan.args.user_runs:
        _load_block(e, first, dwords, cur, offset)
    if plan.epilogue.amax_d:
        # the user-arguments struct carries no amax output: none is written (amax.py)
        out = r.arg("AddrAmaxOut")
        e(isa.s_mov_b32(out[0], 0), isa.s_mov_b32(out[1], 0))
    e.label(loaded)
    e.wait(lgkmcnt=0)


def load_arguments(e: Emitter) -> None:
    """The header, then this GEMM's arguments into consecutive SGPRs: from the kernarg segment
    (argType 0, whatever gemm_count says, as upstream's kernels do) or from a grouped launch's
    table (argType 1 and 2)."""
    isa, r = e.isa, e.r
    grouped = e.new_label("GroupedArgs")
    done = e.new_label("ArgsLoaded")
    # with PreloadKernArgs the leading dwords are in args already (preload.enter)
    have = len(r.preload) if r.preload is not None else 0
    if have < 4:
        _load_block(e, have, 4 - have, r.kernarg, 4 * have)
        e.wait(lgkmcnt=0)
    if e.plan.arch.workgroup_id_source != "ttmp":
        # on the launch's flat id, before a grouped launch finds its GEMM (gfx12's ids are 3-D: none)
        wgm.xcc_remap(e, r.stmp[0:5])
    e(isa.s_lshr_b32(r.stmp[0], r.args[0], 30), isa.s_cmp_eq_u32(r.stmp[0], 0), isa.s_cbranch_scc0(grouped))
    if r.gemm_index is not None:
        e(isa.s_mov_b32(r.gemm_index, 0))
    rest = max(have, HEADER_BYTES // 4)
    if rest < r.args.count:
        _load_block(e, rest, r.args.count - rest, r.kernarg, 4 * rest)
        e.wait(lgkmcnt=0)
    e(isa.s_branch(done))
    e.label(grouped)
    _find_gemm(e)
    e.label(done)


def map_workgroup(e: Emitter) -> None:
    """(tile0, tile1, batch) from the flat workgroup id; workgroups past the last tile end at once."""
    isa, r, plan = e.isa, e.r, e.plan
    m, n = r.arg("SizesFree0"), r.arg("SizesFree1")
    t = r.stmp
    nwg0, nwg1, tiles, rem, tmp, q = t[0], t[1], t[2], t[3], t[4], t[5]
    # no tiles at all: nothing to do (the runtime launches none, but a kernel must not divide by 0)
    e(isa.s_cmp_eq_u32(m, 0))
    _end_if(e, "s_cbranch_scc0")
    e(isa.s_cmp_eq_u32(n, 0))
    _end_if(e, "s_cbranch_scc0")
    mt0, mt1 = plan.macro_tile
    e(isa.s_add_u32(tmp, m, mt0 - 1))
    e(udiv_const(isa, nwg0, tmp, mt0, q))
    e(isa.s_add_u32(tmp, n, mt1 - 1))
    e(udiv_const(isa, nwg1, tmp, mt1, q))
    e(isa.s_mul_i32(tiles, nwg0, nwg1))
    if plan.arch.workgroup_id_source == "ttmp":
        flatten_3d_grid(e, nwg0, tiles, tmp)
    vt = r.vtmp[0:4]
    if plan.batched:
        e(udiv_scalar(isa, r.batch, rem, r.workgroup_id, tiles, vt))
        e(isa.s_cmp_lt_u32(r.batch, r.arg("SizesFree2")))
        _end_if(e, "s_cbranch_scc1")
    else:
        e(isa.s_mov_b32(r.batch, 0), isa.s_mov_b32(rem, r.workgroup_id))
        e(isa.s_cmp_lt_u32(rem, tiles))
        _end_if(e, "s_cbranch_scc1")
    # wg1 = rem / nwg0, wg0 = rem % nwg0, then the runtime's WorkGroupMapping order
    e(udiv_scalar(isa, r.tile1, r.tile0, rem, nwg0, vt))
    wgm.swizzle(e, r.tile0, r.tile1, nwg0, nwg1, t[2:6])
    e.s_mul_const(r.tile0, r.tile0, mt0)
    e.s_mul_const(r.tile1, r.tile1, mt1)


def loop_counts(e: Emitter) -> None:
    """iters = ceil(K / DepthU), or 0 when alpha == 0 (A and B are then never read); full_iters =
    K / DepthU; edge = the output tile crosses M or N."""
    isa, r, plan = e.isa, e.r, e.plan
    k = r.arg("SizesSum0")
    du = plan.depth_u
    t = r.stmp
    e(isa.s_add_u32(t[0], k, du - 1))
    e(udiv_const(isa, r.iters, t[0], du, t[1]))
    e(udiv_const(isa, r.full_iters, k, du, t[1]))
    # alpha == +-0 skips the summation entirely (spec §1.1: NaN/Inf in A or B never propagate),
    # except where a gradient bias needs the sums regardless
    if not plan.epilogue.reads_operands_always:
        alpha = r.arg("alpha")
        # (an int32 alpha is zero only when every bit is: 0x80000000 is INT_MIN, not -0.0)
        if alpha.count == 2:
            # f64: zero when every bit but the sign is
            e(isa.s_and_b32(t[0], alpha[1], 0x7FFFFFFF), isa.s_or_b32(t[0], t[0], alpha[0]))
        else:
            e(isa.s_and_b32(t[0], alpha, 0xFFFFFFFF if plan.integer else 0x7FFFFFFF))
        e(isa.s_cmp_eq_u32(t[0], 0))
        e(isa.s_cselect_b32(r.iters, 0, r.iters))
    _edge(e)


def _edge(e: Emitter) -> None:
    """edge = the output tile crosses M or N (fewer than MT rows or columns left)."""
    isa, r, plan = e.isa, e.r, e.plan
    t = r.stmp
    mt0, mt1 = plan.macro_tile
    e(isa.s_sub_u32(t[0], r.arg("SizesFree0"), r.tile0))
    e(isa.s_cmp_lt_u32(t[0], mt0))
    e(isa.s_cselect_b32(t[1], 1, 0))
    e(isa.s_sub_u32(t[0], r.arg("SizesFree1"), r.tile1))
    e(isa.s_cmp_lt_u32(t[0], mt1))
    e(isa.s_cselect_b32(t[2], 1, 0))
    e(isa.s_or_b32(r.edge, t[1], t[2]))


def _strides(e: Emitter, name: str) -> tuple[Reg, Reg | None]:
    """(leading-dimension stride, batch stride) arguments of tensor `name` (elements)."""
    r = e.r
    ld = r.arg(f"stride{name}0")
    batch = r.arg(f"stride{name}1") if e.plan.batched else None
    return ld, batch


def _tensor_base(e: Emitter, dst: Reg, name: str, batch_stride: Reg | None, origin: Reg, bpe: int) -> None:
    """dst (pair) = pointer + (batch * batch_stride + origin) * bpe."""
    isa, r = e.isa, e.r
    t = r.stmp
    prod = t[0:2]
    if batch_stride is not None:
        e(mul32x32_64(isa, prod, r.batch, batch_stride))
        e(isa.s_add_u32(prod[0], prod[0], origin), isa.s_addc_u32(prod[1], prod[1], 0))
    else:
        e(isa.s_mov_b32(prod[0], origin), isa.s_mov_b32(prod[1], 0))
    if bpe > 1:
        e(isa.s_lshl_b64(prod, prod, bpe.bit_length() - 1))
    e(add64(isa, dst, r.arg(name), prod))


def operand_resources(e: Emitter, op: OperandPlan, o: OperandRegs) -> None:
    """Buffer resource of A or B at this tile, its per-DepthU advance, the byte stride of the
    strided dimension, the free-dimension bound and the guard flag.

    num_records is the bytes from the tile origin to the end of this batch's slice of the tensor,
    so whole vectors beyond the tensor read 0.
    """
    isa, r, plan = e.isa, e.r, e.plan
    ld, batch_stride = _strides(e, op.name)
    size_free = r.arg("SizesFree0" if op.name == "A" else "SizesFree1")
    origin_tile = r.tile0 if op.name == "A" else r.tile1
    k = r.arg("SizesSum0")
    t = r.stmp
    bpe = op.bpe
    shift = bpe.bit_length() - 1
    # origin offset (elements) of the tile: along the free dim, stride 1 or ld
    origin = t[2]
    if op.k_contiguous:
        e(isa.s_mul_i32(origin, origin_tile, ld))
    else:
        e(isa.s_mov_b32(origin, origin_tile))
    _tensor_base(e, o.srd[0:2], op.name, batch_stride, origin, bpe)
    # elements from the origin to the last element of the slice: (F - f0 - 1)*sF + (K - 1)*sK + 1
    e(isa.s_sub_u32(o.free_bound, size_free, origin_tile))
    e(isa.s_sub_u32(t[3], o.free_bound, 1))
    e(isa.s_sub_u32(t[4], k, 1))
    if op.k_contiguous:
        e(isa.s_mul_i32(t[3], t[3], ld))
    else:
        e(isa.s_mul_i32(t[4], t[4], ld))
    e(isa.s_add_u32(t[3], t[3], t[4]), isa.s_add_u32(t[3], t[3], 1))
    e(isa.s_lshl_b32(o.srd[2], t[3], shift))
    e(isa.s_mov_b32(o.srd[3], plan.arch.srd_word3))
    # advance per DepthU along K, and the byte stride of the strided (non-contiguous) dimension
    if op.k_contiguous:
        e(isa.s_mov_b32(o.increment, plan.depth_u * bpe))
    else:
        e(isa.s_mul_i32(o.increment, ld, plan.depth_u * bpe))
    e(isa.s_lshl_b32(o.stride, ld, shift))
    # Guarded (element-wise) loads are needed in edge tiles only when vectors run along the free
    # dimension and can straddle its end; vectors wholly past it read harmless data or zeros.
    if op.k_contiguous or op.vector == 1:
        e(isa.s_mov_b32(o.guard, 0))
    else:
        e(isa.s_cmp_lt_u32(o.free_bound, op.tile))
        e(isa.s_cselect_b32(t[0], 1, 0))
        e(isa.s_and_b32(t[1], size_free, op.vector - 1))
        e(isa.s_cmp_lg_u32(t[1], 0))
        e(isa.s_cselect_b32(t[1], 1, 0))
        e(isa.s_and_b32(o.guard, t[0], t[1]))


def output_resources(e: Emitter) -> None:
    """Buffer resources of C and D at this tile (origin tile0 + tile1 * ld)."""
    isa, r, plan = e.isa, e.r, e.plan
    t = r.stmp
    bpe = plan.dest_bpe
    shift = bpe.bit_length() - 1
    for name, srd in (("C", r.srd_c), ("D", r.srd_d)):
        ld, batch_stride = _strides(e, name)
        origin = t[2]
        e(isa.s_mul_i32(origin, r.tile1, ld), isa.s_add_u32(origin, origin, r.tile0))
        _tensor_base(e, srd[0:2], name, batch_stride, origin, bpe)
        # (M - tile0 - 1) + (N - tile1 - 1) * ld + 1 elements
        e(isa.s_sub_u32(t[3], r.arg("SizesFree1"), r.tile1), isa.s_sub_u32(t[3], t[3], 1))
        e(isa.s_mul_i32(t[3], t[3], ld))
        e(isa.s_sub_u32(t[4], r.arg("SizesFree0"), r.tile0))
        e(isa.s_add_u32(t[3], t[3], t[4]))
        e(isa.s_lshl_b32(srd[2], t[3], shift))
        e(isa.s_mov_b32(srd[3], plan.arch.srd_word3))
    if r.srd_e is not None:
        _e_resource(e, r.srd_e)


def _e_resource(e: Emitter, srd: Reg) -> None:
    """UseE: E's resource at the tile, like D's with E's own strides and element size."""
    isa, r, plan = e.isa, e.r, e.plan
    t = r.stmp
    bpe = plan.e_bpe
    ld = r.arg("StrideE0")
    batch_stride = r.arg("StrideE1") if plan.batched else None
    origin = t[2]
    e(isa.s_mul_i32(origin, r.tile1, ld), isa.s_add_u32(origin, origin, r.tile0))
    _tensor_base(e, srd[0:2], "E", batch_stride, origin, bpe)
    e(isa.s_sub_u32(t[3], r.arg("SizesFree1"), r.tile1), isa.s_sub_u32(t[3], t[3], 1))
    e(isa.s_mul_i32(t[3], t[3], ld))
    e(isa.s_sub_u32(t[4], r.arg("SizesFree0"), r.tile0))
    e(isa.s_add_u32(t[3], t[3], t[4]))
    e(isa.s_lshl_b32(srd[2], t[3], bpe.bit_length() - 1))
    e(isa.s_mov_b32(srd[3], plan.arch.srd_word3))


def thread_addresses(e: Emitter, op: OperandPlan, o: OperandRegs) -> None:
    """Per-thread coordinates and addresses for the global reads, LDS writes and LDS reads of one
    operand (see OperandPlan for the thread mapping)."""
    isa, r, plan = e.isa, e.r, e.plan
    v = r.vtmp
    tid = r.tid
    if op.o_fastest:
        # o = tid % o_size, c = (tid / o_size) * vw
        e(udiv_const(isa, v[1], tid, op.other_size, v[0], o.coord_o))
        e.v_mul_const(o.coord_c, v[1], op.vector)
    else:
        # c = (tid % cv) * vw, o = tid / cv
        e(udiv_const(isa, o.coord_o, tid, op.contiguous_size // op.vector, v[0], v[1]))
        e.v_mul_const(o.coord_c, v[1], op.vector)
    # global byte offset: c * bpe + o * stride_bytes (the contiguous dimension has unit stride)
    e(isa.v_mul_lo_u32(v[0], o.coord_o, o.stride))
    e.v_mul_const(v[1], o.coord_c, op.bpe)
    e(isa.v_add_u32(o.global_offset, v[0], v[1]))
    # LDS row = free index, column = k (k_rows: row = k, column = free index)
    row, col = (o.coord_o, o.coord_c) if op.k_contiguous or op.k_rows else (o.coord_c, o.coord_o)
    e.v_mul_const(v[0], row, op.lds_stride)
    e(isa.v_add_u32(v[0], v[0], col))
    e.v_mul_const(v[0], v[0], op.lds_bpe)
    e.v_add_const(o.lds_write, v[0], op.lds_base)
    # LDS read: row = wave_f * WT * mi + lane % mi, k = (lane / mi) * k_per_lane (lanes.py; with one
    # lane group along k, as on gfx11, every lane starts at k 0)
    lanes = plan.lanes
    e(isa.v_lshrrev_b32(v[0], lanes.wave_shift, tid))  # wave id
    if plan.lsu > 1:
        # LocalSplitU: wave = group * group_waves + the wave's place in its group; the group starts
        # at k = group * DepthU / lsu (v[7]: the group, then its byte offset in LDS)
        e(udiv_const(isa, v[7], v[0], plan.group_waves, v[2], v[1]))
        e(isa.v_mov_b32(v[0], v[1]))
        e.v_mul_const(v[7], v[7], plan.depth_u // plan.lsu * op.lds_bpe * (op.lds_stride if op.k_rows else 1))
        e(isa.v_add_u32(o.lds_read, op.lds_base, v[7]) if op.lds_base else isa.v_mov_b32(o.lds_read, v[7]))
    wg0 = plan.wave_group[0]
    if op.name == "A":
        e(udiv_const(isa, v[1], v[0], wg0, v[2], v[3]))  # v3 = wave % wg0
        wave_f = v[3]
    else:
        e(udiv_const(isa, v[1], v[0], wg0, v[2]))  # v1 = wave / wg0
        wave_f = v[1]
    e.v_mul_const(v[4], wave_f, op.wave_tile * op.mi_size)
    e(isa.v_and_b32(v[5], lanes.wave - 1, tid))  # lane
    if op.lane_row_divisor:
        # a MAC kernel's A: the lane's output row, lane / n (mac.py)
        e(udiv_const(isa, v[7], v[5], op.lane_row_divisor, v[2]))
    else:
        e(udiv_const(isa, v[6], v[5], op.mi_size, v[2], v[7]))  # v6 = lane / mi, v7 = lane % mi
    e(isa.v_add_u32(v[4], v[4], v[7]))
    # element offset of (row, k): row * stride + k, or k * stride + row for k_rows
    if not op.k_rows:
        e.v_mul_const(v[4], v[4], op.lds_stride)
    if op.k_groups > 1:
        assert op.k_groups == lanes.wave // op.mi_size  # lane / mi is then the group itself
        e.v_mul_const(v[6], v[6], op.k_per_lane * (op.lds_stride if op.k_rows else 1))
        e(isa.v_add_u32(v[4], v[4], v[6]))
    e.v_mul_const(v[4], v[4], op.lds_bpe)
    if plan.lsu > 1:
        e(isa.v_add_u32(o.lds_read, o.lds_read, v[4]))  # the group's k offset and LDS base are in already
    else:
        e.v_add_const(o.lds_read, v[4], op.lds_base)


def setup(e: Emitter) -> None:
    e(e.isa.v_mov_b32(e.r.oob, OUT_OF_BOUNDS))
    if e.plan.arch.workgroup_id_source == "ttmp":
        # gfx12 delivers workgroup ids in ttmp9 (x) and ttmp7 (y | z << 16), not in an SGPR
        e(e.isa.s_mov_b32(e.r.workgroup_id, TTMP9))
    load_arguments(e)
    split_k = e.r.split_k is not None
    if split_k:
        # GSU workgroups per tile, each summing its slice of K (splitk.py)
        splitk.map_workgroup(e)
        splitk.slice_k(e)
    else:
        map_workgroup(e)
    loop_counts(e)
    for op, o in ((e.plan.a, e.r.a), (e.plan.b, e.r.b)):
        operand_resources(e, op, o)
        if split_k:
            splitk.shift_operand(e, o)
        thread_addresses(e, op, o)
    stagger.start(e)
    output_resources(e)
    if split_k:
        splitk.output_resources(e)
