"""Stage 6: the fused epilogue, converted to the destination type and stored.

Per element, in f32, in upstream's order (spec/epilogue_semantics.md §1.1, GSU == 1):

    t = alpha' * acc                       alpha' = alpha * scaleA * scaleB (the ScaleAB feature)
    t = t * scaleA[m]; t = t * scaleB[n]   ScaleAB Vector
    t = t * scaleAlphaVec[f]               f = m or n (the factor dimension)
    t = fma(C, beta', t)                   only when beta' has non-zero bits (+0.0 never reads C)
    t = t + bias[f]
    E = cvt_E(t)                           UseE (e_output.py)
    t = act(t)                             run-time activationType of an `all`/`hipblaslt_all` kernel
    amax = max(amax, |t|)                  OutputAmaxD (amax.py: reduced over the GEMM at the end)
    t = t * scaleD
    D = cvt(t)                             f16: hardware RNE; bf16: RNE in software with NaN kept (§3)

Four variants are selected per workgroup: full tile or edge tile, times beta zero or not.

Accumulator register r of lane l holds column l % n of its block and row row_step * (l / n) + rows[r]
(lanes.py; on CDNA 4 * (l / n) + (r % 4) + (r / 4) * 4 * (64 / n), spec/matrix_instructions.md §3.2):
each run of four registers is four consecutive rows of one column, one vector in memory since rows
are D's contiguous dimension, and one 16-byte read of an M-vector staged in LDS. Full tiles store
those vectors; edge tiles, and every tile where runs are shorter than four (gfx11's WMMA holds
every other row), store element by element, with elements outside M x N pointed past every buffer
so their stores are dropped (and their C loads read 0).
"""

from __future__ import annotations

import attrs

from tensile_lite.asm.arith import udiv_const
from tensile_lite.asm.gemm import e_output, integer, lsu, splitk
from tensile_lite.asm.gemm.convert import (
    BF16_NAN,
    CLASS_NAN_INF,
    bf16_round,
    f8_to_f32,
    pack_f8,
    saturate_f8,
)
from tensile_lite.asm.gemm.emit import Emitter, store_cache
from tensile_lite.asm.gemm.epi import order as epi
from tensile_lite.asm.gemm.epi.base import AFTER_C, BEFORE_C
from tensile_lite.asm.gemm.features import DIM_M, DIM_N, DIM_RUNTIME, EpilogueFeatures, VectorRegion
from tensile_lite.asm.gemm.layout import COMMON_EPILOGUE_REGISTERS
from tensile_lite.asm.gemm.vectors import stage_vectors
from tensile_lite.asm.modifiers import DS, Buf
from tensile_lite.asm.operands import Label, Reg, Special
from tensile_lite.model import DataType


class Regs:
    """The epilogue's working registers, carved out of the map's epilogue block: the common ones, then
    the active features' by name (epi/)."""

    def __init__(self, e: Emitter) -> None:
        cd = e.plan.mfma.cd_regs
        blk = e.r.epilogue
        self.row = blk[0]          # lane's first row within the tile
        self.col = blk[1]          # lane's column within the tile
        self.off_d = blk[2]        # lane's byte offset into the D tile
        self.off_c = blk[3]        # ... and into the C tile
        self.values = blk[4:4 + cd]
        self.c = blk[4 + cd:4 + 2 * cd]   # C values, staged vector values, packed output
        rest = blk[4 + 2 * cd:]
        self.rows_left = rest[0]   # rows of M left below the lane's first row (signed)
        self.addr_c = rest[1]
        self.addr_d = rest[2]
        self.t = rest[3]           # scratch (C conversion, bf16 rounding, activation)
        self.nan = rest[4]         # the bf16 NaN pattern
        names = epi.gemm_registers(e.plan.epilogue)
        self.named = {name: rest[COMMON_EPILOGUE_REGISTERS + i] for i, name in enumerate(names)}

    def __getitem__(self, name: str) -> Reg:
        """A feature's register by the name it declared."""
        return self.named[name]


def _quads(e: Emitter) -> list[int]:
    """Row offset of each run of four accumulator registers within a block (full-tile layouts)."""
    runs = e.plan.lanes.row_runs
    assert all(length == 4 and first == 4 * g for g, (first, _, length) in enumerate(runs))
    return [row for _, row, _ in runs]


def _lane_coordinates(e: Emitter, w: Regs) -> None:
    isa, r, plan = e.isa, e.r, e.plan
    v = r.vtmp
    n = plan.mfma.n  # the lane's column is lane % n within its block
    wt0, wt1 = plan.wave_tile
    wg0 = plan.wave_group[0]
    lanes = plan.lanes
    e(isa.v_lshrrev_b32(v[0], lanes.wave_shift, r.tid))        # wave
    e(isa.v_and_b32(v[1], lanes.wave - 1, r.tid))               # lane
    e(udiv_const(isa, v[2], v[0], wg0, v[3], v[4]))             # v2 = wave / wg0, v4 = wave % wg0
    e(udiv_const(isa, v[5], v[1], n, v[3], v[6]))               # v5 = lane / n, v6 = lane % n
    e.v_mul_const(w.row, v[4], wt0 * plan.block_m)
    e.v_mul_const(v[5], v[5], lanes.row_step)
    e(isa.v_add_u32(w.row, w.row, v[5]))
    e.v_mul_const(w.col, v[2], wt1 * plan.block_n)
    e(isa.v_add_u32(w.col, w.col, v[6]))
    bpe = plan.dest_bpe
    for off, name in ((w.off_d, "D"), (w.off_c, "C")):
        e(isa.v_mul_lo_u32(v[0], w.col, r.arg(f"stride{name}0")))
        e(isa.v_add_u32(v[0], v[0], w.row))
        e.v_mul_const(off, v[0], bpe)
    if plan.vectors:
        e(isa.v_lshlrev_b32(w["lds_row"], 2, w.row), isa.v_lshlrev_b32(w["lds_col"], 2, w.col))
    for f in epi.active(plan.epilogue):
        f.gemm_lane_setup(e, w)
    # rows left below the lane's first row: M - tile0 - row (signed)
    t = r.stmp
    e(isa.s_sub_u32(t[0], r.arg("SizesFree0"), r.tile0))
    e(isa.v_sub_u32(w.rows_left, t[0], w.row))


def _column_offsets(e: Emitter, t1: int) -> tuple[Reg | Special | int, Reg | Special | int]:
    """soffsets (bytes) of block column t1 in D and C."""
    isa, r, plan = e.isa, e.r, e.plan
    if t1 == 0:
        return e.soff0, e.soff0
    cols = t1 * plan.block_n
    out = []
    for name, reg in (("D", r.stmp[4]), ("C", r.stmp[5])):
        e(isa.s_mul_i32(reg, r.arg(f"stride{name}0"), cols * plan.dest_bpe))
        out.append(reg)
    return out[0], out[1]


def _c_to_f32(e: Emitter, dst: Reg, c: Reg, half: int) -> Reg:
    """C element `half` of register c as f32 in dst (f32 C is used in place)."""
    isa, dt = e.isa, e.plan.dest_type
    if dt is DataType.S:
        return c
    if dt.is_8bit_float:
        return f8_to_f32(e, c, half, dt)   # `half` is the byte here
    if dt is DataType.H:
        if half:
            e(isa.v_lshrrev_b32(dst, 16, c), isa.v_cvt_f32_f16(dst, dst))
        else:
            e(isa.v_cvt_f32_f16(dst, c))
        return dst
    # bf16: the 16 bits are the top of an f32
    if half:
        e(isa.v_and_b32(dst, 0xFFFF0000, c))
    else:
        e(isa.v_lshlrev_b32(dst, 16, c))
    return dst


def _alpha(e: Emitter, w: Regs, count: int) -> None:
    alpha = e.r.arg("alpha")
    if e.plan.integer:
        integer.scale(e, [w.values[i] for i in range(count)], alpha)
        return
    for i in range(count):
        e(e.isa.v_mul_f32(w.values[i], alpha, w.values[i]))


def _add_beta_c(e: Emitter, w: Regs, c_regs: list[tuple[Reg, int]]) -> None:
    """values = fma(C, beta', values): one rounding."""
    beta = e.r.arg("beta")
    if e.plan.integer:
        for i, (c, byte) in enumerate(c_regs):
            integer.add_beta_c(e, w.values[i], beta, c, byte if e.plan.dest_bpe == 1 else None, w.t)
        return
    for i, (c, half) in enumerate(c_regs):
        e(e.isa.v_fmac_f32(w.values[i], beta, _c_to_f32(e, w.t, c, half)))


def _apply_vector(e: Emitter, w: Regs, region: VectorRegion, t0: int, t1: int, add: bool) -> None:
    """values (op)= the staged vector at each element's row or column (op: * or +)."""
    if region.dim == DIM_RUNTIME:
        along_n = e.new_label("VecN")
        done = e.new_label("VecDone")
        e(e.isa.s_cmp_lg_u32(e.r.arg("factorDim"), 0), e.isa.s_cbranch_scc1(along_n))
        _apply_along(e, w, region, DIM_M, t0, t1, add)
        e(e.isa.s_branch(done))
        e.label(along_n)
        _apply_along(e, w, region, DIM_N, t0, t1, add)
        e.label(done)
    else:
        _apply_along(e, w, region, region.dim, t0, t1, add)


def _apply_along(e: Emitter, w: Regs, region: VectorRegion, dim: int, t0: int, t1: int, add: bool) -> None:
    isa, plan = e.isa, e.plan
    cd = plan.mfma.cd_regs
    if plan.integer:
        op = isa.v_add_u32 if add else isa.v_mul_lo_u32
    else:
        op = isa.v_add_f32 if add else isa.v_mul_f32
    if dim == DIM_M:
        reads = {4: isa.ds_read_b128, 2: isa.ds_read_b64, 1: isa.ds_read_b32}
        for first, row, length in plan.lanes.row_runs:
            offset = region.lds_offset + (t0 * plan.block_m + row) * 4
            e(reads[length](w.c[first:first + length], w["lds_row"], mods=DS(offset=offset)))
        e.wait(lgkmcnt=0)
        e(op(w.values[i], w.c[i], w.values[i]) for i in range(cd))
    else:
        offset = region.lds_offset + t1 * plan.block_n * 4
        e(isa.ds_read_b32(w.c[0], w["lds_col"], mods=DS(offset=offset)))
        e.wait(lgkmcnt=0)
        e(op(w.values[i], w.c[0], w.values[i]) for i in range(cd))


@attrs.frozen(slots=True)
class Step:
    """What an epilogue feature's GEMM step reads: the emitter, the working registers, the block
    (t0, t1), on edge tiles each value's row and the lane's row limit (`guard`: elements outside
    the problem are not stored to E and add nothing to amax), and the block column's soffset in E."""

    e: Emitter
    w: Regs
    t0: int
    t1: int
    guard: tuple[list[int], Reg] | None = None
    soff_e: Reg | Special | int = 0

    @property
    def feat(self) -> EpilogueFeatures:
        return self.e.plan.epilogue

    @property
    def values(self) -> list[Reg]:
        return [self.w.values[i] for i in range(self.e.plan.mfma.cd_regs)]

    def apply_vector(self, name: str, add: bool) -> None:
        """values (op)= the staged vector `name` at each element's row or column (op: + or *)."""
        for region in self.e.plan.vectors:
            if region.name == name:
                _apply_vector(self.e, self.w, region, self.t0, self.t1, add)


def _before_c(e: Emitter, w: Regs, t0: int, t1: int) -> None:
    """alpha and the features' steps before beta * C (the scale vectors)."""
    _alpha(e, w, e.plan.mfma.cd_regs)
    step = Step(e, w, t0, t1)
    for f in epi.steps(e.plan.epilogue, BEFORE_C):
        f.gemm_step(step)


def _after_c(e: Emitter, w: Regs, t0: int, t1: int, guard: tuple[list[int], Reg] | None = None,
             soff_e: Reg | Special | int = 0) -> None:
    """The features' steps after beta * C (bias, E, activation, amax, scaleD)."""
    step = Step(e, w, t0, t1, guard, soff_e)
    for f in epi.steps(e.plan.epilogue, AFTER_C):
        f.gemm_step(step)


def _store_mods(e: Emitter, offset: int) -> Buf:
    """Modifiers of a D store: sc1 where the target needs it on every store (arch table)."""
    return Buf(offen=True, offset=offset, cache=store_cache(e.plan.arch))


def _full_block(e: Emitter, w: Regs, t0: int, t1: int, beta: bool, soff_d: Reg | Special | int,
                soff_c: Reg | Special | int, soff_e: Reg | Special | int) -> None:
    isa, r, plan = e.isa, e.r, e.plan
    cd = plan.mfma.cd_regs
    bpe = plan.dest_bpe
    wt1 = plan.wave_tile[1]
    base = (t0 * wt1 + t1) * cd
    quads = _quads(e)
    e(e.acc_read(w.values[i], r.acc[base + i]) for i in range(cd))
    _before_c(e, w, t0, t1)
    if beta:
        load = {4: isa.buffer_load_dwordx4, 2: isa.buffer_load_dwordx2, 1: isa.buffer_load_dword}[bpe]
        per = 4 * bpe // 4
        for g, row in enumerate(quads):
            offset = (t0 * plan.block_m + row) * bpe
            e(load(w.c[g * per:(g + 1) * per], w.off_c, r.srd_c, soff_c, mods=Buf(offen=True, offset=offset)))
        e.wait(vmcnt=0)
        c_regs: list[tuple[Reg, int]] = []
        for i in range(cd):
            g, j = divmod(i, 4)
            c_regs.append((w.c[g * per + j * bpe // 4], j % (4 // bpe)))
        _add_beta_c(e, w, c_regs)
    _after_c(e, w, t0, t1, soff_e=soff_e)
    dt = plan.dest_type
    if dt in (DataType.S, DataType.I):
        out = w.values
    elif dt is DataType.I8:
        for i in range(cd):
            integer.saturate_i8(e, w.values[i])
        for g in range(cd // 4):
            integer.pack_i8(e, w.c[g], [w.values[4 * g + j] for j in range(4)])
        out = w.c
    elif dt is DataType.H:
        for i in range(cd):
            e(isa.v_cvt_f16_f32(w.values[i], w.values[i]))
        for i in range(cd // 2):
            e(isa.v_pack_b32_f16(w.c[i], w.values[2 * i], w.values[2 * i + 1]))
        out = w.c
    elif dt.is_8bit_float:
        for i in range(cd):
            saturate_f8(e, w.values[i], w.t, r.stmp[6], dt)
        for i in range(cd // 2):
            pack_f8(e, w.c[i // 2], w.values[2 * i], w.values[2 * i + 1], i % 2, dt)
        out = w.c
    else:
        for i in range(cd):
            bf16_round(e, w.values[i], w.t, r.stmp[6], w.nan)
        for i in range(cd // 2):
            lo, hi = w.values[2 * i], w.values[2 * i + 1]
            e(isa.v_lshrrev_b32(lo, 16, lo), isa.v_and_b32(hi, 0xFFFF0000, hi), isa.v_or_b32(w.c[i], lo, hi))
        out = w.c
    store = {4: isa.buffer_store_dwordx4, 2: isa.buffer_store_dwordx2, 1: isa.buffer_store_dword}[bpe]
    per = 4 * bpe // 4
    for g, row in enumerate(quads):
        offset = (t0 * plan.block_m + row) * bpe
        e(store(out[g * per:(g + 1) * per], w.off_d, r.srd_d, soff_d, mods=_store_mods(e, offset)))
    if per > 2:
        # a store of more than 8 bytes must read its data before a VALU may overwrite it
        e.nops(1)


def _edge_block(e: Emitter, w: Regs, t0: int, t1: int, beta: bool, soff_d: Reg | Special | int,
                soff_c: Reg | Special | int, soff_e: Reg | Special | int) -> None:
    isa, r, plan = e.isa, e.r, e.plan
    vcc = plan.arch.vcc
    cd = plan.mfma.cd_regs
    bpe = plan.dest_bpe
    wt1 = plan.wave_tile[1]
    base = (t0 * wt1 + t1) * cd
    rows = [t0 * plan.block_m + row for row in plan.lanes.rows]
    # the lane's row limit (vtmp[1]): rows_left if the block's column is inside N, else nothing
    limit = r.vtmp[1]
    t = r.stmp
    e(isa.s_sub_u32(t[0], r.arg("SizesFree1"), r.tile1))
    e(isa.s_sub_i32(t[0], t[0], t1 * plan.block_n))
    e(isa.v_cmp_gt_i32(vcc, t[0], w.col))
    e(isa.v_cndmask_b32(limit, 0, w.rows_left, vcc))
    # addresses of the block column
    columns = [(w.addr_d, w.off_d, soff_d), (w.addr_c, w.off_c, soff_c)]
    if plan.epilogue.use_e:
        columns.append((w["addr_e"], w["off_e"], soff_e))
    for addr, off, soff in columns:
        if not isinstance(soff, Reg):
            e(isa.v_mov_b32(addr, off))
        else:
            e(isa.v_add_u32(addr, soff, off))
    e(e.acc_read(w.values[i], r.acc[base + i]) for i in range(cd))
    _before_c(e, w, t0, t1)
    if beta:
        load = {4: isa.buffer_load_dword, 2: isa.buffer_load_ushort, 1: isa.buffer_load_ubyte}[bpe]
        c_regs: list[tuple[Reg, int]] = []
        for i, row in enumerate(rows):
            e(isa.v_cmp_lt_i32(vcc, row, limit))
            e(isa.v_cndmask_b32(r.vtmp[0], r.oob, w.addr_c, vcc))
            e(load(w.c[i], r.vtmp[0], r.srd_c, e.soff0, mods=Buf(offen=True, offset=row * bpe)))
            c_regs.append((w.c[i], 0))
        e.wait(vmcnt=0)
        _add_beta_c(e, w, c_regs)
    _after_c(e, w, t0, t1, (rows, limit))
    dt = plan.dest_type
    for i, row in enumerate(rows):
        val = w.values[i]
        if dt is DataType.H:
            e(isa.v_cvt_f16_f32(val, val))
            store = isa.buffer_store_short
        elif dt is DataType.B:
            bf16_round(e, val, w.t, t[6], w.nan)
            store = isa.buffer_store_short_d16_hi
        elif dt.is_8bit_float:
            saturate_f8(e, val, w.t, t[6], dt)
            pack_f8(e, val, val, val, 0, dt)
            store = isa.buffer_store_byte
        elif dt is DataType.I8:
            integer.saturate_i8(e, val)
            store = isa.buffer_store_byte
        else:
            store = isa.buffer_store_dword
        e(isa.v_cmp_lt_i32(vcc, row, limit))
        e(isa.v_cndmask_b32(r.vtmp[0], r.oob, w.addr_d, vcc))
        e(store(val, r.vtmp[0], r.srd_d, e.soff0, mods=_store_mods(e, row * bpe)))


def _variant(e: Emitter, w: Regs, edge: bool, beta: bool, end: Label | None) -> None:
    """One variant's stores; then the end of the program, or a branch to `end` (a feature's finish)."""
    plan = e.plan
    wt0, wt1 = plan.wave_tile
    # layouts without runs of four rows (gfx11) store every tile element by element
    block = _edge_block if edge or plan.lanes.run_length < 4 else _full_block
    for t1 in range(wt1):
        soff_d, soff_c = _column_offsets(e, t1)
        soff_e = e_output.column_offset(e, t1) if plan.epilogue.use_e else e.soff0
        for t0 in range(wt0):
            block(e, w, t0, t1, beta, soff_d, soff_c, soff_e)
    e(e.isa.s_endpgm() if end is None else e.isa.s_branch(end))


def epilogue(e: Emitter) -> None:
    isa, r, plan = e.isa, e.r, e.plan
    if plan.lsu > 1:
        # LocalSplitU: group 0's waves sum every group's partials and write the tile (lsu.py)
        lsu.reduce(e)
    if r.split_k is not None:
        # GSU > 1: only the workgroup that sums every slice of the tile goes on, once; with
        # MultipleBuffer each stores its slice (group 0's sums) and ends (splitk.py)
        splitk.reduce(e)
    for f in epi.active(plan.epilogue):
        f.gemm_prepare(e)
    stage_vectors(e)
    if plan.lsu > 1:
        lsu.end_others(e)
    w = Regs(e)
    _lane_coordinates(e, w)
    if DataType.B in (plan.dest_type, plan.e_type if plan.epilogue.use_e else None):
        # constants of the bf16 rounding (of D or E), for every variant
        e(isa.s_movk_i32(r.stmp[6], 0x7FFF), isa.v_mov_b32(w.nan, BF16_NAN))
    elif plan.dest_type.is_8bit_float:
        e(isa.s_movk_i32(r.stmp[6], CLASS_NAN_INF))
    features = epi.active(plan.epilogue)
    finishing = [f for f in features if f.finishes]
    assert len(finishing) <= 1, "one feature at most ends the epilogue"
    end = e.new_label(finishing[0].name) if finishing else None
    for f in features:
        f.gemm_start(e, w)
    edge_label = e.new_label("EdgeTile")
    e(isa.s_cmp_lg_u32(r.edge, 0), isa.s_cbranch_scc1(edge_label))
    for edge in (False, True):
        if edge:
            e.label(edge_label)
        if plan.use_beta:
            beta_zero = e.new_label("BetaZero" + ("Edge" if edge else ""))
            e(isa.s_cmp_eq_u32(r.arg("beta"), 0), isa.s_cbranch_scc1(beta_zero))
            _variant(e, w, edge, True, end)
            e.label(beta_zero)
        _variant(e, w, edge, False, end)
    if end is not None:
        e.label(end)
        finishing[0].gemm_finish(e, w)
