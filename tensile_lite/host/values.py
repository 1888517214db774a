"""How the runtime encodes scalar values it appends (alpha, beta, activation arguments)."""

from __future__ import annotations

import struct

from tensile_lite.errors import BuildError
from tensile_lite.model import DataType


def scalar(dt: DataType, value: float) -> bytes:
    """alpha or beta in the compute type: f32 4 bytes, f64 8, i32 4 (truncated); a half value is
    followed by its `alpha_2` twin (another half, 0), 2 + 2 bytes."""
    if dt is DataType.S:
        return struct.pack("<f", value)
    if dt is DataType.D:
        return struct.pack("<d", value)
    if dt is DataType.I:
        return struct.pack("<i", int(value))
    if dt is DataType.H:
        return struct.pack("<ee", value, 0.0)
    raise BuildError(f"the runtime has no alpha/beta encoding for compute type {dt.letter} here")


def activation_value(dt: DataType, value: float) -> bytes:
    """One activation argument in the activation compute type (a bf16 one travels as f32; an f16 one
    as the half alone, 2 bytes: spec/epilogue_semantics.md §7 #4)."""
    if dt in (DataType.S, DataType.B):
        return struct.pack("<f", value)
    if dt is DataType.D:
        return struct.pack("<d", value)
    if dt is DataType.I:
        return struct.pack("<i", int(value))
    if dt is DataType.H:
        return struct.pack("<e", value)
    raise BuildError(f"the runtime has no activation-argument encoding for type {dt.letter} here")


def u32(value: int) -> bytes:
    return struct.pack("<I", value & 0xFFFFFFFF)


def pointer(address: int) -> bytes:
    return struct.pack("<Q", address)
