"""xf32 emulated with bf16 MFMAs (UseF32XEmulation; docs/xf32_emulation.md).

gfx950 has no xf32 MFMA. Each f32 input x is split into hi = bf16(x) and lo = bf16(x - hi) (both
rounded to nearest even; x - hi is exact in f32), and a block's product is the sum of three bf16 MFMAs
on one accumulator: lo*hi, then hi*lo, then hi*hi (the small terms first). lo*lo is left out.

A and B stay f32 in LDS. The lane's f32 inputs of one MFMA (2n registers: the K run the bf16 MFMA takes)
are read into its input buffer as for an f32 kernel and split there, in place, into n registers of
packed hi pairs followed by n registers of packed lo pairs, which are the bf16 MFMA's two operands.
"""

from __future__ import annotations

from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.operands import Reg

# bits of an f32 that its upper bf16 half keeps
_HI_MASK = 0xFFFF0000


def split(e: Emitter, x: Reg, tmp: Reg) -> None:
    """The 2n f32 values in `x` -> [hi pairs (n regs), lo pairs (n regs)] in place; `tmp` holds n + 1
    scratch registers (the hi pairs while the residuals are formed, and one f32 of a hi half)."""
    isa = e.isa
    n = x.count // 2
    hi, half = tmp[0:n], tmp[n]
    for j in range(n):
        e(isa.v_cvt_pk_bf16_f32(hi[j], x[2 * j], x[2 * j + 1]))
    for i in range(2 * n):
        # the hi value as an f32: the bf16 moved into (or kept in) the upper half, low bits zero
        pair = hi[i // 2]
        e(isa.v_lshlrev_b32(half, 16, pair) if i % 2 == 0 else isa.v_and_b32(half, _HI_MASK, pair))
        e(isa.v_sub_f32(x[i], x[i], half))
    # lo pair j lands in register n + j, at or above the residuals it reads; later pairs read lower
    # registers only, so going down never overwrites a residual still needed
    for j in reversed(range(n)):
        e(isa.v_cvt_pk_bf16_f32(x[n + j], x[2 * j], x[2 * j + 1]))
    for j in range(n):
        e(isa.v_mov_b32(x[j], hi[j]))


def scratch_needed(regs: int) -> int:
    """Scratch registers `split` takes for an input buffer of `regs` f32 registers."""
    return regs // 2 + 1


def products(a: Reg, b: Reg) -> tuple[tuple[Reg, Reg], ...]:
    """(A operand, B operand) of the three MFMAs of one block, in issue order: lo*hi, hi*lo, hi*hi."""
    na, nb = a.count // 2, b.count // 2
    a_hi, a_lo, b_hi, b_lo = a[0:na], a[na:2 * na], b[0:nb], b[nb:2 * nb]
    return (a_lo, b_hi), (a_hi, b_lo), (a_hi, b_hi)
