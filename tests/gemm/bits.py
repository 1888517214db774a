"""Element bit patterns of the GEMM tests' tensors: numpy values to and from f32, f16, bf16 bits and
the 8-bit floats (F8 = fp8, B8 = bf8, in the target's `fp8` encoding: "fnuz" or "ocp")."""

from __future__ import annotations

import numpy as np

from tensile_lite.model import DataType
from tests.gemm import fp8_model

_F8_NAMES = {DataType.F8: "fp8", DataType.B8: "bf8"}

NAN_BITS = {2: 0x7E00, 4: 0x7FC00000}


def nan_bits(dt: DataType, fp8: str = "fnuz") -> int:
    """A NaN of the element type (the padding the kernels must never read)."""
    if dt in _F8_NAMES:
        return fp8_model.nan_code(fp8)
    if dt.is_integral:
        # no NaN: a large value, which visibly corrupts any result it enters
        return {1: 0x7F, 4: 0x40000000}[dt.num_bytes]
    return NAN_BITS[dt.num_bytes]


def to_bits(values: np.ndarray, dt: DataType, fp8: str = "fnuz") -> np.ndarray:
    """float64/32 values -> element bit patterns (uint8 / uint16 / uint32), round to nearest even."""
    if dt in _F8_NAMES:
        # the kernels' conversion: saturating (inputs are generated within range)
        return fp8_model.encode_saturating(values, fp8, _F8_NAMES[dt])
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
    if dt in _F8_NAMES:
        return fp8_model.decode(bits, fp8, _F8_NAMES[dt])
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
