"""Integer, float and scalar ALU on every target: hand-written cases against numpy and hand values."""

from __future__ import annotations

import numpy as np
import pytest

from tensile_lite.emu import Emulator
from tensile_lite.targets import TARGETS
from tensile_lite.verify.float8 import FORMATS
from tests.emu.conftest import ALL_ARCHS, require_arch
from tests.emu.kernels import build
from tests.emu.lanes import Case, as_u32, f32, lane_kernel, run_lanes

U = np.uint32
CDNA = ("gfx90a", "gfx942", "gfx950")


def _i(x):
    return np.asarray(x, dtype=np.uint32).view(np.int32).astype(np.int64)


def _u(x):
    return np.asarray(x, dtype=np.uint32).astype(np.uint64)


def _sext(v, bits):
    v = np.asarray(v, dtype=np.int64) & ((1 << bits) - 1)
    return np.where(v >> (bits - 1), v - (1 << bits), v)


def _perm(a, b, sel):
    comb = (_u(a) << np.uint64(32)) | _u(b)
    out = np.zeros_like(_u(a))
    for byte in range(4):
        k = (sel >> (8 * byte)) & 0xFF
        if k < 8:
            v = (comb >> np.uint64(8 * k)) & np.uint64(0xFF)
        elif k == 12:
            v = np.zeros_like(comb)
        elif k >= 13:
            v = np.full_like(comb, 0xFF)
        else:
            v = ((comb >> np.uint64(16 * (k - 8) + 15)) & np.uint64(1)) * np.uint64(0xFF)
        out |= v << np.uint64(8 * byte)
    return out.astype(np.uint32)


INT_CASES = [
    Case("add", "  {v_add_nc_u32} {d}, v2, v3", lambda a, b, c, x, y: as_u32(_u(a) + _u(b))),
    Case("sub", "  {v_sub_nc_u32} {d}, v2, v3", lambda a, b, c, x, y: as_u32(_i(a) - _i(b))),
    Case("mul_lo", "  v_mul_lo_u32 {d}, v2, v3", lambda a, b, c, x, y: as_u32(_u(a) * _u(b) & 0xFFFFFFFF)),
    Case("mul_hi_u", "  v_mul_hi_u32 {d}, v2, v3", lambda a, b, c, x, y: as_u32((_u(a) * _u(b)) >> np.uint64(32))),
    Case("mul_hi_i", "  v_mul_hi_i32 {d}, v2, v3", lambda a, b, c, x, y: as_u32((_i(a) * _i(b)) >> 32)),
    Case("mul_u24", "  v_mul_u32_u24 {d}, v2, v3",
         lambda a, b, c, x, y: as_u32((_u(a) & np.uint64(0xFFFFFF)) * (_u(b) & np.uint64(0xFFFFFF)))),
    Case("mul_i24", "  v_mul_i32_i24 {d}, v2, v3", lambda a, b, c, x, y: as_u32(_sext(a, 24) * _sext(b, 24))),
    Case("lshl", "  v_lshlrev_b32 {d}, v3, v2", lambda a, b, c, x, y: as_u32(_u(a) << (_u(b) & np.uint64(31)))),
    Case("lshr", "  v_lshrrev_b32 {d}, v3, v2", lambda a, b, c, x, y: as_u32(_u(a) >> (_u(b) & np.uint64(31)))),
    Case("ashr", "  v_ashrrev_i32 {d}, v3, v2", lambda a, b, c, x, y: as_u32(_i(a) >> (_i(b) & 31))),
    Case("and_or", "  v_and_or_b32 {d}, v2, v3, v4", lambda a, b, c, x, y: (a & b) | c),
    Case("lshl_or", "  v_lshl_or_b32 {d}, v2, 3, v4", lambda a, b, c, x, y: as_u32(_u(a) << np.uint64(3)) | c),
    Case("add3", "  v_add3_u32 {d}, v2, v3, v4", lambda a, b, c, x, y: as_u32(_u(a) + _u(b) + _u(c))),
    Case("add_lshl", "  v_add_lshl_u32 {d}, v2, v3, 2", lambda a, b, c, x, y: as_u32((_u(a) + _u(b)) << np.uint64(2))),
    Case("lshl_add", "  v_lshl_add_u32 {d}, v2, 4, v4", lambda a, b, c, x, y: as_u32((_u(a) << np.uint64(4)) + _u(c))),
    Case("bfe_u", "  v_bfe_u32 {d}, v2, 5, 9", lambda a, b, c, x, y: (a >> U(5)) & U(0x1FF)),
    Case("bfe_i", "  v_bfe_i32 {d}, v2, 8, 12", lambda a, b, c, x, y: as_u32(_sext((a >> U(8)) & U(0xFFF), 12))),
    Case("perm1", "  s_mov_b32 s12, 0x0c050307\n  v_perm_b32 {d}, v2, v3, s12", lambda a, b, c, x, y: _perm(a, b, 0x0C050307)),
    Case("perm2", "  s_mov_b32 s12, 0x0d0c0908\n  v_perm_b32 {d}, v2, v3, s12", lambda a, b, c, x, y: _perm(a, b, 0x0D0C0908)),
    Case("min_i", "  v_min_i32 {d}, v2, v3", lambda a, b, c, x, y: as_u32(np.minimum(_i(a), _i(b)))),
    Case("max_u", "  v_max_u32 {d}, v2, v3", lambda a, b, c, x, y: np.maximum(a, b)),
    Case("med3_i", "  v_med3_i32 {d}, v2, v3, v4",
         lambda a, b, c, x, y: as_u32(np.median(np.stack([_i(a), _i(b), _i(c)]), axis=0).astype(np.int64))),
    Case("cndmask", "  v_cmp_gt_u32 {vcc}, v2, v3\n  s_nop 1\n  v_cndmask_b32 {d}, v4, v2, {vcc}",
         lambda a, b, c, x, y: np.where(a > b, a, c)),
    Case("carry64", "  {v_add_co} v5, {vcc}, v2, v3\n  s_nop 1\n  {v_addc_co} {d}, {vcc}, 0, v4, {vcc}",
         lambda a, b, c, x, y: as_u32(_u(c) + ((_u(a) + _u(b)) >> np.uint64(32)))),
    Case("borrow", "  v_mov_b32 v6, 0\n  {v_sub_co} v5, {vcc}, v2, v3\n  s_nop 1\n  {v_subb_co} {d}, {vcc}, v4, v6, {vcc}",
         lambda a, b, c, x, y: as_u32(_i(c) - (a < b))),
    Case("mad64_hi", "  v_mov_b32 v6, v4\n  v_mov_b32 v7, v3\n"
         "  {v_mad_u64_u32} v[8:9], {smask}, v2, v3, v[6:7]\n  v_mov_b32 {d}, v9",
         lambda a, b, c, x, y: as_u32(((_u(a) * _u(b) + ((_u(b) << np.uint64(32)) | _u(c)))
                                        >> np.uint64(32)) & np.uint64(0xFFFFFFFF))),
    Case("bfi", "  v_bfi_b32 {d}, v2, v3, v4", lambda a, b, c, x, y: (a & b) | (~a & c)),
    Case("alignbit", "  v_alignbit_b32 {d}, v2, v3, 7",
         lambda a, b, c, x, y: as_u32(((_u(a) << np.uint64(32)) | _u(b)) >> np.uint64(7))),
    Case("cvt_f32_u32", "  v_cvt_f32_u32 {d}, v2", lambda a, b, c, x, y: a.astype(np.float32).view(U)),
    Case("not", "  v_not_b32 {d}, v2", lambda a, b, c, x, y: ~a),
    Case("readfirstlane", "  s_nop 0\n  v_readfirstlane_b32 s10, v2\n  s_nop 1\n  v_mov_b32 {d}, s10",
         lambda a, b, c, x, y: np.full_like(a, a[0])),
    Case("lshl64_hi", "  v_lshlrev_b64 v[6:7], 5, v[2:3]\n  v_mov_b32 {d}, v7",
         lambda a, b, c, x, y: as_u32((((_u(b) << np.uint64(32)) | _u(a)) << np.uint64(5)) >> np.uint64(32))),
    Case("lane_id64", "  v_mbcnt_lo_u32_b32 v5, -1, 0\n  v_mbcnt_hi_u32_b32 {d}, -1, v5",
         lambda a, b, c, x, y: np.arange(a.size, dtype=U), archs=CDNA),
    Case("lane_id32", "  v_mbcnt_lo_u32_b32 {d}, -1, 0", lambda a, b, c, x, y: np.arange(a.size, dtype=U),
         archs=("gfx1100", "gfx1201")),
    # Scalar ALU, results broadcast with v_mov.
    Case("s_add_carry", "  {s_add_co_u32} s10, s8, s9\n  {s_addc_co_u32} s11, 0, 0\n  v_mov_b32 {d}, s11",
         lambda a, b, c, x, y: np.full_like(a, (x + y) >> 32)),
    Case("s_sub_i32", "  s_sub_i32 s10, s9, s8\n  v_mov_b32 {d}, s10", lambda a, b, c, x, y: np.full_like(a, (y - x) & 0xFFFFFFFF)),
    Case("s_mul_hi", "  s_mul_hi_u32 s10, s8, s9\n  v_mov_b32 {d}, s10", lambda a, b, c, x, y: np.full_like(a, (x * y) >> 32)),
    Case("s_bfe", "  s_bfe_u32 s10, s8, 0x80004\n  v_mov_b32 {d}, s10", lambda a, b, c, x, y: np.full_like(a, (x >> 4) & 0xFF)),
    Case("s_ctz", "  {s_ctz} s10, s9\n  v_mov_b32 {d}, s10",
         lambda a, b, c, x, y: np.full_like(a, (y & -y).bit_length() - 1)),
    Case("s_min_i", "  s_min_i32 s10, s8, s9\n  v_mov_b32 {d}, s10",
         lambda a, b, c, x, y: np.full_like(a, x if (x - (1 << 32) if x >> 31 else x) < y else y)),
    Case("s_abs", "  s_abs_i32 s10, s8\n  v_mov_b32 {d}, s10", lambda a, b, c, x, y: np.full_like(a, (1 << 32) - x)),
    Case("s_sext16", "  s_sext_i32_i16 s10, s8\n  v_mov_b32 {d}, s10",
         lambda a, b, c, x, y: np.full_like(a, as_u32(_sext(x & 0xFFFF, 16))[()])),
    Case("s_cmp_select", "  s_cmp_lt_i32 s8, s9\n  s_cselect_b32 s10, 11, 22\n  v_mov_b32 {d}, s10",
         lambda a, b, c, x, y: np.full_like(a, 11)),
    Case("s_lshl2_add", "  s_lshl2_add_u32 s10, s9, s8\n  v_mov_b32 {d}, s10",
         lambda a, b, c, x, y: np.full_like(a, ((y << 2) + x) & 0xFFFFFFFF)),
    Case("s_bfm_movk", "  s_bfm_b32 s10, 5, 3\n  s_movk_i32 s11, 0xfff0\n  s_or_b32 s10, s10, s11\n  v_mov_b32 {d}, s10",
         lambda a, b, c, x, y: np.full_like(a, 0xFFFFFFF8)),
    Case("s_buffer_load", "  s_mov_b32 s12, s6\n  s_and_b32 s13, s7, 0xffff\n  s_mov_b32 s14, 8\n  s_mov_b32 s15, {srd3}\n"
         "  {s_buffer_load_b64} s[16:17], s[12:15], 0x4\n  {wait_smem}\n  {s_add_co_u32} s16, s16, s17\n"
         "  v_mov_b32 {d}, s16", lambda a, b, c, x, y: np.full_like(a, a[1])),  # dword 2 is past num_records: 0
    Case("s_lshr64", "  s_mov_b32 s10, s8\n  s_mov_b32 s11, s9\n  s_lshr_b64 s[10:11], s[10:11], 36\n  v_mov_b32 {d}, s10",
         lambda a, b, c, x, y: np.full_like(a, y >> 4)),
]


def _float_inputs(lanes: int, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    vals = []
    for _ in range(3):
        v = (rng.standard_normal(lanes) * rng.choice([1e-3, 1.0, 1e3], lanes)).astype(np.float32)
        vals.append(v)
    a, b, c = vals
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 3e38, 65504.0, 1e5, -2.5, 0.75],
                        dtype=np.float32)
    a[: specials.size] = specials
    b[3: 3 + specials.size] = specials
    # lane 20: 1 + 2^-12 squared needs the fused rounding to see 2^-24 (hand value).
    a[20] = b[20] = np.float32(1 + 2**-12)
    c[20] = np.float32(-(1 + 2**-11))
    return as_u32(a), as_u32(b), as_u32(c)


def _f16(x):
    return f32(x).astype(np.float16)


def _fma(a, b, c):
    return (f32(a).astype(np.float64) * f32(b) + f32(c)).astype(np.float32).view(U)


def _pk16(fn, a, b):
    ah, bh = (np.asarray(v, dtype=U).view(np.uint16).reshape(-1, 2).view(np.float16) for v in (a, b))
    r = fn(ah.astype(np.float32), bh.astype(np.float32)).astype(np.float16)
    return np.ascontiguousarray(r).view(np.uint32).reshape(-1)


FLOAT_CASES = [
    Case("add", "  v_add_f32 {d}, v2, v3", lambda a, b, c, x, y: (f32(a) + f32(b)).view(U)),
    Case("mul", "  v_mul_f32 {d}, v2, v3", lambda a, b, c, x, y: (f32(a) * f32(b)).view(U)),
    Case("fma", "  v_fma_f32 {d}, v2, v3, v4", lambda a, b, c, x, y: _fma(a, b, c)),
    Case("fmac", "  v_mov_b32 {d}, v4\n  v_fmac_f32 {d}, v2, v3", lambda a, b, c, x, y: _fma(a, b, c)),
    Case("subrev", "  v_subrev_f32 {d}, v2, v3", lambda a, b, c, x, y: (f32(b) - f32(a)).view(U)),
    Case("max", "  {v_max_f32} {d}, v2, v3", lambda a, b, c, x, y: np.fmax(f32(a), f32(b)).view(U)),
    Case("min", "  {v_min_f32} {d}, v2, v3", lambda a, b, c, x, y: np.fmin(f32(a), f32(b)).view(U)),
    Case("negabs", "  v_add_f32_e64 {d}, -v2, |v3|", lambda a, b, c, x, y: (-f32(a) + np.abs(f32(b))).view(U)),
    Case("clamp", "  v_mul_f32_e64 {d}, v2, v3 clamp",
         lambda a, b, c, x, y: np.clip(np.nan_to_num(f32(a) * f32(b), nan=0.0), 0, 1).astype(np.float32).view(U)),
    Case("omod", "  v_add_f32_e64 {d}, v2, v3 mul:2", lambda a, b, c, x, y: ((f32(a) + f32(b)) * 2).view(U)),
    Case("inline", "  v_mul_f32 {d}, 0.5, v2\n  v_add_f32 {d}, -4.0, {d}",
         lambda a, b, c, x, y: (f32(a) * np.float32(0.5) - np.float32(4)).view(U)),
    Case("literal", "  v_mul_f32 {d}, 0x40490fdb, v2", lambda a, b, c, x, y: (np.float32(np.pi) * f32(a)).view(U)),
    Case("f16_roundtrip", "  v_cvt_f16_f32 v5, v2\n  v_cvt_f32_f16 {d}, v5",
         lambda a, b, c, x, y: _f16(a).astype(np.float32).view(U)),
    Case("pack_f16", "  v_cvt_f16_f32 v5, v2\n  v_cvt_f16_f32 v6, v3\n  v_pack_b32_f16 {d}, v5, v6",
         lambda a, b, c, x, y: _f16(a).view(np.uint16).astype(U) | (_f16(b).view(np.uint16).astype(U) << U(16))),
    Case("cvt_u32", "  v_cvt_u32_f32 {d}, v2",
         lambda a, b, c, x, y: np.where(np.isnan(f32(a)), 0, np.clip(np.trunc(f32(a).astype(np.float64)), 0, 2**32 - 1)).astype(np.uint64).astype(U)),
    Case("cvt_i32", "  v_cvt_i32_f32 {d}, v2",
         lambda a, b, c, x, y: as_u32(np.where(np.isnan(f32(a)), 0, np.clip(np.trunc(f32(a).astype(np.float64)), -2**31, 2**31 - 1)).astype(np.int64))),
    Case("rcp", "  v_rcp_f32 {d}, v2", lambda a, b, c, x, y: (np.float32(1) / f32(a)).view(U)),
    Case("fma_mix", "  v_cvt_f16_f32 v5, v2\n  v_cvt_f16_f32 v6, v3\n  v_pack_b32_f16 v7, v5, v6\n"
         "  v_fma_mix_f32 {d}, v7, v7, v4 op_sel:[0,1,0] op_sel_hi:[1,1,0]",
         lambda a, b, c, x, y: (_f16(a).astype(np.float64) * _f16(b) + f32(c)).astype(np.float32).view(U)),
    Case("pk_add_f16", "  v_pk_add_f16 {d}, v2, v3", lambda a, b, c, x, y: _pk16(np.add, a, b)),
    Case("pk_mul_f16_opsel", "  v_pk_mul_f16 {d}, v2, v3 op_sel:[1,0] op_sel_hi:[0,1]",
         lambda a, b, c, x, y: _pk16(np.multiply, (a >> U(16)) | (a << U(16)), b)),
    Case("cmp_class", "  s_movk_i32 s12, 0x207\n  v_cmp_class_f32_e64 {smask}, v2, s12\n  s_nop 1\n  v_cndmask_b32_e64 {d}, 0, 1, {smask}",
         lambda a, b, c, x, y: (np.isnan(f32(a)) | np.isinf(f32(a))).astype(U)),
    Case("cmp_lt", "  v_cmp_lt_f32 {vcc}, v2, v3\n  s_nop 1\n  v_cndmask_b32 {d}, v3, v2, {vcc}",
         lambda a, b, c, x, y: np.where(f32(a) < f32(b), a, b)),
    Case("exp", "  v_exp_f32 {d}, v2", lambda a, b, c, x, y: np.exp2(f32(a)).view(U)),
    Case("pk_mul_f32", "  v_pk_mul_f32 v[6:7], v[2:3], v[2:3] op_sel_hi:[1,0]\n  v_mov_b32 {d}, v7",
         lambda a, b, c, x, y: (f32(b) * f32(a)).view(U), archs=CDNA),
    Case("f64_mul_hi", "  v_mul_f64 v[6:7], v[2:3], v[2:3]\n  v_mov_b32 {d}, v7",
         lambda a, b, c, x, y: (lambda p: np.ascontiguousarray(p * p).view(U).reshape(-1, 2)[:, 1])(
             np.ascontiguousarray(np.stack([a, b], axis=1)).view(np.float64).reshape(-1))),
    Case("bf16_pack", "  v_cvt_pk_bf16_f32 {d}, v2, v3",
         lambda a, b, c, x, y: _bf16(a) | (_bf16(b) << U(16)), archs=("gfx950",)),
    # SDWA (gfx9): selected source bytes/words, destination field with pad / preserve.
    Case("sdwa_or", "  v_or_b32_sdwa {d}, v2, v3 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:BYTE_1 "
         "src1_sel:WORD_0", lambda a, b, c, x, y: ((((a >> U(8)) & U(0xFF)) | (b & U(0xFFFF))) & U(0xFFFF)) << U(16),
         archs=CDNA),
    Case("sdwa_preserve", "  v_mov_b32 {d}, v4\n  v_mov_b32_sdwa {d}, v2 dst_sel:BYTE_2 dst_unused:UNUSED_PRESERVE "
         "src0_sel:BYTE_0", lambda a, b, c, x, y: (c & ~U(0xFF0000)) | ((a & U(0xFF)) << U(16)), archs=CDNA),
    Case("sdwa_sext", "  v_add_u32_sdwa {d}, sext(v2), v3 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_0 "
         "src1_sel:DWORD", lambda a, b, c, x, y: as_u32(_sext(a & U(0xFF), 8) + _i(b)), archs=CDNA),
    Case("sdwa_cvt_f16_hi", "  v_mov_b32 {d}, v4\n  v_cvt_f16_f32_sdwa {d}, v2 dst_sel:WORD_1 "
         "dst_unused:UNUSED_PRESERVE", lambda a, b, c, x, y: (c & U(0xFFFF)) | (_f16(a).view(np.uint16).astype(U) << U(16)),
         archs=CDNA),
    # 8-bit floats: gfx94x FNUZ, gfx950 / gfx12 OCP.
    Case("fp8_unpack_hi", "  v_cvt_pk_f32_fp8_sdwa v[6:7], v2 src0_sel:WORD_1\n  v_mov_b32 {d}, v7",
         lambda a, b, c, x, y: _fp8_decode("fnuz", "fp8", a >> U(24)), archs=("gfx942",)),
    Case("bf8_byte2", "  v_cvt_f32_bf8_sdwa {d}, v2 src0_sel:BYTE_2",
         lambda a, b, c, x, y: _fp8_decode("fnuz", "bf8", a >> U(16)), archs=("gfx942",)),
    Case("fp8_unpack_hi_ocp", "  v_cvt_pk_f32_fp8_sdwa v[6:7], v2 src0_sel:WORD_1\n  v_mov_b32 {d}, v7",
         lambda a, b, c, x, y: _fp8_decode("ocp", "fp8", a >> U(24)), archs=("gfx950",)),
    Case("fp8_unpack_gfx12", "  v_cvt_pk_f32_fp8_e64 v[6:7], v2 op_sel:[1,0]\n  v_mov_b32 {d}, v7",
         lambda a, b, c, x, y: _fp8_decode("ocp", "fp8", a >> U(24)), archs=("gfx1201",)),
    Case("bf8_byte_sel_gfx12", "  v_cvt_f32_bf8_e64 {d}, v2 byte_sel:2",
         lambda a, b, c, x, y: _fp8_decode("ocp", "bf8", a >> U(16)), archs=("gfx1201",)),
    Case("fp8_pack_hi", "  s_mov_b32 s12, 0x3c23d70a\n  v_mul_f32 v5, s12, v2\n  v_mul_f32 v6, s12, v3\n"
         "  v_mov_b32 {d}, v4\n  v_cvt_pk_fp8_f32 {d}, v5, v6 op_sel:[0,0,1]",
         lambda a, b, c, x, y: _fp8_pack_hi(a, b, c), archs=("gfx942", "gfx950", "gfx1201")),
]

def _fp8_decode(kind: str, fmt: str, codes) -> np.ndarray:
    """Decode with the verifier's codec (written apart from the emulator's); returns f32 bits."""
    codes = np.asarray(codes, dtype=U) & U(0xFF)
    return FORMATS[(kind, fmt)].decode(codes).astype(np.float32).view(U)


def _fp8_encode(kind: str, x: np.ndarray) -> np.ndarray:
    """RNE to the nearest finite fp8 (E4M3) code; NaN/inf and overflow per the emulator's documented rule."""
    finite_codes = np.arange(0x80 if kind == "fnuz" else 0x7F)
    values = f32(_fp8_decode(kind, "fp8", finite_codes)).astype(np.float64)
    top = values[-1] + (values[-1] - values[-2])
    out = []
    for v in np.asarray(x, dtype=np.float32).tolist():
        neg = np.signbit(v)
        if np.isnan(v):
            out.append(0x80 if kind == "fnuz" else 0x7F | (0x80 if neg else 0))
            continue
        mag = abs(v)
        if mag >= top:
            out.append(0x80 if kind == "fnuz" else 0x7F | (0x80 if neg else 0))
            continue
        dist = np.abs(values - mag)
        ties = np.flatnonzero(dist == dist.min())
        best = int(ties[0]) if ties.size == 1 else int(next(c for c in ties if c % 2 == 0))
        if np.isinf(v) or abs(top - mag) < dist.min() or (abs(top - mag) == dist.min() and best % 2 == 1):
            out.append(0x80 if kind == "fnuz" else 0x7F | (0x80 if neg else 0))
            continue
        out.append(best | (0x80 if neg and not (kind == "fnuz" and best == 0) else 0))
    return np.array(out, dtype=U)


def _fp8_pack_hi(a, b, c):
    scale = np.float32(np.array(0x3C23D70A, dtype=U).view(np.float32))
    kind = str(TARGETS[_CURRENT_ARCH[0]].fp8)
    lo = _fp8_encode(kind, f32(a) * scale)
    hi = _fp8_encode(kind, f32(b) * scale)
    return (c & U(0xFFFF)) | (lo << U(16)) | (hi << U(24))


_CURRENT_ARCH = [""]


def _bf16(bits):
    u = np.asarray(bits, dtype=U).astype(np.uint64)
    nan = (u & np.uint64(0x7FFFFFFF)) > np.uint64(0x7F800000)
    r = (u + np.uint64(0x7FFF) + ((u >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)
    return np.where(nan, (u >> np.uint64(16)) | np.uint64(0x40), r).astype(U) & U(0xFFFF)


@pytest.fixture(scope="module")
def alu_emulators(toolchain, co_dir):
    cache: dict[str, tuple[Emulator, list[Case], list[Case]]] = {}

    def get(arch: str):
        if arch not in cache:
            require_arch(toolchain, arch)
            ints = [c for c in INT_CASES if c.archs is None or arch in c.archs]
            floats = [c for c in FLOAT_CASES if c.archs is None or arch in c.archs]
            co = build(toolchain, co_dir, arch, [lane_kernel(arch, "int_alu", ints),
                                                  lane_kernel(arch, "float_alu", floats)], name="alu")
            cache[arch] = (Emulator(co, toolchain=toolchain), ints, floats)
        return cache[arch]
    return get


def _check(results: np.ndarray, cases: list[Case], inputs, x: int, y: int, floats: bool) -> None:
    failures = []
    for k, case in enumerate(cases):
        with np.errstate(all="ignore"):
            expect = np.broadcast_to(np.asarray(case.expect(*inputs, x, y), dtype=U), results[k].shape)
        got = results[k]
        if floats:
            same = (got == expect) | (np.isnan(f32(got)) & np.isnan(f32(expect)))
        else:
            same = got == expect
        if not same.all():
            lane = int(np.flatnonzero(~same)[0])
            failures.append(f"{case.name}: lane {lane}: got {int(got[lane]):#010x}, expected {int(expect[lane]):#010x} "
                            f"(inputs {[hex(int(v[lane])) for v in inputs]})")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("arch", ALL_ARCHS)
def test_integer_and_scalar_alu(alu_emulators, arch):
    emu, ints, _ = alu_emulators(arch)
    lanes = emu.kernel("int_alu").lanes
    rng = np.random.default_rng(1)
    a, b, c = (rng.integers(0, 2**32, lanes, dtype=np.uint64).astype(U) for _ in range(3))
    a[:6] = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x00FFFFFF]
    b[:6] = [0xFFFFFFFF, 0, 1, 0x80000000, 2, 0x00800000]
    x, y = 0xFFFFFFF0, 0x128
    res = run_lanes(emu, "int_alu", len(ints), a, b, c, x, y)
    _check(res, ints, (a, b, c), x, y, floats=False)


@pytest.mark.parametrize("arch", ALL_ARCHS)
def test_float_alu(alu_emulators, arch):
    emu, _, floats = alu_emulators(arch)
    _CURRENT_ARCH[0] = arch
    lanes = emu.kernel("float_alu").lanes
    a, b, c = _float_inputs(lanes, 7)
    res = run_lanes(emu, "float_alu", len(floats), a, b, c)
    _check(res, floats, (a, b, c), 0, 0, floats=True)


def test_fused_multiply_add_rounds_once(alu_emulators):
    """Hand value: (1 + 2^-12)^2 - (1 + 2^-11) is 2^-24 exactly; an unfused mul+add gives 0."""
    emu, _, floats = alu_emulators("gfx942")
    a, b, c = _float_inputs(64, 7)
    res = run_lanes(emu, "float_alu", len(floats), a, b, c)
    names = [case.name for case in floats]
    assert f32(res[names.index("fma")][20]) == np.float32(2**-24)
    assert f32(res[names.index("fmac")][20]) == np.float32(2**-24)
