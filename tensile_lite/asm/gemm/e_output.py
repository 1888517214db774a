"""Stage 6c: UseE, the auxiliary output E = cvt_E(t) after the bias and before the activation
(spec/epilogue_semantics.md §1.1 step 7), in E's type (DataTypeE: f32, f16 by `v_cvt_f16_f32`, bf16
by the epilogue's round-to-nearest-even), at E's own strides (StrideE0 between columns, StrideE1
between batches).

E is laid out like D: a full tile stores each run of four rows as one vector; an edge tile (and
every tile of a layout without runs of four) stores element by element, the elements outside M x N
pointed out of bounds. The values stay untouched for the activation that follows: conversions go
to scratch registers (the C registers, free once beta * C is added).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tensile_lite.asm.gemm.emit import Emitter, store_cache
from tensile_lite.asm.modifiers import Buf
from tensile_lite.asm.operands import Reg, Special
from tensile_lite.model import DataType

E_TYPES = (DataType.S, DataType.H, DataType.B)

Round = Callable[[Reg], None]  # bf16 rounding of a register in place (the epilogue's)


def lane_offset(e: Emitter, off_e: Reg, row: Reg, col: Reg) -> None:
    """off_e = the lane's byte offset in the E tile: (col * StrideE0 + row) * bpe."""
    isa, r = e.isa, e.r
    v = r.vtmp[0]
    e(isa.v_mul_lo_u32(v, col, r.arg("StrideE0")), isa.v_add_u32(v, v, row))
    e.v_mul_const(off_e, v, e.plan.e_bpe)


def column_offset(e: Emitter, t1: int) -> Reg | Special | int:
    """The soffset of block column t1 in E."""
    r = e.r
    if t1 == 0:
        return e.soff0
    assert r.soff_e is not None
    e(e.isa.s_mul_i32(r.soff_e, r.arg("StrideE0"), t1 * e.plan.block_n * e.plan.e_bpe))
    return r.soff_e


def _mods(e: Emitter, offset: int) -> Buf:
    return Buf(offen=True, offset=offset, cache=store_cache(e.plan.arch))


def store_full(e: Emitter, values: Reg, scratch: Reg, off_e: Reg, soff: Reg | Special | int,
               t0: int, bf16_round: Round) -> None:
    """One block of a full tile: each run of four rows converted and stored as one vector."""
    isa, r, plan = e.isa, e.r, e.plan
    assert r.srd_e is not None
    dt = plan.e_type
    bpe = plan.e_bpe
    store = {16: isa.buffer_store_dwordx4, 8: isa.buffer_store_dwordx2}[4 * bpe]
    for first, row, length in plan.lanes.row_runs:
        assert length == 4
        quad = values[first:first + 4]
        out = scratch[first:first + 4]
        if dt is DataType.S:
            data = quad
        elif dt is DataType.H:
            e(isa.v_cvt_f16_f32(out[i], quad[i]) for i in range(4))
            e(isa.v_pack_b32_f16(out[0], out[0], out[1]), isa.v_pack_b32_f16(out[1], out[2], out[3]))
            data = out[0:2]
        else:
            for i in range(4):
                e(isa.v_mov_b32(out[i], quad[i]))
                bf16_round(out[i])
            for j in range(2):
                lo, hi = out[2 * j], out[2 * j + 1]
                e(isa.v_lshrrev_b32(lo, 16, lo), isa.v_and_b32(hi, 0xFFFF0000, hi), isa.v_or_b32(out[j], lo, hi))
            data = out[0:2]
        offset = (t0 * plan.block_m + row) * bpe
        e(store(data, off_e, r.srd_e, soff, mods=_mods(e, offset)))
    # a store of more than 8 bytes must read its data before a VALU overwrites it
    e.nops(1)


def store_edge(e: Emitter, values: Reg, scratch: Reg, addr: Reg, rows: Sequence[int],
               limit: Reg, bf16_round: Round) -> None:
    """One block of an edge tile: element by element, rows at or past the lane's limit dropped."""
    isa, r, plan = e.isa, e.r, e.plan
    assert r.srd_e is not None
    vcc = plan.arch.vcc
    dt = plan.e_type
    bpe = plan.e_bpe
    for i, row in enumerate(rows):
        value, tmp = values[i], scratch[i]
        if dt is DataType.S:
            data, store = value, isa.buffer_store_dword
        elif dt is DataType.H:
            e(isa.v_cvt_f16_f32(tmp, value))
            data, store = tmp, isa.buffer_store_short
        else:
            e(isa.v_mov_b32(tmp, value))
            bf16_round(tmp)
            data, store = tmp, isa.buffer_store_short_d16_hi
        e(isa.v_cmp_lt_i32(vcc, row, limit))
        e(isa.v_cndmask_b32(r.vtmp[0], r.oob, addr, vcc))
        e(store(data, r.vtmp[0], r.srd_e, e.soff0, mods=_mods(e, row * bpe)))
