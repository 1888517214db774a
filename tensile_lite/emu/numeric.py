"""Number formats the instructions read and write: f16, bf16, xf32 and the four 8-bit float encodings.

Everything works on numpy arrays of raw bits so that register images convert without copies where
possible. Rounding is round-to-nearest-even everywhere, as the hardware's default mode and the
conversion instructions (which force RNE) do.
"""

from __future__ import annotations

from typing import overload

import attrs
import numpy as np
import numpy.typing as npt

from tensile_lite.model.elements import FNUZ, NAN_ALL_ONES, OCP, Float8Spec, float8_spec

U16 = np.uint16
U32 = np.uint32
U64 = np.uint64
F16 = np.float16
F32 = np.float32
F64 = np.float64


def bits_from_f32(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=F32).view(U32)


def bits_from_f16(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=F16).view(U16)


def f32_to_f16_bits(values: np.ndarray) -> np.ndarray:
    """f32 -> f16 bits with RNE; numpy's float16 cast is IEEE round-to-nearest-even (overflow -> inf)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return bits_from_f16(np.asarray(values, dtype=F32).astype(F16))


def bf16_bits_to_f32(bits16: npt.ArrayLike) -> np.ndarray:
    return (np.asarray(bits16, dtype=U32) << U32(16)).view(F32)


def f32_to_bf16_bits(values: np.ndarray) -> np.ndarray:
    """f32 -> bf16 bits, RNE on the 16 dropped bits; NaNs stay NaN (made quiet)."""
    u = bits_from_f32(values).astype(U32)
    nan = (u & U32(0x7FFFFFFF)) > U32(0x7F800000)
    rounded = (u + U32(0x7FFF) + ((u >> U32(16)) & U32(1))) >> U32(16)
    return np.where(nan, (u >> U32(16)) | U32(0x40), rounded).astype(U16)


def round_to_xf32(values: np.ndarray) -> np.ndarray:
    """Keep 10 mantissa bits of an f32 (TF32 precision, f32 range), RNE, NaN kept (spec §6.3)."""
    u = bits_from_f32(values).astype(U32)
    nan = (u & U32(0x7FFFFFFF)) > U32(0x7F800000)
    r = (u + U32(0xFFF) + ((u >> U32(13)) & U32(1))) & U32(0xFFFFE000)
    return np.where(nan, u, r).astype(U32).view(F32)


def flush_f16_subnormals(bits16: np.ndarray) -> np.ndarray:
    """Subnormal f16 (exponent 0, mantissa != 0) -> signed zero."""
    b = np.asarray(bits16, dtype=U16)
    sub = ((b & U16(0x7C00)) == 0) & ((b & U16(0x03FF)) != 0)
    return np.where(sub, b & U16(0x8000), b).astype(U16)


def flush_bf16_subnormals(bits16: np.ndarray) -> np.ndarray:
    b = np.asarray(bits16, dtype=U16)
    sub = ((b & U16(0x7F80)) == 0) & ((b & U16(0x007F)) != 0)
    return np.where(sub, b & U16(0x8000), b).astype(U16)


def flush_f32_subnormals(values: np.ndarray) -> np.ndarray:
    v = np.asarray(values, dtype=F32)
    sub = (v != 0) & (np.abs(v) < np.finfo(F32).tiny)
    return np.where(sub, np.copysign(F32(0), v), v).astype(F32)


@attrs.frozen(slots=True)
class Fp8Format:
    """One 8-bit float encoding: decode table for all 256 codes and RNE encoding.

    `fnuz` formats (gfx94x) have one NaN (0x80), no infinity and no negative zero; the OCP formats
    (gfx950, gfx12) follow the OCP 8-bit float spec (E4M3FN: NaN 0x7F/0xFF; E5M2: IEEE-like).
    """

    name: str
    exp_bits: int
    man_bits: int
    bias: int
    fnuz: bool
    decode_table: np.ndarray = attrs.field(eq=False, repr=False)
    # Finite non-negative values by code (0..max_code), plus one virtual value above max that stands
    # for "rounds past the largest finite value".
    ladder: np.ndarray = attrs.field(eq=False, repr=False)
    max_code: int

    @property
    def max_value(self) -> float:
        return float(self.ladder[self.max_code])

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """uint8 codes -> exact f32 values (subnormals decoded, not flushed)."""
        return self.decode_table[np.asarray(codes, dtype=np.uint8)]

    def encode(self, values: np.ndarray, *, saturate: bool = False) -> np.ndarray:
        """f32 values -> uint8 codes, round to nearest even.

        Finite values past the largest one saturate when `saturate` (the clamp bit); otherwise they
        give NaN (FNUZ, OCP E4M3) or infinity (OCP E5M2). NaN gives NaN; infinity gives the overflow
        result, or the maximum when saturating.
        """
        v = np.asarray(values, dtype=F32)
        a = np.abs(v).astype(F64)
        nan = np.isnan(v)
        ladder = self.ladder
        idx = np.searchsorted(ladder, np.where(nan, 0.0, a), side="left")
        idx = np.clip(idx, 1, len(ladder) - 1)
        lo = idx - 1
        hi = idx
        d_lo = a - ladder[lo]
        d_hi = ladder[hi] - a
        pick_hi = (d_hi < d_lo) | ((d_hi == d_lo) & ((hi & 1) == 0))
        exact = ladder[lo] == a
        mag = np.where(exact, lo, np.where(pick_hi, hi, lo))
        over = (mag > self.max_code) | np.isinf(v)
        neg = np.signbit(v)
        if saturate:
            over_code = np.full(v.shape, self.max_code)
        elif self.fnuz:
            over_code = np.full(v.shape, 0x80)
        elif self.exp_bits == 4:
            over_code = np.full(v.shape, 0x7F)
        else:
            over_code = np.full(v.shape, 0x7C)
        mag = np.where(over, over_code, mag)
        if self.fnuz:
            sign = np.where(neg & (mag != 0) & (mag != 0x80), 0x80, 0)
            nan_code = 0x80
        else:
            sign = np.where(neg, 0x80, 0)
            nan_code = 0x7F if self.exp_bits == 4 else 0x7E
        out = np.where(nan, np.where(self.fnuz, nan_code, nan_code | sign), mag | sign)
        return out.astype(np.uint8)


def _fp8_format(spec: Float8Spec) -> Fp8Format:
    """The instruction's codec of one format: the layout (field widths, bias) is the element-type
    registry's; how codes decode, round and overflow is this module's model of the hardware."""
    exp_bits, man_bits, bias, fnuz = spec.exponent_bits, spec.mantissa_bits, spec.bias, spec.encoding == FNUZ
    fn = "FN" if spec.nan == NAN_ALL_ONES else ""
    name = f"{spec.format} E{exp_bits}M{man_bits}{fn} {spec.encoding.upper()}"
    table = np.zeros(256, dtype=F32)
    emax = (1 << exp_bits) - 1
    for code in range(256):
        s = code >> 7
        e = (code >> man_bits) & emax
        m = code & ((1 << man_bits) - 1)
        if fnuz:
            if code == 0x80:
                table[code] = np.nan
                continue
        elif exp_bits == 5 and e == emax:
            table[code] = (-np.inf if s else np.inf) if m == 0 else np.nan
            continue
        elif exp_bits == 4 and e == emax and m == (1 << man_bits) - 1:
            table[code] = np.nan
            continue
        if e == 0:
            mag = (m / (1 << man_bits)) * 2.0 ** (1 - bias)
        else:
            mag = (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)
        table[code] = -mag if s else mag
    if fnuz:
        max_code = 0x7F
    elif exp_bits == 4:
        max_code = 0x7E
    else:
        max_code = 0x7B
    finite = table[: max_code + 1].astype(F64)
    ulp_top = finite[max_code] - finite[max_code - 1]
    ladder = np.append(finite, finite[max_code] + ulp_top)
    return Fp8Format(name, exp_bits, man_bits, bias, fnuz, table, ladder, max_code)


FP8_FNUZ = _fp8_format(float8_spec("fp8", FNUZ))
BF8_FNUZ = _fp8_format(float8_spec("bf8", FNUZ))
FP8_OCP = _fp8_format(float8_spec("fp8", OCP))
BF8_OCP = _fp8_format(float8_spec("bf8", OCP))

FP8_FORMATS = {FNUZ: (FP8_FNUZ, BF8_FNUZ), OCP: (FP8_OCP, BF8_OCP)}


@overload
def sign_extend(values: int, bits: int) -> int: ...
@overload
def sign_extend(values: np.ndarray, bits: int) -> np.ndarray: ...
def sign_extend(values: np.ndarray | int, bits: int) -> np.ndarray | int:
    """Two's-complement sign extension of the low `bits` bits (works for Python ints and int64 arrays)."""
    mask = (1 << bits) - 1
    sign = 1 << (bits - 1)
    if isinstance(values, int):
        v = values & mask
        return v - (1 << bits) if v & sign else v
    low = np.asarray(values).astype(np.int64) & mask
    return np.where(low & sign, low - (1 << bits), low)
