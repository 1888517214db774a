"""8-bit float conversions (fp8 / bf8, in the target's encoding: FNUZ on gfx94x, OCP on gfx950):
operands widened to f16 between the global read and the LDS write (the mixed-input problem types),
and the epilogue's 8-bit C values and D outputs.

Every fp8 and bf8 value is exactly an f16 (the widest, bf8, has f16's exponent range and fewer
mantissa bits; NaN and OCP bf8's infinities carry over), so the conversion through f32 and the
f32 -> f16 pack (round toward zero) never rounds.
"""

from __future__ import annotations

from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.gemm.hazards import valu_mask_wait
from tensile_lite.asm.gemm.plan import CONVERSIONS, OperandPlan, Unsupported
from tensile_lite.asm.modifiers import Sel
from tensile_lite.asm.operands import Reg
from tensile_lite.model import DataType
from tensile_lite.model.elements import float8_spec

# (memory format, MFMA format) -> the instruction that widens two 8-bit values to two f32
_TO_F32 = {(mem, mfma): f"v_cvt_pk_f32_{mem}" for mem, mfma in CONVERSIONS if mfma == "f16"}


def convert_load(e: Emitter, op: OperandPlan, regs: Reg) -> None:
    """Widen one load's packed 8-bit elements (regs[0 : vector/4]) to f16 pairs (regs[0 : vector/2]).

    Registers are converted from the last to the first, and within one the high word first, so no
    source byte is overwritten before it is read. The low word is read in place; the high word is
    shifted down first (the conversion's word select is SDWA-only on gfx9).
    """
    name = _TO_F32.get((op.mem_format, op.mfma_format))
    if name is None:
        raise Unsupported(f"dtype:{op.mem_format}->{op.mfma_format}", "no conversion between these formats")
    isa = e.isa
    widen = isa.op(name)
    v = e.r.vtmp
    pair, high = v[0:2], v[2]
    words = -(-op.vector // 2)
    for word in reversed(range(words)):
        src = regs[word // 2]
        if word % 2:
            e(isa.v_lshrrev_b32(high, 16, src))
            src = high
        e(widen(pair, src))
        e(isa.v_cvt_pkrtz_f16_f32(regs[word], pair[0], pair[1]))


# ---- the epilogue's 8-bit float outputs and C values (epilogue_semantics.md §3.3) -------------------

# the bf16 NaN the software rounding writes (in the top half of an f32)
BF16_NAN = 0x7FFF0000

# v_cmp_class mask of NaN and both infinities: those reach the conversion unclamped
CLASS_NAN_INF = 0x207


def f8_to_f32(e: Emitter, reg: Reg, byte: int, dt: DataType) -> Reg:
    """Byte `byte` of `reg` (an 8-bit float of type dt) as f32, in a scratch register (vtmp[2])."""
    isa = e.isa
    v = e.r.vtmp
    src = reg
    if byte:
        e(isa.v_lshrrev_b32(v[4], 8 * byte, reg))
        src = v[4]
    e(isa.op(f"v_cvt_pk_f32_{dt.isa_format}")(v[2:4], src))
    return v[2]


def saturate_f8(e: Emitter, val: Reg, tmp: Reg, class_mask: Reg, dt: DataType) -> None:
    """val = val clamped to the format's finite range, unless it is NaN or infinite (upstream's
    order: the conversion itself then maps those per encoding)."""
    isa = e.isa
    vcc = e.plan.arch.vcc
    # finite results saturate to the largest finite value of the target's encoding
    top = float8_spec(str(dt.isa_format), str(e.plan.arch.fp8_format)).max_finite
    e(isa.v_max_f32(tmp, -top, val), isa.v_min_f32(tmp, top, tmp))
    e(isa.v_cmp_class_f32(vcc, val, class_mask))
    wait = valu_mask_wait(e.plan.arch)
    if wait:
        e(isa.s_nop(wait - 1))  # gfx94x+ does not interlock a VALU-written vcc read by a VALU
    e(isa.v_cndmask_b32(val, tmp, val, vcc))


def pack_f8(e: Emitter, dst: Reg, lo: Reg, hi: Reg, word: int, dt: DataType) -> None:
    """Word `word` of dst = the 8-bit codes of lo and hi (round to nearest even); the other word kept."""
    e(e.isa.op(f"v_cvt_pk_{dt.isa_format}_f32")(dst, lo, hi, mods=Sel(op_sel=(0, 0, word)) if word else None))


def bf16_round(e: Emitter, val: Reg, tmp: Reg, k7fff: Reg, nan: Reg) -> None:
    """val = round-to-nearest-even bf16 of val in its top 16 bits (NaN becomes 0x7FFF)."""
    isa = e.isa
    vcc = e.plan.arch.vcc
    e(isa.v_bfe_u32(tmp, val, 16, 1))
    e(isa.v_add3_u32(tmp, val, tmp, k7fff))
    e(isa.v_cmp_o_f32(vcc, val, val))
    e(isa.v_cndmask_b32(val, nan, tmp, vcc))
