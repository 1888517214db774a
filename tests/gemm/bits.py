"""Element bit patterns of the GEMM tests' tensors: numpy values to and from f32, f16 and bf16 bits."""

from __future__ import annotations

import numpy as np

from tensile_lite.model import DataType

NAN_BITS = {2: 0x7E00, 4: 0x7FC00000}


def to_bits(values: np.ndarray, dt: DataType) -> np.ndarray:
    """float64/32 values -> element bit patterns (uint16 / uint32), round to nearest even."""
    if dt is DataType.S:
        return values.astype(np.float32).view(np.uint32)
    if dt is DataType.H:
        return values.astype(np.float16).view(np.uint16)
    f = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (f + 0x7FFF + ((f >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def from_bits(bits: np.ndarray, dt: DataType) -> np.ndarray:
    if dt is DataType.S:
        return bits.view(np.float32).astype(np.float64)
    if dt is DataType.H:
        return bits.view(np.float16).astype(np.float64)
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def bits_dtype(dt: DataType) -> type:
    return np.uint32 if dt.num_bytes == 4 else np.uint16
