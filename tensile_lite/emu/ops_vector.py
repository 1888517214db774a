"""Vector ALU: integer, f32 and f64 arithmetic, carries, compares, lane moves, exec-masked writes.

Every operation works on whole lane arrays; results are computed completely before the destination
is written (a destination may also be a source). f32 arithmetic is numpy float32 (IEEE, RNE); fused
multiply-adds are computed in float64 and rounded once to f32, which differs from a true fma only
in rare double-rounding ties. Transcendentals (rcp, rsq, exp, log, ...) are exact-then-rounded, where
the hardware is approximate to about 1 ulp.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from types import MappingProxyType

import numpy as np

from tensile_lite.emu.access import (
    F32,
    F64,
    MASK32,
    U32,
    U64,
    Ctx,
    half_select,
    lane_mask_reader,
    lane_mask_writer,
    read_b16,
    read_b32,
    read_b64,
    read_f16,
    read_f32,
    read_f64,
    sread,
    swrite,
    valu_sgpr_guard,
    valu_vgpr_guard,
    vgpr_index,
    write_b32,
    write_b64,
    write_f32,
    write_f64,
)
from tensile_lite.emu.errors import UnsupportedInstruction
from tensile_lite.emu.operands import EXEC_HI, EXEC_LO, Instr, Operand
from tensile_lite.emu.state import ACCESS_KINDS, READ, TRANS_READ, Wave, Window, int_from_mask

Op = Callable[[Wave], int | None]
Factory = Callable[[Instr, Ctx], Op]
I32 = np.int32
I64 = np.int64


def _u32(x) -> np.ndarray:
    return np.asarray(x).astype(U32, copy=False)


def _i32(x) -> np.ndarray:
    return np.asarray(x, dtype=U32).view(I32)


def _i64(x) -> np.ndarray:
    return _i32(x).astype(I64)


def _u64(x) -> np.ndarray:
    return np.asarray(x, dtype=U32).astype(U64)


def _operands(ins: Instr, n: int) -> tuple[Operand, ...]:
    if len(ins.operands) != n:
        raise UnsupportedInstruction(f"`{ins.text}`: expected {n} operands, found {len(ins.operands)}")
    return ins.operands


# ---------------------------------------------------------------------------------------------
# Integer ops on uint32 lane arrays.

def _sh(x) -> np.ndarray:
    return np.asarray(x, dtype=U32) & U32(31)


def _bfe_u(a, b, c):
    off = _sh(b).astype(U64)
    width = _sh(c).astype(U64)
    v = (_u64(a) >> off) & ((U64(1) << width) - U64(1))
    return v.astype(U32)


def _bfe_i(a, b, c):
    width = _sh(c).astype(I64)
    v = _bfe_u(a, b, c).astype(I64)
    sign = np.where(width > 0, (v >> np.maximum(width - 1, 0)) & 1, 0)
    out = np.where(sign == 1, v - (np.int64(1) << width), v)
    return np.where(width == 0, 0, out).astype(I64).astype(U32)


def _perm(a, b, sel):
    """v_perm_b32: each selector byte picks a byte of {a, b} (b is bytes 0-3) or a constant."""
    combined = (_u64(a) << U64(32)) | _u64(b)
    s = np.asarray(sel, dtype=U32)
    out = np.zeros(np.broadcast(combined, s).shape, dtype=U32)
    for byte in range(4):
        k = (s >> U32(8 * byte)) & U32(0xFF)
        picked = ((combined >> (U64(8) * np.minimum(k, 7).astype(U64))) & U64(0xFF)).astype(U32)
        sign_bit = ((combined >> (U64(16) * (np.clip(k, 8, 11) - 8).astype(U64) + U64(15))) & U64(1)).astype(U32)
        value = np.where(k < 8, picked, np.where(k < 12, sign_bit * U32(0xFF), np.where(k == 12, 0, 0xFF)))
        out |= value.astype(U32) << U32(8 * byte)
    return out


def _med3(a, b, c):
    return np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))


_INT2: Mapping[str, Callable] = MappingProxyType({
    "v_add_u32": lambda a, b: a + b, "v_add_nc_u32": lambda a, b: a + b,
    "v_sub_u32": lambda a, b: a - b, "v_sub_nc_u32": lambda a, b: a - b,
    "v_subrev_u32": lambda a, b: b - a, "v_subrev_nc_u32": lambda a, b: b - a,
    "v_add_i32": lambda a, b: a + b, "v_add_nc_i32": lambda a, b: a + b,
    "v_sub_i32": lambda a, b: a - b, "v_sub_nc_i32": lambda a, b: a - b,
    "v_and_b32": lambda a, b: a & b, "v_or_b32": lambda a, b: a | b, "v_xor_b32": lambda a, b: a ^ b,
    "v_xnor_b32": lambda a, b: ~(a ^ b),
    "v_lshlrev_b32": lambda a, b: b << _sh(a), "v_lshrrev_b32": lambda a, b: b >> _sh(a),
    "v_ashrrev_i32": lambda a, b: (_i32(b) >> _sh(a).astype(I32)).view(U32),
    "v_min_u32": np.minimum, "v_max_u32": np.maximum,
    "v_min_i32": lambda a, b: np.minimum(_i32(a), _i32(b)).view(U32),
    "v_max_i32": lambda a, b: np.maximum(_i32(a), _i32(b)).view(U32),
    "v_mul_lo_u32": lambda a, b: a * b,
    "v_mul_hi_u32": lambda a, b: ((_u64(a) * _u64(b)) >> U64(32)).astype(U32),
    "v_mul_hi_i32": lambda a, b: ((_i64(a) * _i64(b)) >> 32).astype(U32),
    "v_mul_u32_u24": lambda a, b: (a & U32(0xFFFFFF)) * (b & U32(0xFFFFFF)),
    "v_mul_hi_u32_u24": lambda a, b: ((_u64(a & U32(0xFFFFFF)) * _u64(b & U32(0xFFFFFF))) >> U64(32)).astype(U32),
    "v_mul_i32_i24": lambda a, b: (_sext24(a) * _sext24(b)).astype(U32),
    "v_mul_hi_i32_i24": lambda a, b: ((_sext24(a) * _sext24(b)) >> 32).astype(U32),
    "v_bfm_b32": lambda a, b: (((U64(1) << _sh(a).astype(U64)) - U64(1)) << _sh(b).astype(U64)).astype(U32),
    "v_bcnt_u32_b32": lambda a, b: popcount32(a) + b,
})

_INT3: Mapping[str, Callable] = MappingProxyType({
    "v_add3_u32": lambda a, b, c: a + b + c,
    "v_lshl_add_u32": lambda a, b, c: (a << _sh(b)) + c,
    "v_add_lshl_u32": lambda a, b, c: (a + b) << _sh(c),
    "v_lshl_or_b32": lambda a, b, c: (a << _sh(b)) | c,
    "v_and_or_b32": lambda a, b, c: (a & b) | c,
    "v_or3_b32": lambda a, b, c: a | b | c,
    "v_xor3_b32": lambda a, b, c: a ^ b ^ c,
    "v_xad_u32": lambda a, b, c: (a ^ b) + c,
    "v_mad_u32_u24": lambda a, b, c: (a & U32(0xFFFFFF)) * (b & U32(0xFFFFFF)) + c,
    "v_mad_i32_i24": lambda a, b, c: (_sext24(a) * _sext24(b) + _i64(c)).astype(U32),
    "v_bfe_u32": _bfe_u, "v_bfe_i32": _bfe_i,
    "v_bfi_b32": lambda a, b, c: (a & b) | (~a & c),
    "v_alignbit_b32": lambda a, b, c: (((_u64(a) << U64(32)) | _u64(b)) >> _sh(c).astype(U64)).astype(U32),
    "v_alignbyte_b32": lambda a, b, c: (((_u64(a) << U64(32)) | _u64(b))
                                        >> (U64(8) * (np.asarray(c, dtype=U32) & U32(3)).astype(U64))).astype(U32),
    "v_med3_u32": _med3, "v_min3_u32": lambda a, b, c: np.minimum(np.minimum(a, b), c),
    "v_max3_u32": lambda a, b, c: np.maximum(np.maximum(a, b), c),
    "v_med3_i32": lambda a, b, c: _med3(_i32(a), _i32(b), _i32(c)).view(U32),
    "v_min3_i32": lambda a, b, c: np.minimum(np.minimum(_i32(a), _i32(b)), _i32(c)).view(U32),
    "v_max3_i32": lambda a, b, c: np.maximum(np.maximum(_i32(a), _i32(b)), _i32(c)).view(U32),
    "v_perm_b32": _perm,
})
# Integer VOP3 clamp: saturate instead of wrapping.
_SATURATING = MappingProxyType({
    "v_add_u32": ("u", lambda a, b: a + b), "v_add_nc_u32": ("u", lambda a, b: a + b),
    "v_sub_u32": ("u", lambda a, b: a - b), "v_sub_nc_u32": ("u", lambda a, b: a - b),
    "v_subrev_u32": ("u", lambda a, b: b - a), "v_subrev_nc_u32": ("u", lambda a, b: b - a),
    "v_add_i32": ("i", lambda a, b: a + b), "v_add_nc_i32": ("i", lambda a, b: a + b),
    "v_sub_i32": ("i", lambda a, b: a - b), "v_sub_nc_i32": ("i", lambda a, b: a - b),
})


def _sext24(x) -> np.ndarray:
    v = np.asarray(x, dtype=U32).astype(I64) & 0xFFFFFF
    return np.where(v & 0x800000, v - 0x1000000, v)


def _int_op(fn: Callable, n: int) -> Factory:
    def make(ins: Instr, ctx: Ctx) -> Op:
        ops = _operands(ins, n + 1)
        wd = write_b32(ops[0], ctx)
        rs = [read_b32(o, ctx) for o in ops[1:]]
        if ins.flag("clamp") and ins.base in _SATURATING:
            kind, f = _SATURATING[ins.base]
            lo, hi = (0, MASK32) if kind == "u" else (-(1 << 31), (1 << 31) - 1)
            conv = _u64 if kind == "u" else _i64
            r0, r1 = rs

            def run_sat(w: Wave) -> None:
                v = f(conv(r0(w)).astype(I64), conv(r1(w)).astype(I64))
                wd(w, np.clip(v, lo, hi).astype(I64).astype(U32))
            return run_sat
        if n == 1:
            (r0,) = rs
            return lambda w: wd(w, _u32(fn(r0(w))))
        if n == 2:
            r0, r1 = rs
            return lambda w: wd(w, _u32(fn(r0(w), r1(w))))
        r0, r1, r2 = rs
        return lambda w: wd(w, _u32(fn(r0(w), r1(w), r2(w))))
    return make


_INT1: Mapping[str, Callable] = MappingProxyType({
    "v_not_b32": lambda a: ~np.asarray(a, dtype=U32),
    "v_bfrev_b32": lambda a: _bitreverse(a),
    "v_ffbh_u32": lambda a: _clz(a), "v_clz_i32_u32": lambda a: _clz(a),
    "v_ffbl_b32": lambda a: _ctz(a), "v_ctz_i32_b32": lambda a: _ctz(a),
})


_REV8 = np.array([int(f"{b:08b}"[::-1], 2) for b in range(256)], dtype=np.uint8)
_POP8 = np.array([bin(b).count("1") for b in range(256)], dtype=U32)


def popcount32(a) -> np.ndarray:
    x = np.ascontiguousarray(np.asarray(a, dtype=U32))
    return _POP8[x.view(np.uint8).reshape(*x.shape, 4)].sum(axis=-1, dtype=U32)


def _bitreverse(a) -> np.ndarray:
    x = np.ascontiguousarray(np.asarray(a, dtype=U32))
    b = x.view(np.uint8).reshape(*x.shape, 4)
    return np.ascontiguousarray(_REV8[b[..., ::-1]]).view(U32).reshape(x.shape)


def _clz(a) -> np.ndarray:
    x = np.asarray(a, dtype=U32)
    bits = np.floor(np.log2(np.maximum(x, 1).astype(F64))).astype(I64)
    return np.where(x == 0, MASK32, 31 - bits).astype(U32)


def _ctz(a) -> np.ndarray:
    x = np.asarray(a, dtype=U32).astype(I64)
    low = x & -x
    bits = np.floor(np.log2(np.maximum(low, 1).astype(F64))).astype(I64)
    return np.where(x == 0, MASK32, bits).astype(U32)


# ---------------------------------------------------------------------------------------------
# Carries: v_add_co_u32 / v_addc_co_u32 / v_sub_co_u32 / v_subb_co_u32 (gfx9), *_co_ci_* (gfx10+).

_CARRY = MappingProxyType({
    "v_add_co_u32": (lambda a, b: a + b, False), "v_sub_co_u32": (lambda a, b: a - b, False),
    "v_subrev_co_u32": (lambda a, b: b - a, False),
    "v_addc_co_u32": (lambda a, b: a + b, True), "v_add_co_ci_u32": (lambda a, b: a + b, True),
    "v_subb_co_u32": (lambda a, b: a - b, True), "v_sub_co_ci_u32": (lambda a, b: a - b, True),
    "v_subbrev_co_u32": (lambda a, b: b - a, True), "v_subrev_co_ci_u32": (lambda a, b: b - a, True),
})


def _carry_op(ins: Instr, ctx: Ctx) -> Op:
    fn, has_cin = _CARRY[ins.base]
    ops = _operands(ins, 5 if has_cin else 4)
    wd = write_b32(ops[0], ctx)
    wc = lane_mask_writer(ops[1], ctx)
    ra, rb = read_b32(ops[2], ctx), read_b32(ops[3], ctx)
    rc = lane_mask_reader(ops[4], ctx) if has_cin else None
    subtract = "sub" in ins.base

    def run(w: Wave) -> None:
        a = _u64(ra(w)).astype(I64)
        b = _u64(rb(w)).astype(I64)
        v = fn(a, b)
        if rc is not None:
            cin = rc(w).astype(I64)
            v = v - cin if subtract else v + cin
        carry = (v < 0) if subtract else (v > MASK32)
        wd(w, (v & MASK32).astype(U32))
        wc(w, np.broadcast_to(carry, (w.lanes,)))
    return run


def _cndmask(ins: Instr, ctx: Ctx) -> Op:
    d, a, b, m = _operands(ins, 4)
    wd = write_b32(d, ctx)
    mask = lane_mask_reader(m, ctx)
    if a.neg or a.abs or b.neg or b.abs:
        ra, rb = read_f32(a, ctx), read_f32(b, ctx)
        return lambda w: wd(w, np.where(mask(w), rb(w), ra(w)).astype(F32).view(U32))
    ra, rb = read_b32(a, ctx), read_b32(b, ctx)
    return lambda w: wd(w, np.where(mask(w), rb(w), ra(w)).astype(U32))


# ---------------------------------------------------------------------------------------------
# f32

def _fma(a, b, c):
    return (np.asarray(a, dtype=F64) * b + c).astype(F32)


def _fmin(a, b):
    return np.fmin(a, b)


def _fmax(a, b):
    return np.fmax(a, b)


_F32_2: Mapping[str, Callable] = MappingProxyType({
    "v_add_f32": lambda a, b: a + b, "v_sub_f32": lambda a, b: a - b, "v_subrev_f32": lambda a, b: b - a,
    "v_mul_f32": lambda a, b: a * b,
    "v_mul_legacy_f32": lambda a, b: np.where((a == 0) | (b == 0), F32(0), a * b),
    "v_mul_dx9_zero_f32": lambda a, b: np.where((a == 0) | (b == 0), F32(0), a * b),
    "v_min_f32": _fmin, "v_max_f32": _fmax, "v_min_num_f32": _fmin, "v_max_num_f32": _fmax,
    "v_minimum_f32": np.minimum, "v_maximum_f32": np.maximum,
})
_F32_3: Mapping[str, Callable] = MappingProxyType({
    "v_fma_f32": _fma,
    "v_mad_f32": lambda a, b, c: (a * b).astype(F32) + c,
    "v_med3_f32": lambda a, b, c: _fmax(_fmin(a, b), _fmin(_fmax(a, b), c)),
    "v_med3_num_f32": lambda a, b, c: _fmax(_fmin(a, b), _fmin(_fmax(a, b), c)),
    "v_min3_f32": lambda a, b, c: _fmin(_fmin(a, b), c), "v_max3_f32": lambda a, b, c: _fmax(_fmax(a, b), c),
    "v_min3_num_f32": lambda a, b, c: _fmin(_fmin(a, b), c),
    "v_max3_num_f32": lambda a, b, c: _fmax(_fmax(a, b), c),
})
_F32_1: Mapping[str, Callable] = MappingProxyType({
    "v_rcp_f32": lambda a: F32(1) / a, "v_rcp_iflag_f32": lambda a: F32(1) / a,
    "v_rsq_f32": lambda a: F32(1) / np.sqrt(a), "v_sqrt_f32": np.sqrt,
    "v_exp_f32": np.exp2, "v_log_f32": np.log2,
    "v_trunc_f32": np.trunc, "v_floor_f32": np.floor, "v_ceil_f32": np.ceil, "v_rndne_f32": np.rint,
    "v_fract_f32": lambda a: a - np.floor(a),
    "v_sin_f32": lambda a: np.sin(a.astype(F64) * 2 * np.pi), "v_cos_f32": lambda a: np.cos(a.astype(F64) * 2 * np.pi),
})


# Transcendental ops (LLVM's TRANS flag): on gfx940+ another VALU may not read their result at once.
_TRANS = frozenset({"v_rcp_f32", "v_rcp_iflag_f32", "v_rsq_f32", "v_sqrt_f32", "v_exp_f32", "v_log_f32",
                    "v_sin_f32", "v_cos_f32", "v_rcp_f64", "v_rsq_f64", "v_sqrt_f64"})


def _trans_window(ins: Instr, ctx: Ctx, dst: Operand, count: int) -> Callable[[Wave], None] | None:
    """gfx940+: the result of a transcendental op is forwarded late to non-transcendental VALUs."""
    t = ctx.timed
    if t is None or not t.trans_then_valu or ins.base not in _TRANS:
        return None
    first = vgpr_index(dst, ctx, count)
    needs = tuple(t.trans_then_valu if k == READ else 0 for k in ACCESS_KINDS)
    source = f"the transcendental `{ins.text}` at {ins.address:#x} wrote it"

    def open_window(w: Wave) -> None:
        window = Window.after(w.clock, needs, source)
        for k in range(first, first + count):
            w.add_window(k, window)
    return open_window


def _with_window(run: Op, window: Callable[[Wave], None] | None) -> Op:
    if window is None:
        return run

    def both(w: Wave) -> None:
        run(w)
        window(w)
    return both


def _f32_op(fn: Callable, n: int) -> Factory:
    def make(ins: Instr, ctx: Ctx) -> Op:
        ops = _operands(ins, n + 1)
        wd = write_f32(ops[0], ctx, ins)
        what = TRANS_READ if ins.base in _TRANS else READ
        rs = [read_f32(o, ctx, what) for o in ops[1:]]
        if n == 1:
            (r0,) = rs
            return _with_window(lambda w: wd(w, fn(r0(w))), _trans_window(ins, ctx, ops[0], 1))
        if n == 2:
            r0, r1 = rs
            return lambda w: wd(w, fn(r0(w), r1(w)))
        r0, r1, r2 = rs
        return lambda w: wd(w, fn(r0(w), r1(w), r2(w)))
    return make


def _fmac(ins: Instr, ctx: Ctx) -> Op:
    """v_fmac_f32 / v_mac_f32: the destination is also the addend."""
    d, a, b = _operands(ins, 3)
    wd = write_f32(d, ctx, ins)
    ra, rb, rc = read_f32(a, ctx), read_f32(b, ctx), read_f32(Operand(d.text, d.kind, d.index), ctx)
    fused = "fmac" in ins.base
    if fused:
        return lambda w: wd(w, _fma(ra(w), rb(w), rc(w)))
    return lambda w: wd(w, (ra(w) * rb(w)).astype(F32) + rc(w))


def _fmaak(ins: Instr, ctx: Ctx) -> Op:
    """v_fmaak_f32 d, a, b, K = a*b+K; v_fmamk_f32 d, a, K, b = a*K+b."""
    d, a, b, c = _operands(ins, 4)
    wd = write_f32(d, ctx, ins)
    ra, rb, rc = read_f32(a, ctx), read_f32(b, ctx), read_f32(c, ctx)
    return lambda w: wd(w, _fma(ra(w), rb(w), rc(w)))


def _ldexp(ins: Instr, ctx: Ctx) -> Op:
    d, a, b = _operands(ins, 3)
    wd = write_f32(d, ctx, ins)
    ra, rb = read_f32(a, ctx), read_b32(b, ctx)
    return lambda w: wd(w, np.ldexp(ra(w), np.clip(_i32(rb(w)), -400, 400)).astype(F32))


# ---------------------------------------------------------------------------------------------
# f64

_F64_2: Mapping[str, Callable] = MappingProxyType({
    "v_add_f64": lambda a, b: a + b, "v_mul_f64": lambda a, b: a * b,
    "v_min_f64": np.fmin, "v_max_f64": np.fmax, "v_min_num_f64": np.fmin, "v_max_num_f64": np.fmax,
    "v_add_f64_e64": lambda a, b: a + b,
})


def _f64_op(fn: Callable, n: int) -> Factory:
    def make(ins: Instr, ctx: Ctx) -> Op:
        ops = _operands(ins, n + 1)
        wd = write_f64(ops[0], ctx, ins)
        what = TRANS_READ if ins.base in _TRANS else READ
        rs = [read_f64(o, ctx, what) for o in ops[1:]]
        if n == 1:
            (r0,) = rs
            return _with_window(lambda w: wd(w, fn(r0(w))), _trans_window(ins, ctx, ops[0], 2))
        if n == 2:
            r0, r1 = rs
            return lambda w: wd(w, fn(r0(w), r1(w)))
        r0, r1, r2 = rs
        return lambda w: wd(w, fn(r0(w), r1(w), r2(w)))
    return make


def _fma64(a, b, c):
    """a * b + c with one rounding (RNE), lane by lane: the finite lanes exactly in rationals (long double
    cannot hold a 106-bit product), Inf/NaN lanes by numpy's rules, which IEEE fma shares."""
    a, b, c = np.broadcast_arrays(np.asarray(a, F64), np.asarray(b, F64), np.asarray(c, F64))
    with np.errstate(all="ignore"):
        out = a * b + c
    for i in np.flatnonzero(np.isfinite(a) & np.isfinite(b) & np.isfinite(c)):
        out[i] = _fma64_exact(float(a[i]), float(b[i]), float(c[i]))
    return out


def _fma64_exact(a: float, b: float, c: float) -> float:
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        # an exact zero sum is +0 under RNE, unless both terms are zeros of negative sign
        product_negative = math.copysign(1.0, a) * math.copysign(1.0, b) < 0
        return -0.0 if a * b == 0 and c == 0 and product_negative and math.copysign(1.0, c) < 0 else 0.0
    try:
        return float(exact)   # int / int true division rounds correctly
    except OverflowError:
        return math.inf if exact > 0 else -math.inf


# ---------------------------------------------------------------------------------------------
# 64-bit integer

def _shift64(kind: str) -> Factory:
    def make(ins: Instr, ctx: Ctx) -> Op:
        d, s, a = _operands(ins, 3)
        wd = write_b64(d, ctx)
        rs, ra = read_b32(s, ctx), read_b64(a, ctx)

        def run(w: Wave) -> None:
            sh = (np.asarray(rs(w), dtype=U32) & U32(63)).astype(U64)
            x = np.asarray(ra(w), dtype=U64)
            if kind == "lshl":
                r = x << sh
            elif kind == "lshr":
                r = x >> sh
            else:
                r = (x.view(I64) >> sh.astype(I64)).view(U64)
            wd(w, r)
        return run
    return make


def _lshl_add_u64(ins: Instr, ctx: Ctx) -> Op:
    d, a, s, c = _operands(ins, 4)
    wd = write_b64(d, ctx)
    ra, rs, rc = read_b64(a, ctx), read_b32(s, ctx), read_b64(c, ctx)
    return lambda w: wd(w, (np.asarray(ra(w), dtype=U64) << (np.asarray(rs(w), dtype=U32) & U32(7)).astype(U64))
                        + np.asarray(rc(w), dtype=U64))


def _mad_64_32(signed: bool) -> Factory:
    """v_mad_u64_u32 / v_mad_i64_i32: 64-bit a*b + c, carry (or signed overflow) to the SGPR mask."""
    def make(ins: Instr, ctx: Ctx) -> Op:
        d, sd, a, b, c = _operands(ins, 5)
        wd = write_b64(d, ctx)
        wc = None if (sd.kind == "special" and sd.name == "null") else lane_mask_writer(sd, ctx)
        ra, rb, rc = read_b32(a, ctx), read_b32(b, ctx), read_b64(c, ctx)

        def run(w: Wave) -> None:
            cc = np.asarray(rc(w), dtype=U64)
            if signed:
                prod = _i64(ra(w)) * _i64(rb(w))
                total = (prod.view(U64) + cc).view(I64)
                ci = cc.view(I64)
                carry = ((prod >= 0) == (ci >= 0)) & ((total >= 0) != (prod >= 0))
                low = total.view(U64)
            else:
                prod = _u64(ra(w)) * _u64(rb(w))
                low = prod + cc
                carry = low < cc
            if wc is not None:
                wc(w, np.broadcast_to(carry, (w.lanes,)))
            wd(w, low)
        return run
    return make


def _mov_b64(ins: Instr, ctx: Ctx) -> Op:
    d, a = _operands(ins, 2)
    wd, ra = write_b64(d, ctx), read_b64(a, ctx)
    return lambda w: wd(w, ra(w))


# ---------------------------------------------------------------------------------------------
# Moves and lane ops

def _mov(ins: Instr, ctx: Ctx) -> Op:
    d, a = _operands(ins, 2)
    wd = write_b32(d, ctx)
    if a.neg or a.abs:
        rf = read_f32(a, ctx)
        return lambda w: wd(w, np.asarray(rf(w), dtype=F32).view(U32))
    ra = read_b32(a, ctx)
    return lambda w: wd(w, ra(w))


def _lane_access_guards(ins: Instr, ctx: Ctx, src: Operand | None, select: Operand | None) -> list[Callable[[Wave], None]]:
    """CDNA hazards of v_readlane/v_readfirstlane/v_writelane: a lane-select SGPR a VALU wrote, and
    on gfx940+ exec or the source VGPR a VALU just wrote."""
    t = ctx.timed
    if t is None:
        return []
    guards = [valu_sgpr_guard((EXEC_LO, EXEC_HI), ctx, t.valu_exec_then_lane_access, f"in force for `{ins.text}`")]
    if select is not None and select.kind == "sgpr":
        guards.append(valu_sgpr_guard((select.index,), ctx, t.valu_sgpr_then_lane_select, "used as the lane select"))
    if src is not None and src.kind in ("vgpr", "agpr"):
        guards.append(valu_vgpr_guard(vgpr_index(src, ctx, 1), 1, ctx, t.valu_vgpr_then_readlane,
                                      f"read by `{ins.text}`"))
    return [g for g in guards if g is not None]


def _readfirstlane(ins: Instr, ctx: Ctx) -> Op:
    d, a = _operands(ins, 2)
    wd = swrite(d, ctx, valu=True)
    ra = read_b32(a, ctx)
    guards = _lane_access_guards(ins, ctx, a, None)

    def run(w: Wave) -> None:
        for g in guards:
            g(w)
        v = np.broadcast_to(ra(w), (w.lanes,))
        lanes = np.flatnonzero(w.exec_mask)
        wd(w, int(v[lanes[0] if lanes.size else 0]))
    return run


def _readlane(ins: Instr, ctx: Ctx) -> Op:
    d, a, s = _operands(ins, 3)
    wd, ra, rs = swrite(d, ctx, valu=True), read_b32(a, ctx), sread(s, ctx)
    guards = _lane_access_guards(ins, ctx, a, s)

    def run(w: Wave) -> None:
        for g in guards:
            g(w)
        v = np.broadcast_to(ra(w), (w.lanes,))
        wd(w, int(v[rs(w) & (w.lanes - 1)]))
    return run


def _writelane(ins: Instr, ctx: Ctx) -> Op:
    d, a, s = _operands(ins, 3)
    ra, rs = sread(a, ctx), sread(s, ctx)
    i = vgpr_index(d, ctx, 1)
    guards = _lane_access_guards(ins, ctx, None, s)
    t = ctx.timed
    if t is not None and a.kind == "sgpr":
        data = valu_sgpr_guard((a.index,), ctx, t.valu_sgpr_then_valu, "read by a VALU")
        if data is not None:
            guards.append(data)
    stamp = t is not None

    def run(w: Wave) -> None:
        for g in guards:
            g(w)
        if stamp:
            w.vclock[i] = w.clock
        w.v[rs(w) & (w.lanes - 1), i] = ra(w)
    return run


def _mbcnt(high: bool) -> Factory:
    def make(ins: Instr, ctx: Ctx) -> Op:
        d, a, b = _operands(ins, 3)
        wd, ra, rb = write_b32(d, ctx), sread(a, ctx), read_b32(b, ctx)
        lanes = np.arange(ctx.lanes, dtype=np.int64)
        if high:
            below = np.where(lanes >= 32, (np.int64(1) << np.clip(lanes - 32, 0, 31)) - 1, 0)
        else:
            below = np.where(lanes < 32, (np.int64(1) << np.clip(lanes, 0, 31)) - 1, 0xFFFFFFFF)
        below = below.astype(U32)

        def run(w: Wave) -> None:
            bits = popcount32(below & U32(ra(w)))
            wd(w, bits + rb(w))
        return run
    return make


def _accvgpr(ins: Instr, ctx: Ctx) -> Op:
    return _mov(ins, ctx)


def _swap(ins: Instr, ctx: Ctx) -> Op:
    a, b = _operands(ins, 2)
    ra, rb, wa, wb = read_b32(a, ctx), read_b32(b, ctx), write_b32(a, ctx), write_b32(b, ctx)

    def run(w: Wave) -> None:
        x, y = np.array(ra(w)), np.array(rb(w))
        wa(w, y)
        wb(w, x)
    return run


# ---------------------------------------------------------------------------------------------
# Compares: VOPC writes a lane mask to vcc / an SGPR (inactive lanes 0); v_cmpx also writes exec.

_FLOAT_REL: Mapping[str, Callable] = MappingProxyType({
    "f": lambda a, b: np.zeros(np.broadcast(a, b).shape, dtype=bool),
    "lt": lambda a, b: a < b, "eq": lambda a, b: a == b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
    "lg": lambda a, b: (a < b) | (a > b), "ge": lambda a, b: a >= b,
    "o": lambda a, b: ~(np.isnan(a) | np.isnan(b)), "u": lambda a, b: np.isnan(a) | np.isnan(b),
    "nge": lambda a, b: ~(a >= b), "nlg": lambda a, b: ~((a < b) | (a > b)), "ngt": lambda a, b: ~(a > b),
    "nle": lambda a, b: ~(a <= b), "neq": lambda a, b: ~(a == b), "nlt": lambda a, b: ~(a < b),
    "tru": lambda a, b: np.ones(np.broadcast(a, b).shape, dtype=bool),
    "t": lambda a, b: np.ones(np.broadcast(a, b).shape, dtype=bool),
})
_INT_REL: Mapping[str, Callable] = MappingProxyType({
    "f": _FLOAT_REL["f"], "lt": lambda a, b: a < b, "eq": lambda a, b: a == b, "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b, "ne": lambda a, b: a != b, "lg": lambda a, b: a != b, "ge": lambda a, b: a >= b,
    "t": _FLOAT_REL["t"], "tru": _FLOAT_REL["t"],
})
_VCMP_RE = re.compile(r"^v_cmp(x?)_([a-z]+)_(f16|f32|f64|i16|i32|i64|u16|u32|u64)$")
_VCMP_CLASS_RE = re.compile(r"^v_cmp(x?)_class_(f16|f32|f64)$")


def _cmp_operands(ins: Instr, is_x: bool) -> tuple[Operand | None, Operand, Operand]:
    ops = ins.operands
    if len(ops) == 3:
        return ops[0], ops[1], ops[2]
    if len(ops) == 2 and is_x:
        return None, ops[0], ops[1]
    raise UnsupportedInstruction(f"`{ins.text}`: unexpected operands for a compare")


def _cmp_readers(a: Operand, b: Operand, kind: str, ctx: Ctx, ins: Instr):
    if kind == "f32":
        return read_f32(a, ctx), read_f32(b, ctx)
    if kind == "f64":
        return read_f64(a, ctx), read_f64(b, ctx)
    if kind == "f16":
        return read_f16(a, ctx, half_select(a, ins, 0)), read_f16(b, ctx, half_select(b, ins, 1))
    if kind == "i32":
        ra, rb = read_b32(a, ctx), read_b32(b, ctx)
        return (lambda w: _i32(ra(w))), (lambda w: _i32(rb(w)))
    if kind == "u32":
        return read_b32(a, ctx), read_b32(b, ctx)
    if kind in ("i64", "u64"):
        ra, rb = read_b64(a, ctx), read_b64(b, ctx)
        if kind == "i64":
            return (lambda w: np.asarray(ra(w), dtype=U64).view(I64)), (lambda w: np.asarray(rb(w), dtype=U64).view(I64))
        return ra, rb
    ra16, rb16 = read_b16(a, ctx, half_select(a, ins, 0)), read_b16(b, ctx, half_select(b, ins, 1))
    if kind == "i16":
        return (lambda w: np.asarray(ra16(w)).view(np.int16)), (lambda w: np.asarray(rb16(w)).view(np.int16))
    return ra16, rb16


def _cmp_writer(dst: Operand | None, is_x: bool, ctx: Ctx) -> Callable[[Wave, np.ndarray], None]:
    wd = lane_mask_writer(dst, ctx) if dst is not None else None
    stamp = ctx.timed is not None

    def store(w: Wave, result: np.ndarray) -> None:
        m = np.broadcast_to(result, (w.lanes,)) & w.exec_mask
        if wd is not None:
            wd(w, m)
        if is_x:
            if stamp:
                w.sclock[EXEC_LO] = w.sclock[EXEC_HI] = w.clock
            w.set_exec(int_from_mask(m))
    return store


def _vcmp(ins: Instr, ctx: Ctx) -> Op:
    m = _VCMP_RE.match(ins.base)
    assert m is not None
    is_x, rel, kind = m.group(1) == "x", m.group(2), m.group(3)
    table = _FLOAT_REL if kind.startswith("f") else _INT_REL
    if rel not in table:
        raise UnsupportedInstruction(f"`{ins.text}`: unknown comparison {rel}")
    f = table[rel]
    dst, a, b = _cmp_operands(ins, is_x)
    ra, rb = _cmp_readers(a, b, kind, ctx, ins)
    store = _cmp_writer(dst, is_x, ctx)
    return lambda w: store(w, f(ra(w), rb(w)))


def _class_mask(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    finfo = np.finfo(x.dtype)
    nan = np.isnan(x)
    bits = x.view(f"u{x.dtype.itemsize}")  # the unsigned integer of the float's width
    quiet_bit = {np.dtype(np.float16): 9, np.dtype(F32): 22, np.dtype(F64): 51}[x.dtype]
    quiet = nan & (((bits >> quiet_bit) & 1) == 1)
    neg = np.signbit(x)
    inf = np.isinf(x)
    zero = x == 0
    sub = (~zero) & (np.abs(x) < finfo.tiny) & ~nan
    normal = ~(nan | inf | zero | sub)
    classes = [nan & ~quiet, quiet, inf & neg, normal & neg, sub & neg, zero & neg, zero & ~neg, sub & ~neg,
               normal & ~neg, inf & ~neg]
    out = np.zeros(x.shape, dtype=bool)
    for bit, c in enumerate(classes):
        out |= c & (((mask >> U32(bit)) & U32(1)) == 1)
    return out


def _vcmp_class(ins: Instr, ctx: Ctx) -> Op:
    m = _VCMP_CLASS_RE.match(ins.base)
    assert m is not None
    is_x, kind = m.group(1) == "x", m.group(2)
    dst, a, b = _cmp_operands(ins, is_x)
    if kind == "f32":
        ra = read_f32(a, ctx)
    elif kind == "f64":
        ra = read_f64(a, ctx)
    else:
        ra = read_f16(a, ctx, half_select(a, ins, 0))
    rb = read_b32(b, ctx)
    store = _cmp_writer(dst, is_x, ctx)

    def run(w: Wave) -> None:
        x = np.broadcast_to(np.asarray(ra(w)), (w.lanes,))
        store(w, _class_mask(np.ascontiguousarray(x), np.broadcast_to(np.asarray(rb(w), dtype=U32), (w.lanes,))))
    return run


EXACT: Mapping[str, Factory] = MappingProxyType({
    **{n: _int_op(f, 1) for n, f in _INT1.items()},
    **{n: _int_op(f, 2) for n, f in _INT2.items()},
    **{n: _int_op(f, 3) for n, f in _INT3.items()},
    **{n: _carry_op for n in _CARRY},
    "v_cndmask_b32": _cndmask,
    **{n: _f32_op(f, 1) for n, f in _F32_1.items()},
    **{n: _f32_op(f, 2) for n, f in _F32_2.items()},
    **{n: _f32_op(f, 3) for n, f in _F32_3.items()},
    "v_fmac_f32": _fmac, "v_mac_f32": _fmac, "v_fmaak_f32": _fmaak, "v_fmamk_f32": _fmaak,
    "v_ldexp_f32": _ldexp,
    **{n: _f64_op(f, 2) for n, f in _F64_2.items()},
    "v_fma_f64": _f64_op(_fma64, 3),
    "v_rcp_f64": _f64_op(lambda a: 1.0 / a, 1), "v_sqrt_f64": _f64_op(np.sqrt, 1),
    "v_rsq_f64": _f64_op(lambda a: 1.0 / np.sqrt(a), 1),
    "v_lshlrev_b64": _shift64("lshl"), "v_lshrrev_b64": _shift64("lshr"), "v_ashrrev_i64": _shift64("ashr"),
    "v_lshl_add_u64": _lshl_add_u64,
    "v_mad_u64_u32": _mad_64_32(False), "v_mad_i64_i32": _mad_64_32(True),
    "v_mad_co_u64_u32": _mad_64_32(False), "v_mad_co_i64_i32": _mad_64_32(True),
    "v_mov_b32": _mov, "v_mov_b64": _mov_b64, "v_swap_b32": _swap,
    "v_accvgpr_read_b32": _accvgpr, "v_accvgpr_write_b32": _accvgpr, "v_accvgpr_mov_b32": _accvgpr,
    "v_readfirstlane_b32": _readfirstlane, "v_readlane_b32": _readlane, "v_writelane_b32": _writelane,
    "v_mbcnt_lo_u32_b32": _mbcnt(False), "v_mbcnt_hi_u32_b32": _mbcnt(True),
    "v_nop": lambda ins, ctx: (lambda w: None),
})

PATTERNS: tuple[tuple[re.Pattern[str], Factory], ...] = (
    (_VCMP_CLASS_RE, _vcmp_class),
    (_VCMP_RE, _vcmp),
)
