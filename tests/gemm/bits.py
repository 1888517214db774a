"""Element bit patterns of the GEMM tests' tensors: numpy values to and from f32, f16, bf16 bits and
the 8-bit floats (F8 = fp8, B8 = bf8, in the target's `fp8` encoding: "fnuz" or "ocp").

8-bit floats go through the verifier's codec (verify/float8.py), which is written independently of
the emulator's, so a wrong emulated conversion cannot hide behind its own encoding."""

from __future__ import annotations

import numpy as np

from tensile_lite.model import DataType
from tensile_lite.model.elements import NAN_NEGATIVE_ZERO, float8_spec
from tensile_lite.verify.elements import FLOAT8_ELEMENTS, Element

NAN_BITS = {2: 0x7E00, 4: 0x7FC00000}


def nan_bits(dt: DataType, fp8: str = "fnuz") -> int:
    """A NaN of the element type (the padding the kernels must never read)."""
    if dt.is_8bit_float:
        return _float8(dt, fp8).sentinel
    if dt.is_integral:
        # no NaN: a large value, which visibly corrupts any result it enters
        return {1: 0x7F, 4: 0x40000000}[dt.num_bytes]
    return NAN_BITS[dt.num_bytes]


def to_bits(values: np.ndarray, dt: DataType, fp8: str = "fnuz") -> np.ndarray:
    """float64/32 values -> element bit patterns (uint8 / uint16 / uint32), round to nearest even."""
    if dt.is_8bit_float:
        return f8_saturating(values, dt, fp8)
    if dt is DataType.I8:
        # int8 D: round to nearest even and saturate (epilogue_semantics.md §3.5)
        return np.clip(np.rint(values), -128, 127).astype(np.int8).view(np.uint8)
    if dt is DataType.I:
        return np.rint(values).astype(np.int64).astype(np.uint32)
    if dt is DataType.S:
        return values.astype(np.float32).view(np.uint32)
    if dt is DataType.H:
        return values.astype(np.float16).view(np.uint16)
    f = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (f + 0x7FFF + ((f >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def from_bits(bits: np.ndarray, dt: DataType, fp8: str = "fnuz") -> np.ndarray:
    if dt.is_8bit_float:
        return _float8(dt, fp8).from_bits(bits)
    if dt is DataType.I8:
        return bits.view(np.int8).astype(np.float64)
    if dt is DataType.I:
        return bits.view(np.int32).astype(np.float64)
    if dt is DataType.S:
        return bits.view(np.float32).astype(np.float64)
    if dt is DataType.H:
        return bits.view(np.float16).astype(np.float64)
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def bits_dtype(dt: DataType) -> type:
    return {4: np.uint32, 2: np.uint16, 1: np.uint8}[dt.num_bytes]


def _float8(dt: DataType, fp8: str) -> Element:
    return FLOAT8_ELEMENTS[(dt, fp8)]


def f8_saturating(values: np.ndarray, dt: DataType, fp8: str) -> np.ndarray:
    """What the kernels' D conversion gives (epilogue_semantics.md §3.3): finite values clamped to the
    largest finite one and rounded to nearest even; NaN and infinities as the encoding maps them
    (FNUZ: its one NaN 0x80; OCP E4M3: NaN, sign kept; OCP E5M2: infinity, or NaN 0x7F for NaN)."""
    el = _float8(dt, fp8)
    spec = float8_spec(str(dt.isa_format), fp8)
    x = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(x)
    codes = el.to_bits(el.round(np.where(finite, x, 0.0)))
    sign = np.where(np.signbit(x), 0x80, 0)
    if spec.nan == NAN_NEGATIVE_ZERO:
        special = np.full(x.shape, 0x80)
    elif not spec.has_infinity:
        special = 0x7F | sign
    else:
        infinity = ((1 << spec.exponent_bits) - 1) << spec.mantissa_bits
        special = np.where(np.isnan(x), 0x7F, infinity | sign)
    return np.where(finite, codes, special).astype(np.uint8)
