"""The epilogue in int32 (ComputeDataType I: int8 inputs, i32 MFMA accumulators), per element:

    t = alpha * acc                     wrap-around 32-bit arithmetic (v_mul_lo_u32 / v_add_u32)
    t = t * scaleAlphaVec[f]            UseScaleAlphaVec (an i32 vector; a null one is 1)
    t = t + beta * C
    t = act(t)                          the i32 activations (activation.py)
    D = t (int32 D) or clamp(t, -128, 127) (int8 D)

spec/epilogue_semantics.md §1.5 and §3.5. Scales, bias, E and amax are not built for integer
compute (support.py names them).
"""

from __future__ import annotations

from collections.abc import Sequence

from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.operands import Reg


def scale(e: Emitter, values: Sequence[Reg], alpha: Reg) -> None:
    """values = alpha * values (low 32 bits)."""
    e(e.isa.v_mul_lo_u32(v, alpha, v) for v in values)


def add_beta_c(e: Emitter, value: Reg, beta: Reg, c: Reg, byte: int | None, tmp: Reg) -> None:
    """value += beta * C, C an int32 register or (byte not None) the signed byte `byte` of one."""
    isa = e.isa
    if byte is not None:
        e(isa.v_bfe_i32(tmp, c, 8 * byte, 8))
        c = tmp
    e(isa.v_mul_lo_u32(tmp, beta, c), isa.v_add_u32(value, value, tmp))


def saturate_i8(e: Emitter, value: Reg) -> None:
    """value = clamp(value, -128, 127) (signed)."""
    # -128 as its 32-bit pattern: a literal operand (not an inline constant)
    e(e.isa.v_max_i32(value, 0xFFFFFF80, value), e.isa.v_min_i32(value, 127, value))


def pack_i8(e: Emitter, dst: Reg, values: Sequence[Reg]) -> None:
    """dst = the low bytes of four saturated values, the first in byte 0 (values are clobbered)."""
    isa = e.isa
    e(isa.v_and_b32(v, 0xFF, v) for v in values)
    e(isa.v_lshl_or_b32(dst, values[1], 8, values[0]))
    e(isa.v_lshl_or_b32(dst, values[2], 16, dst))
    e(isa.v_lshl_or_b32(dst, values[3], 24, dst))
