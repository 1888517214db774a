"""Conversions, 16-bit VALU, packed (VOP3P) math and mixed-precision fma.

Half selection follows what the disassembly shows: gfx11 true16 `.l`/`.h` register suffixes, or the
VOP3 `op_sel` bits (last bit = destination half). On gfx9 a 16-bit result written to the low half
zeroes the high half; gfx10+ keeps the other half (ArchInfo.f16_write_zeroes_high).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

import numpy as np

from tensile_lite.emu.access import (
    F16,
    F32,
    F64,
    U16,
    U32,
    Ctx,
    Reader,
    const_bits,
    half_select,
    read_b16,
    read_b32,
    read_f16,
    read_f32,
    read_f64,
    scalar_index,
    vgpr_index,
    write_b16,
    write_b32,
    write_b64,
    write_f32,
    write_f64,
)
from tensile_lite.emu.errors import UnsupportedInstruction
from tensile_lite.emu.numeric import (
    FP8_FORMATS,
    Fp8Format,
    bf16_bits_to_f32,
    f32_to_bf16_bits,
    f32_to_f16_bits,
)
from tensile_lite.emu.operands import Instr, Operand
from tensile_lite.emu.state import Wave

Op = Callable[[Wave], int | None]
Factory = Callable[[Instr, Ctx], Op]
I32 = np.int32


def _operands(ins: Instr, n: int) -> tuple[Operand, ...]:
    if len(ins.operands) != n:
        raise UnsupportedInstruction(f"`{ins.text}`: expected {n} operands, found {len(ins.operands)}")
    return ins.operands


def _dst_half(ins: Instr, nsrc: int) -> int:
    d = ins.operands[0]
    if d.half is not None:
        return d.half
    sel = ins.mod("op_sel")
    if isinstance(sel, tuple) and len(sel) == nsrc + 1:
        return sel[-1]
    return 0


def _write16(ins: Instr, ctx: Ctx, nsrc: int) -> Callable[[Wave, np.ndarray], None]:
    half = _dst_half(ins, nsrc)
    zero = ctx.arch.f16_write_zeroes_high and half == 0 and ins.operands[0].half is None
    return write_b16(ins.operands[0], ctx, half, zero)


# ---------------------------------------------------------------------------------------------
# Integer <-> float (32 and 64 bit)

def _f32_to_u32(x) -> np.ndarray:
    v = np.asarray(x, dtype=F64)
    return np.where(np.isnan(v), 0, np.clip(np.trunc(v), 0, 4294967295.0)).astype(np.uint64).astype(U32)


def _f32_to_i32(x) -> np.ndarray:
    v = np.asarray(x, dtype=F64)
    return np.where(np.isnan(v), 0, np.clip(np.trunc(v), -2147483648.0, 2147483647.0)).astype(np.int64).astype(U32)


def _cvt(read: str, write: str, fn: Callable) -> Factory:
    readers = {"b32": read_b32, "f32": read_f32, "f64": read_f64}
    def make(ins: Instr, ctx: Ctx) -> Op:
        d, a = _operands(ins, 2)
        ra = readers[read](a, ctx)
        if write == "b32":
            wd = write_b32(d, ctx)
        elif write == "f32":
            wd = write_f32(d, ctx, ins)
        elif write == "f64":
            wd = write_f64(d, ctx, ins)
        else:
            wd = write_b64(d, ctx)
        return lambda w: wd(w, fn(ra(w)))
    return make


def _ubyte(n: int) -> Callable:
    return lambda a: ((np.asarray(a, dtype=U32) >> U32(8 * n)) & U32(0xFF)).astype(F32)


_CONVERT: Mapping[str, Factory] = MappingProxyType({
    "v_cvt_f32_u32": _cvt("b32", "f32", lambda a: np.asarray(a, dtype=U32).astype(F32)),
    "v_cvt_f32_i32": _cvt("b32", "f32", lambda a: np.asarray(a, dtype=U32).view(I32).astype(F32)),
    "v_cvt_u32_f32": _cvt("f32", "b32", _f32_to_u32),
    "v_cvt_i32_f32": _cvt("f32", "b32", _f32_to_i32),
    "v_cvt_rpi_i32_f32": _cvt("f32", "b32", lambda a: _f32_to_i32(np.floor(np.asarray(a, dtype=F64) + 0.5))),
    "v_cvt_flr_i32_f32": _cvt("f32", "b32", lambda a: _f32_to_i32(np.floor(a))),
    **{f"v_cvt_f32_ubyte{n}": _cvt("b32", "f32", _ubyte(n)) for n in range(4)},
    "v_cvt_f64_f32": _cvt("f32", "f64", lambda a: np.asarray(a, dtype=F64)),
    "v_cvt_f32_f64": _cvt("f64", "f32", lambda a: np.asarray(a, dtype=F64).astype(F32)),
    "v_cvt_f64_i32": _cvt("b32", "f64", lambda a: np.asarray(a, dtype=U32).view(I32).astype(F64)),
    "v_cvt_f64_u32": _cvt("b32", "f64", lambda a: np.asarray(a, dtype=U32).astype(F64)),
    "v_cvt_i32_f64": _cvt("f64", "b32", _f32_to_i32),
    "v_cvt_u32_f64": _cvt("f64", "b32", _f32_to_u32),
})


# ---------------------------------------------------------------------------------------------
# f16 / bf16

def _cvt_f16_f32(ins: Instr, ctx: Ctx) -> Op:
    _, a = _operands(ins, 2)
    ra = read_f32(a, ctx)
    wd = _write16(ins, ctx, 1)
    clamp = ins.flag("clamp")

    def run(w: Wave) -> None:
        x = np.asarray(ra(w), dtype=F32)
        if clamp:
            x = np.clip(np.nan_to_num(x, nan=0.0), 0, 1).astype(F32)
        wd(w, f32_to_f16_bits(x))
    return run


def _cvt_f32_f16(ins: Instr, ctx: Ctx) -> Op:
    d, a = _operands(ins, 2)
    ra = read_f16(a, ctx, half_select(a, ins, 0))
    wd = write_f32(d, ctx, ins)
    return lambda w: wd(w, np.asarray(ra(w)).astype(F32))


def _cvt_f32_bf16(ins: Instr, ctx: Ctx) -> Op:
    d, a = _operands(ins, 2)
    ra = read_b16(a, ctx, half_select(a, ins, 0))
    wd = write_f32(d, ctx, ins)
    return lambda w: wd(w, bf16_bits_to_f32(ra(w)))


def _rtz_f16(x: np.ndarray) -> np.ndarray:
    h = f32_to_f16_bits(x)
    back = h.view(F16).astype(F32)
    over = np.isfinite(x) & (np.abs(back) > np.abs(x))
    return np.where(over, h - U16(1), h).astype(U16)


def _pack2(fn: Callable[[np.ndarray], np.ndarray]) -> Factory:
    """D = {fn(S1) << 16 | fn(S0)} for f32 sources (v_cvt_pkrtz_f16_f32, v_cvt_pk_bf16_f32)."""
    def make(ins: Instr, ctx: Ctx) -> Op:
        d, a, b = _operands(ins, 3)
        ra, rb, wd = read_f32(a, ctx), read_f32(b, ctx), write_b32(d, ctx)

        def run(w: Wave) -> None:
            lo = fn(np.asarray(ra(w), dtype=F32)).astype(U32)
            hi = fn(np.asarray(rb(w), dtype=F32)).astype(U32)
            wd(w, lo | (hi << U32(16)))
        return run
    return make


def _pack_b32_f16(ins: Instr, ctx: Ctx) -> Op:
    d, a, b = _operands(ins, 3)
    ra = read_b16(a, ctx, half_select(a, ins, 0))
    rb = read_b16(b, ctx, half_select(b, ins, 1))
    neg_a, neg_b = a.neg, b.neg
    wd = write_b32(d, ctx)

    def run(w: Wave) -> None:
        lo = np.asarray(ra(w), dtype=U16)
        hi = np.asarray(rb(w), dtype=U16)
        if neg_a:
            lo = lo ^ U16(0x8000)
        if neg_b:
            hi = hi ^ U16(0x8000)
        wd(w, lo.astype(U32) | (hi.astype(U32) << U32(16)))
    return run


_F16_2: Mapping[str, Callable] = MappingProxyType({
    "v_add_f16": lambda a, b: a + b, "v_sub_f16": lambda a, b: a - b, "v_subrev_f16": lambda a, b: b - a,
    "v_mul_f16": lambda a, b: a * b, "v_max_f16": np.fmax, "v_min_f16": np.fmin,
    "v_max_num_f16": np.fmax, "v_min_num_f16": np.fmin,
})


def _f16_op(fn: Callable, n: int) -> Factory:
    def make(ins: Instr, ctx: Ctx) -> Op:
        ops = _operands(ins, n + 1)
        rs = [read_f16(o, ctx, half_select(o, ins, i)) for i, o in enumerate(ops[1:])]
        wd = _write16(ins, ctx, n)

        def run(w: Wave) -> None:
            vals = [np.asarray(r(w)).astype(F32) for r in rs]
            wd(w, f32_to_f16_bits(np.asarray(fn(*vals), dtype=F32)))
        return run
    return make


def _fma_f16(a, b, c):
    return (np.asarray(a, dtype=F64) * b + c).astype(F32)


def _fmac_f16(ins: Instr, ctx: Ctx) -> Op:
    d, a, b = _operands(ins, 3)
    rs = [read_f16(o, ctx, half_select(o, ins, i)) for i, o in enumerate((a, b))]
    rc = read_f16(Operand(d.text, d.kind, d.index, half=d.half), ctx, _dst_half(ins, 2))
    wd = _write16(ins, ctx, 2)

    def run(w: Wave) -> None:
        x, y, z = (np.asarray(r(w)).astype(F32) for r in (*rs, rc))
        wd(w, f32_to_f16_bits(_fma_f16(x, y, z)))
    return run


_INT16_2: Mapping[str, Callable] = MappingProxyType({
    "v_lshlrev_b16": lambda a, b: b << (a & 15), "v_lshrrev_b16": lambda a, b: b >> (a & 15),
    "v_ashrrev_i16": lambda a, b: (b.view(np.int16) >> (a & 15).astype(np.int16)).view(U16),
    "v_add_u16": lambda a, b: a + b, "v_sub_u16": lambda a, b: a - b, "v_subrev_u16": lambda a, b: b - a,
    "v_mul_lo_u16": lambda a, b: a * b, "v_max_u16": np.maximum, "v_min_u16": np.minimum,
    "v_max_i16": lambda a, b: np.maximum(a.view(np.int16), b.view(np.int16)).view(U16),
    "v_min_i16": lambda a, b: np.minimum(a.view(np.int16), b.view(np.int16)).view(U16),
})


def _int16_op(fn: Callable) -> Factory:
    def make(ins: Instr, ctx: Ctx) -> Op:
        _, a, b = _operands(ins, 3)
        ra = read_b16(a, ctx, half_select(a, ins, 0))
        rb = read_b16(b, ctx, half_select(b, ins, 1))
        wd = _write16(ins, ctx, 2)

        def run(w: Wave) -> None:
            x = np.atleast_1d(np.asarray(ra(w), dtype=U16))
            y = np.atleast_1d(np.asarray(rb(w), dtype=U16))
            wd(w, np.asarray(fn(x, y)).astype(U16))
        return run
    return make


# ---------------------------------------------------------------------------------------------
# 8-bit floats

def _fp8_format(ins: Instr, ctx: Ctx) -> Fp8Format:
    if ctx.arch.fp8 is None:
        raise UnsupportedInstruction(f"`{ins.text}`: {ctx.arch.gfx} has no 8-bit float conversions")
    fp8, bf8 = FP8_FORMATS[ctx.arch.fp8]
    return bf8 if "bf8" in ins.base else fp8


def _cvt_pk_f8_f32(ins: Instr, ctx: Ctx) -> Op:
    """v_cvt_pk_{fp8,bf8}_f32 d, s0, s1: {f8(s1), f8(s0)} into half op_sel[2] of d, the other half kept."""
    fmt = _fp8_format(ins, ctx)
    d, a, b = _operands(ins, 3)
    ra, rb = read_f32(a, ctx), read_f32(b, ctx)
    half = _dst_half(ins, 2)
    wd = write_b16(d, ctx, half, False)
    saturate = ins.flag("clamp")

    def run(w: Wave) -> None:
        lo = fmt.encode(np.atleast_1d(ra(w)), saturate=saturate).astype(U16)
        hi = fmt.encode(np.atleast_1d(rb(w)), saturate=saturate).astype(U16)
        wd(w, lo | (hi << U16(8)))
    return run


def _cvt_f32_f8(ins: Instr, ctx: Ctx) -> Op:
    """v_cvt_f32_{fp8,bf8}: one byte (SDWA src0_sel on gfx9, byte_sel on gfx12) -> f32."""
    fmt = _fp8_format(ins, ctx)
    d, a = _operands(ins, 2)
    ra = read_b32(a, ctx)
    byte = ins.int_mod("byte_sel")
    sel = ins.mod("op_sel")
    if isinstance(sel, tuple) and any(sel):
        raise UnsupportedInstruction(f"`{ins.text}`: op_sel on a byte conversion is not emulated")
    shift = U32(8 * byte)
    wd = write_f32(d, ctx, ins)
    return lambda w: wd(w, fmt.decode(((np.asarray(ra(w), dtype=U32) >> shift) & U32(0xFF)).astype(np.uint8)))


def _cvt_pk_f32_f8(ins: Instr, ctx: Ctx) -> Op:
    """v_cvt_pk_f32_{fp8,bf8} d[0:1], s: two bytes of word op_sel[0] (gfx12) or of the SDWA word."""
    fmt = _fp8_format(ins, ctx)
    d, a = _operands(ins, 2)
    ra = read_b32(a, ctx)
    sel = ins.mod("op_sel")
    word = sel[0] if isinstance(sel, tuple) and sel else 0
    shift = U32(16 * word)
    vgpr_index(d, ctx, 2)
    w0 = write_b32(Operand(d.text, d.kind, d.index), ctx)
    w1 = write_b32(Operand(d.text, d.kind, d.index + 1), ctx)

    def run(w: Wave) -> None:
        x = np.asarray(ra(w), dtype=U32) >> shift
        lo = fmt.decode((x & U32(0xFF)).astype(np.uint8)).astype(F32)
        hi = fmt.decode(((x >> U32(8)) & U32(0xFF)).astype(np.uint8)).astype(F32)
        w0(w, lo.view(U32))
        w1(w, hi.view(U32))
    return run


# ---------------------------------------------------------------------------------------------
# VOP3P packed math

def _sel(ins: Instr, name: str, i: int, default: int) -> int:
    v = ins.mod(name)
    if isinstance(v, tuple) and i < len(v):
        return v[i]
    return default


def _packed16_reader(op: Operand, ctx: Ctx, ins: Instr, i: int, is_float: bool):
    """(lo, hi) 16-bit halves of a VOP3P source after op_sel / op_sel_hi / neg_lo / neg_hi."""
    lo_half, hi_half = _sel(ins, "op_sel", i, 0), _sel(ins, "op_sel_hi", i, 1)
    neg_lo, neg_hi = _sel(ins, "neg_lo", i, 0), _sel(ins, "neg_hi", i, 0)
    if op.kind == "const":
        if op.fval is not None:
            v = const_bits(op, 16, "float")
            bits = v | (v << 16)
        else:
            bits = const_bits(op, 32, "int")
            if op.ival is not None and -16 <= op.ival <= 64:
                bits = (bits & 0xFFFF) | ((bits & 0xFFFF) << 16)
        const = U32(bits)
        raw: Reader = lambda w: const  # noqa: E731
    else:
        raw = read_b32(op, ctx)

    def rd(w: Wave):
        x = np.atleast_1d(np.asarray(raw(w), dtype=U32))
        lo = ((x >> U32(16 * lo_half)) & U32(0xFFFF)).astype(U16)
        hi = ((x >> U32(16 * hi_half)) & U32(0xFFFF)).astype(U16)
        if is_float:
            lo, hi = lo.view(F16).astype(F32), hi.view(F16).astype(F32)
            if neg_lo:
                lo = -lo
            if neg_hi:
                hi = -hi
        return lo, hi
    return rd


_PK16: Mapping[str, tuple[bool, int, Callable]] = MappingProxyType({
    "v_pk_add_f16": (True, 2, lambda a, b: a + b), "v_pk_mul_f16": (True, 2, lambda a, b: a * b),
    "v_pk_fma_f16": (True, 3, lambda a, b, c: (a.astype(F64) * b + c).astype(F32)),
    "v_pk_max_f16": (True, 2, np.fmax), "v_pk_min_f16": (True, 2, np.fmin),
    "v_pk_max_num_f16": (True, 2, np.fmax), "v_pk_min_num_f16": (True, 2, np.fmin),
    "v_pk_add_u16": (False, 2, lambda a, b: a + b), "v_pk_sub_u16": (False, 2, lambda a, b: a - b),
    "v_pk_mul_lo_u16": (False, 2, lambda a, b: a * b),
    "v_pk_lshlrev_b16": (False, 2, lambda a, b: b << (a & 15)),
    "v_pk_lshrrev_b16": (False, 2, lambda a, b: b >> (a & 15)),
    "v_pk_max_u16": (False, 2, np.maximum), "v_pk_min_u16": (False, 2, np.minimum),
    "v_pk_mad_u16": (False, 3, lambda a, b, c: a * b + c),
})


def _pk16(ins: Instr, ctx: Ctx) -> Op:
    is_float, n, fn = _PK16[ins.base]
    ops = _operands(ins, n + 1)
    rs = [_packed16_reader(o, ctx, ins, i, is_float) for i, o in enumerate(ops[1:])]
    wd = write_b32(ops[0], ctx)
    clamp = ins.flag("clamp")

    def run(w: Wave) -> None:
        vals = [r(w) for r in rs]
        lo = fn(*(v[0] for v in vals))
        hi = fn(*(v[1] for v in vals))
        if is_float:
            if clamp:
                lo, hi = (np.clip(np.nan_to_num(x, nan=0.0), 0, 1) for x in (lo, hi))
            lo16, hi16 = f32_to_f16_bits(np.asarray(lo, F32)), f32_to_f16_bits(np.asarray(hi, F32))
        else:
            lo16, hi16 = np.asarray(lo).astype(U16), np.asarray(hi).astype(U16)
        wd(w, lo16.astype(U32) | (hi16.astype(U32) << U32(16)))
    return run


def _packed32_reader(op: Operand, ctx: Ctx, ins: Instr, i: int):
    """(lo, hi) f32 elements of a 64-bit VOP3P source after op_sel / op_sel_hi / neg_lo / neg_hi."""
    lo_sel, hi_sel = _sel(ins, "op_sel", i, 0), _sel(ins, "op_sel_hi", i, 1)
    neg_lo, neg_hi = _sel(ins, "neg_lo", i, 0), _sel(ins, "neg_hi", i, 0)
    if op.kind == "const":
        c = np.array(const_bits(op, 32, "float"), U32).view(F32)[()]
        lo_c, hi_c = (-c if neg_lo else c), (-c if neg_hi else c)
        return lambda w: (lo_c, hi_c)
    p_lo, p_hi = _dword_reader(op, ctx, lo_sel), _dword_reader(op, ctx, hi_sel)

    def rd(w: Wave):
        lo = np.asarray(p_lo(w), dtype=U32).view(F32)
        hi = np.asarray(p_hi(w), dtype=U32).view(F32)
        return (-lo if neg_lo else lo), (-hi if neg_hi else hi)
    return rd


_PK32: Mapping[str, tuple[int, Callable]] = MappingProxyType({
    "v_pk_add_f32": (2, lambda a, b: a + b), "v_pk_mul_f32": (2, lambda a, b: a * b),
    "v_pk_fma_f32": (3, lambda a, b, c: (np.asarray(a, dtype=F64) * b + c).astype(F32)),
})


def _pk32(ins: Instr, ctx: Ctx) -> Op:
    n, fn = _PK32[ins.base]
    ops = _operands(ins, n + 1)
    rs = [_packed32_reader(o, ctx, ins, i) for i, o in enumerate(ops[1:])]
    d = ops[0]
    vgpr_index(d, ctx, 2)
    w_lo = write_f32(Operand(d.text, d.kind, d.index), ctx, ins)
    w_hi = write_f32(Operand(d.text, d.kind, d.index + 1), ctx, ins)

    def run(w: Wave) -> None:
        vals = [r(w) for r in rs]
        lo = np.asarray(fn(*(v[0] for v in vals)), dtype=F32)
        hi = np.asarray(fn(*(v[1] for v in vals)), dtype=F32)
        w_lo(w, lo)
        w_hi(w, hi)
    return run


def _pk_mov_b32(ins: Instr, ctx: Ctx) -> Op:
    d, a, b = _operands(ins, 3)
    sel0, sel1 = _sel(ins, "op_sel", 0, 0), _sel(ins, "op_sel", 1, 0)
    ra = _dword_reader(a, ctx, sel0)
    rb = _dword_reader(b, ctx, sel1)
    vgpr_index(d, ctx, 2)
    w_lo = write_b32(Operand(d.text, d.kind, d.index), ctx)
    w_hi = write_b32(Operand(d.text, d.kind, d.index + 1), ctx)

    def run(w: Wave) -> None:
        lo, hi = np.array(ra(w)), np.array(rb(w))
        w_lo(w, lo)
        w_hi(w, hi)
    return run


def _dword_reader(op: Operand, ctx: Ctx, k: int):
    if op.kind == "const":
        return read_b32(op, ctx)
    if op.is_vector:
        vi = vgpr_index(op, ctx, 2)
        return read_b32(Operand(op.text, "scratch", vi + k), ctx)
    si = scalar_index(op, ctx, 2)
    return read_b32(Operand(op.text, "sgpr", si + k), ctx)


# ---------------------------------------------------------------------------------------------
# Mixed precision: each source is f32 (op_sel_hi 0) or the f16 half op_sel (op_sel_hi 1).

def _mix_reader(op: Operand, ctx: Ctx, ins: Instr, i: int):
    is_f16 = _sel(ins, "op_sel_hi", i, 0)
    if is_f16:
        half = _sel(ins, "op_sel", i, 0)
        r = read_f16(op, ctx, half)
        return lambda w: np.asarray(r(w)).astype(F32)
    return read_f32(op, ctx)


def _fma_mix(out: str) -> Factory:
    def make(ins: Instr, ctx: Ctx) -> Op:
        d, a, b, c = _operands(ins, 4)
        ra, rb, rc = (_mix_reader(o, ctx, ins, i) for i, o in enumerate((a, b, c)))
        if out == "f32":
            wd32 = write_f32(d, ctx, ins)
            return lambda w: wd32(w, (np.asarray(ra(w), dtype=F64) * rb(w) + rc(w)).astype(F32))
        wd16 = write_b16(d, ctx, 0 if out == "lo" else 1, False)
        clamp = ins.flag("clamp")

        def run(w: Wave) -> None:
            r = (np.asarray(ra(w), dtype=F64) * rb(w) + rc(w)).astype(F32)
            if clamp:
                r = np.clip(np.nan_to_num(r, nan=0.0), 0, 1).astype(F32)
            wd16(w, np.atleast_1d(f32_to_f16_bits(r)))
        return run
    return make


def _dot2(kind: str, accumulate_dst: bool) -> Factory:
    def make(ins: Instr, ctx: Ctx) -> Op:
        if accumulate_dst:
            d, a, b = _operands(ins, 3)
            c = Operand(d.text, d.kind, d.index)
        else:
            d, a, b, c = _operands(ins, 4)
        if isinstance(op_sel := ins.mod("op_sel"), tuple) and any(op_sel):
            raise UnsupportedInstruction(f"`{ins.text}`: op_sel on dot2 is not emulated")
        ra, rb = read_b32(a, ctx), read_b32(b, ctx)
        rc = read_f32(c, ctx)
        wd = write_f32(d, ctx, ins)

        def halves(x):
            x = np.atleast_1d(np.asarray(x, dtype=U32))
            lo, hi = (x & U32(0xFFFF)).astype(U16), (x >> U32(16)).astype(U16)
            if kind == "f16":
                return lo.view(F16).astype(F64), hi.view(F16).astype(F64)
            return bf16_bits_to_f32(lo).astype(F64), bf16_bits_to_f32(hi).astype(F64)

        def run(w: Wave) -> None:
            a0, a1 = halves(ra(w))
            b0, b1 = halves(rb(w))
            wd(w, (a0 * b0 + a1 * b1 + np.asarray(rc(w), dtype=F64)).astype(F32))
        return run
    return make


EXACT: Mapping[str, Factory] = MappingProxyType({
    **_CONVERT,
    "v_cvt_f16_f32": _cvt_f16_f32, "v_cvt_f32_f16": _cvt_f32_f16, "v_cvt_f32_bf16": _cvt_f32_bf16,
    "v_cvt_pkrtz_f16_f32": _pack2(_rtz_f16), "v_cvt_pk_rtz_f16_f32": _pack2(_rtz_f16),
    "v_cvt_pk_bf16_f32": _pack2(f32_to_bf16_bits),
    "v_pack_b32_f16": _pack_b32_f16,
    **{n: _f16_op(f, 2) for n, f in _F16_2.items()},
    "v_fma_f16": _f16_op(_fma_f16, 3), "v_fmac_f16": _fmac_f16,
    **{n: _int16_op(f) for n, f in _INT16_2.items()},
    "v_cvt_pk_fp8_f32": _cvt_pk_f8_f32, "v_cvt_pk_bf8_f32": _cvt_pk_f8_f32,
    "v_cvt_f32_fp8": _cvt_f32_f8, "v_cvt_f32_bf8": _cvt_f32_f8,
    "v_cvt_pk_f32_fp8": _cvt_pk_f32_f8, "v_cvt_pk_f32_bf8": _cvt_pk_f32_f8,
    **{n: _pk16 for n in _PK16},
    **{n: _pk32 for n in _PK32},
    "v_pk_mov_b32": _pk_mov_b32,
    "v_fma_mix_f32": _fma_mix("f32"), "v_fma_mixlo_f16": _fma_mix("lo"), "v_fma_mixhi_f16": _fma_mix("hi"),
    "v_mad_mix_f32": _fma_mix("f32"), "v_mad_mixlo_f16": _fma_mix("lo"), "v_mad_mixhi_f16": _fma_mix("hi"),
    "v_dot2_f32_f16": _dot2("f16", False), "v_dot2c_f32_f16": _dot2("f16", True),
    "v_dot2_f32_bf16": _dot2("bf16", False),
})
PATTERNS: tuple = ()
