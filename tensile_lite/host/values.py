"""How the runtime encodes scalar values it appends (alpha, beta, activation arguments)."""

from __future__ import annotations

import struct
from collections.abc import Mapping

from tensile_lite.errors import BuildError
from tensile_lite.model import DataType

# struct formats of alpha and beta per compute type: an i32 value is truncated; a half value is
# followed by its `alpha_2` twin (another half, 0), 2 + 2 bytes
_SCALAR: Mapping[DataType, str] = {DataType.S: "<f", DataType.D: "<d", DataType.I: "<i", DataType.H: "<ee"}
# ... and of one activation argument per activation compute type: a bf16 one travels as f32, an f16
# one as the half alone, 2 bytes (spec/epilogue_semantics.md §7 #4)
_ACTIVATION: Mapping[DataType, str] = {DataType.S: "<f", DataType.B: "<f", DataType.D: "<d",
                                       DataType.I: "<i", DataType.H: "<e"}


def _pack(fmt: str, value: float) -> bytes:
    if fmt == "<i":
        return struct.pack(fmt, int(value))
    return struct.pack(fmt, value, 0.0) if fmt == "<ee" else struct.pack(fmt, value)


def scalar(dt: DataType, value: float) -> bytes:
    """alpha or beta in the compute type."""
    fmt = _SCALAR.get(dt)
    if fmt is None:
        raise BuildError(f"the runtime has no alpha/beta encoding for compute type {dt.letter} here")
    return _pack(fmt, value)


def activation_value(dt: DataType, value: float) -> bytes:
    """One activation argument in the activation compute type."""
    fmt = _ACTIVATION.get(dt)
    if fmt is None:
        raise BuildError(f"the runtime has no activation-argument encoding for type {dt.letter} here")
    return _pack(fmt, value)


def u32(value: int) -> bytes:
    return struct.pack("<I", value & 0xFFFFFFFF)


def pointer(address: int) -> bytes:
    return struct.pack("<Q", address)
