"""Stage 6c: the gradient bias from B (BGRADB: Gradient + UseBias + BiasSrc B), once per workgroup
before the stores (spec/epilogue_semantics.md §1.2):

    bias[n] = cvt(sum over k < K of f32(B[k, n, batch 0]))      n in the workgroup's MT1 columns

The raw B elements are summed (no alpha, scales or scale vectors) in f32, in a fixed order, and
written in the run-time `biasType` when it is one of BiasDataTypeList (another type writes nothing);
f16 by `v_cvt_f16_f32`, bf16 by round-to-nearest-even with NaN kept. Only the workgroups of M-tile 0
write, and of those only batch 0's: upstream writes the same columns from every batch, one of whose
outcomes this is, and the only deterministic one.

Where: B is read again here, by the workgroup's threads, instead of being summed from the main
loop's MFMA inputs as upstream's kernels do. The extra traffic is MT1 x K elements in 1 / nwg0 of
the workgroups; in exchange the sum is independent of the main loop's schedule, lane layout,
LocalSplitU, split-K slices and MAC or WMMA forms, and no register is held through the loop.

The threads split as G = threads / MT1 groups per column (one group when MT1 >= threads, then the
columns take several passes). Group g sums the K-chunks g, g + G, ... of V elements (V: the main
loop's load width along K, 1 when B is N-contiguous), guarded chunk by chunk (a chunk past K reads
nothing: its address is pointed out of the buffer), then the K % V elements of the remainder one by
one. The partial sums meet in LDS and the column's first thread adds them in group order. The
resource of the stores holds N elements, so columns past N are dropped.
"""

from __future__ import annotations

from tensile_lite.asm.arith import udiv_const
from tensile_lite.asm.gemm import setup
from tensile_lite.asm.gemm.convert import BF16_NAN, bf16_round
from tensile_lite.asm.gemm.emit import Emitter, store_cache
from tensile_lite.asm.modifiers import DS, Buf
from tensile_lite.asm.operands import EXEC, EXEC_LO, Reg
from tensile_lite.model import DataType

# B's element formats in memory whose elements this stage widens to f32
FORMATS = ("f32", "f16", "bf16", "fp8", "bf8")
# bias types it writes (the epilogue's compute type is f32)
OUTPUT_TYPES = (DataType.S, DataType.H, DataType.B)
# K-chunks in flight per lane and iteration, at most
MAX_UNROLL = 4
_LOADS = {1: "buffer_load_ubyte", 2: "buffer_load_ushort", 4: "buffer_load_dword", 8: "buffer_load_dwordx2",
          16: "buffer_load_dwordx4"}


def columns(mt1: int, threads: int) -> tuple[int, int, int]:
    """(columns per pass, groups per column, passes) for MT1 columns and `threads` threads."""
    per_pass = min(mt1, threads)
    return per_pass, threads // per_pass, -(-mt1 // per_pass)


def chunk_elements(e: Emitter) -> int:
    """V: elements per load along K (the main loop's vector when K is B's contiguous dimension)."""
    b = e.plan.b
    if not b.k_contiguous:
        return 1
    chunk = max(1, min(b.vector, 16 // b.bpe))
    assert chunk & (chunk - 1) == 0, "load widths are powers of two"
    return chunk


def _only(e: Emitter, threads: int) -> None:
    """exec = the threads below `threads` (the full mask saved in r.mask)."""
    isa, r = e.isa, e.r
    vcc = e.plan.arch.vcc
    mask = e.lane_mask(r.mask)
    e(isa.v_cmp_gt_u32(vcc, threads, r.tid))
    e(isa.s_and_saveexec_b64(mask, vcc) if len(mask) == 2 else isa.s_and_saveexec_b32(mask, vcc))


def _every(e: Emitter) -> None:
    mask = e.lane_mask(e.r.mask)
    e(e.isa.s_mov_b64(EXEC, mask) if len(mask) == 2 else e.isa.s_mov_b32(EXEC_LO, mask))


def _accumulate(e: Emitter, total: Reg, data: Reg, count: int) -> None:
    """total += the first `count` elements packed in `data` (B's format), widened to f32, in order."""
    isa, plan = e.isa, e.plan
    fmt, bpe = plan.b.mem_format, plan.b.bpe
    v = e.r.vtmp
    pair, high = v[0:2], v[2]
    per_reg = 4 // bpe if bpe < 4 else 1
    for i in range(-(-count // per_reg)):
        reg = data[i]
        left = min(per_reg, count - i * per_reg)
        if fmt == "f32":
            e(isa.v_add_f32(total, total, reg))
        elif fmt in ("f16", "bf16"):
            for half in range(left):
                if fmt == "f16":
                    if half:
                        e(isa.v_lshrrev_b32(high, 16, reg), isa.v_cvt_f32_f16(high, high))
                    else:
                        e(isa.v_cvt_f32_f16(high, reg))
                elif half:
                    e(isa.v_and_b32(high, 0xFFFF0000, reg))
                else:
                    e(isa.v_lshlrev_b32(high, 16, reg))
                e(isa.v_add_f32(total, total, high))
        else:
            widen = isa.op(f"v_cvt_pk_f32_{fmt}")
            for word in range(-(-left // 2)):
                src = reg
                if word:
                    e(isa.v_lshrrev_b32(high, 16, reg))
                    src = high
                e(widen(pair, src))
                for j in range(min(2, left - 2 * word)):
                    e(isa.v_add_f32(total, total, pair[j]))


def _address(e: Emitter, dst: Reg, k: Reg, column: Reg, bound: Reg) -> None:
    """dst = the byte offset of B[k, lane's column] from the resource, or out of bounds unless k < bound."""
    isa, r, plan = e.isa, e.r, e.plan
    vcc = plan.arch.vcc
    if plan.b.k_contiguous:
        e.v_mul_const(dst, k, plan.b.bpe)
    else:
        e(isa.v_mul_lo_u32(dst, k, r.b.stride))
    e(isa.v_add_u32(dst, dst, column))
    e(isa.v_cmp_gt_u32(vcc, bound, k))
    e(isa.v_cndmask_b32(dst, r.oob, dst, vcc))


def _store(e: Emitter, total: Reg, address: Reg, dt: DataType) -> None:
    isa, r, plan = e.isa, e.r, e.plan
    srd = r.a.srd
    mods = Buf(offen=True, cache=store_cache(plan.arch))
    if dt is DataType.S:
        e(isa.buffer_store_dword(total, address, srd, e.soff0, mods=mods))
    elif dt is DataType.H:
        e(isa.v_cvt_f16_f32(total, total))
        e(isa.buffer_store_short(total, address, srd, e.soff0, mods=mods))
    else:
        v = r.vtmp
        e(isa.s_movk_i32(r.stmp[6], 0x7FFF), isa.v_mov_b32(v[1], BF16_NAN))
        bf16_round(e, total, v[0], r.stmp[6], v[1])
        e(isa.buffer_store_short_d16_hi(total, address, srd, e.soff0, mods=mods))


def _lane_column(e: Emitter, group: Reg, column: Reg, per_pass: int) -> None:
    """group = tid / per_pass, column = tid % per_pass."""
    e(udiv_const(e.isa, group, e.r.tid, per_pass, e.r.vtmp[2], column))


def _sum_column(e: Emitter, total: Reg, data: list[Reg], column: Reg, group: Reg, first_k: Reg) -> None:
    """total = the lane's share of its column's sum: whole chunks g, g + G, ..., then the remainder."""
    isa, r, plan = e.isa, e.r, e.plan
    v = r.vtmp
    groups = columns(plan.macro_tile[1], plan.num_threads)[1]
    chunk = chunk_elements(e)
    unroll = len(data)
    k, addr = v[3], v[4]
    base, full, size_k = r.counter, r.k_bound, r.arg("SizesSum0")
    load = isa.op(_LOADS[chunk * plan.b.bpe])
    e.v_mul_const(first_k, group, chunk)
    e(isa.v_mov_b32(total, 0))
    loop, tail = e.new_label("BiasGradLoop"), e.new_label("BiasGradTail")
    e(isa.s_mov_b32(base, 0), isa.s_cmp_eq_u32(full, 0), isa.s_cbranch_scc1(tail))
    e.label(loop)
    for u in range(unroll):
        e(isa.v_add_u32(k, base, first_k))
        e.v_add_const(k, k, u * groups * chunk)
        _address(e, addr, k, column, full)
        e(load(data[u] if data[u].count > 1 else data[u][0], addr, r.b.srd, e.soff0, mods=Buf(offen=True)))
    e.wait(vmcnt=0)
    for u in range(unroll):
        _accumulate(e, total, data[u], chunk)
    e(isa.s_add_u32(base, base, unroll * groups * chunk), isa.s_cmp_lt_u32(base, full))
    e(isa.s_cbranch_scc1(loop))
    e.label(tail)
    if chunk == 1:
        return
    # the K % V elements after the whole chunks: element full + group + i * G
    one = isa.op(_LOADS[plan.b.bpe])
    flat = [reg[j] for reg in data for j in range(reg.count)]
    steps = -(-(chunk - 1) // groups)
    assert steps <= len(flat)
    for i in range(steps):
        e(isa.v_add_u32(k, full, group))
        e.v_add_const(k, k, i * groups)
        _address(e, addr, k, column, size_k)
        e(one(flat[i], addr, r.b.srd, e.soff0, mods=Buf(offen=True)))
    e.wait(vmcnt=0)
    for i in range(steps):
        _accumulate(e, total, flat[i], 1)


def _output_resource(e: Emitter, dt: DataType) -> None:
    """A's resource becomes the bias: N elements of `dt` from the pointer."""
    isa, r = e.isa, e.r
    srd, bias = r.a.srd, r.arg("bias")
    e(isa.s_mov_b32(srd[0], bias[0]), isa.s_mov_b32(srd[1], bias[1]))
    e.s_mul_const(srd[2], r.arg("SizesFree1"), dt.num_bytes)
    e(isa.s_mov_b32(srd[3], e.plan.arch.srd_word3))


def write_from_b(e: Emitter) -> None:
    """The bias of the workgroup's columns, when it is M-tile 0 of batch 0, the pointer is not null and
    biasType is one the kernel writes."""
    isa, r, plan = e.isa, e.r, e.plan
    v = r.vtmp
    blk = r.epilogue
    threads = plan.num_threads
    per_pass, groups, passes = columns(plan.macro_tile[1], threads)
    used = per_pass * groups
    regs = max(1, chunk_elements(e) * plan.b.bpe // 4)
    total, other = blk[0], blk[1]
    # loaded chunks from an even register: 64- and 128-bit loads need aligned tuples
    unroll = max(1, min(MAX_UNROLL, (len(blk) - 2) // regs))
    data = [blk[2 + u * regs:2 + (u + 1) * regs] for u in range(unroll)]
    group, first_k, column, addr = v[7], v[6], v[5], v[4]
    types = [dt for dt in plan.epilogue.bias_types if dt in OUTPUT_TYPES]
    skip, go = e.new_label("BiasGradSkip"), e.new_label("BiasGradGo")
    e(isa.s_cmp_eq_u64(r.arg("bias"), 0), isa.s_cbranch_scc1(skip))
    e(isa.s_cmp_lg_u32(r.tile0, 0), isa.s_cbranch_scc1(skip))
    if plan.batched:
        e(isa.s_cmp_lg_u32(r.batch, 0), isa.s_cbranch_scc1(skip))
    for dt in types:
        e(isa.s_cmp_eq_u32(r.arg("biasType"), dt.value), isa.s_cbranch_scc1(go))
    e(isa.s_branch(skip))
    e.label(go)
    # B's resource at this tile again (the main loop advanced it); K rounded down to whole chunks
    setup.operand_resources(e, plan.b, r.b)
    e(isa.s_and_b32(r.k_bound, r.arg("SizesSum0"), (0xFFFFFFFF ^ (chunk_elements(e) - 1))))
    # every wave is past its last main-loop LDS read before LDS is reused
    e.wait(lgkmcnt=0)
    e(e.barrier())
    for p in range(passes):
        if used < threads:
            _only(e, used)
        _lane_column(e, group, column, per_pass)
        e.v_add_const(column, column, p * per_pass)
        if plan.b.k_contiguous:
            e(isa.v_mul_lo_u32(column, column, r.b.stride))
        else:
            e.v_mul_const(column, column, plan.b.bpe)
        _sum_column(e, total, data, column, group, first_k)
        # the groups' sums meet in LDS, slot column * G + group
        _lane_column(e, group, column, per_pass)
        e.v_mul_const(column, column, groups)
        e(isa.v_add_u32(addr, column, group), isa.v_lshlrev_b32(addr, 2, addr))
        e(isa.ds_write_b32(addr, total))
        e.wait(lgkmcnt=0)
        if used < threads:
            _every(e)
        e(e.barrier())
        # the column's first thread adds its G slots in group order, converts and stores
        _only(e, per_pass)
        e.v_mul_const(addr, r.tid, groups * 4)
        e(isa.ds_read_b32(total, addr))
        for g in range(1, groups):
            e(isa.ds_read_b32(other, addr, mods=DS(offset=4 * g)))
            e.wait(lgkmcnt=0)
            e(isa.v_add_f32(total, total, other))
        e.wait(lgkmcnt=0)
        e(isa.v_add_u32(column, r.tile1, r.tid))
        e.v_add_const(column, column, p * per_pass)
        done = e.new_label("BiasGradStored")
        labels = [e.new_label(f"BiasGrad{dt.letter}") for dt in types]
        for dt, label in zip(types, labels, strict=True):
            e(isa.s_cmp_eq_u32(r.arg("biasType"), dt.value), isa.s_cbranch_scc1(label))
        for dt, label in zip(types, labels, strict=True):
            e.label(label)
            _output_resource(e, dt)
            e.v_mul_const(addr, column, dt.num_bytes)
            _store(e, total, addr, dt)
            e(isa.s_branch(done))
        e.label(done)
        _every(e)
        # every slot is read before the next pass, or a later stage, writes LDS
        e.wait(lgkmcnt=0)
        e(e.barrier())
    e.label(skip)
