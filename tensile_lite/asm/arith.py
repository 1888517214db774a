"""Instruction sequences kernels need over and over: unsigned 32-bit division by a constant (magic
numbers) and by a runtime value, 64-bit address arithmetic, and buffer resource setup.

Every helper returns a list of instructions (nothing is emitted behind the caller's back), and
chooses scalar or vector instructions from the register file of its destination.
"""

from __future__ import annotations

import attrs

from tensile_lite.asm.errors import AsmError
from tensile_lite.asm.isa import Instruction, InstructionSet
from tensile_lite.asm.operands import SGPR, VGPR, Reg

_U32 = 0xFFFFFFFF


@attrs.frozen(slots=True)
class MagicDivisor:
    """How to divide any 32-bit unsigned n by the constant `divisor` without a divide.

    kind "shift": q = n >> shift (power of two).
    kind "mul":   q = mulhi(n, multiplier) >> shift.
    kind "add":   the magic needs 33 bits; with t = mulhi(n, multiplier) (its low 32 bits),
                  q = (t + ((n - t) >> 1)) >> (shift - 1).
    (Granlund & Montgomery, "Division by invariant integers using multiplication", PLDI 1994.)
    """

    divisor: int
    kind: str
    multiplier: int
    shift: int

    def divide(self, n: int) -> int:
        """The quotient the instruction sequence computes (a model for tests and host code)."""
        if self.kind == "shift":
            return n >> self.shift
        t = (n * self.multiplier) >> 32
        if self.kind == "mul":
            return t >> self.shift
        return (t + ((n - t) >> 1)) >> (self.shift - 1)


def magic_divisor(d: int) -> MagicDivisor:
    """The cheapest exact magic-number form for dividing 32-bit unsigned integers by `d`."""
    if not 1 <= d <= _U32:
        raise AsmError(f"divisor {d} is not a positive 32-bit unsigned integer")
    if d & (d - 1) == 0:
        return MagicDivisor(d, "shift", 0, d.bit_length() - 1)
    ell = d.bit_length()  # ceil(log2 d) for a non-power of two
    for s in range(ell):
        m = -(-(1 << (32 + s)) // d)  # ceil(2^(32+s) / d)
        # exact for every n < 2^32 when the rounding error m*d - 2^(32+s) is at most 2^s
        if m <= _U32 and m * d - (1 << (32 + s)) <= (1 << s):
            return MagicDivisor(d, "mul", m, s)
    m = (1 << (32 + ell)) // d + 1 - (1 << 32)
    return MagicDivisor(d, "add", m, ell)


def _file(r: Reg, what: str) -> int:
    if r.kind not in (SGPR, VGPR):
        raise AsmError(f"{what} must be an SGPR or VGPR, got {r.text}")
    return r.kind


def udiv_const(isa: InstructionSet, q: Reg, n: Reg, d: int, tmp: Reg, r: Reg | None = None) -> list[Instruction]:
    """q = n / d (and r = n % d when given) for a constant d, using one temporary of q's file.

    q, r and tmp must be distinct registers; n may equal r. Scalar when q is an SGPR (n must then
    be one too), vector when q is a VGPR (n may be an SGPR or VGPR).
    """
    file = _file(q, "quotient")
    if tmp.kind != file or (r is not None and r.kind != file):
        raise AsmError(f"udiv_const: quotient {q.text}, remainder and temporary {tmp.text} must share a file")
    if len({q, tmp} | ({r} if r is not None else set())) != (3 if r is not None else 2) or n == q or n == tmp:
        raise AsmError("udiv_const: q, r, tmp and n must be distinct registers (n may equal r)")
    magic = magic_divisor(d)
    out: list[Instruction] = []
    if file == SGPR:
        if magic.kind == "shift":
            out.append(isa.s_lshr_b32(q, n, magic.shift))
        elif magic.kind == "mul":
            out.append(isa.s_mul_hi_u32(tmp, n, magic.multiplier))
            out.append(isa.s_lshr_b32(q, tmp, magic.shift))
        else:
            out += [isa.s_mul_hi_u32(tmp, n, magic.multiplier), isa.s_sub_u32(q, n, tmp),
                    isa.s_lshr_b32(q, q, 1), isa.s_add_u32(q, q, tmp), isa.s_lshr_b32(q, q, magic.shift - 1)]
        if r is not None:
            out += [isa.s_mul_i32(tmp, q, d), isa.s_sub_u32(r, n, tmp)]
        return out
    literal_ok = isa.arch.vop3_literal

    def mul_hi(dst: Reg, src: Reg, k: int) -> list[Instruction]:
        # VOP3 takes a literal only on gfx10+; elsewhere the constant goes through the temporary
        if literal_ok or -16 <= k <= 64:
            return [isa.v_mul_hi_u32(dst, src, k)]
        return [isa.v_mov_b32(dst, k), isa.v_mul_hi_u32(dst, src, dst)]

    if magic.kind == "shift":
        out.append(isa.v_lshrrev_b32(q, magic.shift, n))
    elif magic.kind == "mul":
        out += mul_hi(tmp, n, magic.multiplier)
        out.append(isa.v_lshrrev_b32(q, magic.shift, tmp))
    else:
        out += mul_hi(tmp, n, magic.multiplier)
        out += [isa.v_sub_u32(q, n, tmp), isa.v_lshrrev_b32(q, 1, q), isa.v_add_u32(q, q, tmp),
                isa.v_lshrrev_b32(q, magic.shift - 1, q)]
    if r is not None:
        if literal_ok or -16 <= d <= 64:
            out.append(isa.v_mul_lo_u32(tmp, q, d))
        else:
            out += [isa.v_mov_b32(tmp, d), isa.v_mul_lo_u32(tmp, q, tmp)]
        out.append(isa.v_sub_u32(r, n, tmp))
    return out


# 2^32 - 512 as an f32 bit pattern: scales 1/d to just below 2^32/d so that the integer estimate
# never exceeds the true reciprocal (the classic AMDGPU udiv32 expansion).
_RCP_SCALE = 0x4F7FFFFE


def udiv_vector(isa: InstructionSet, q: Reg, r: Reg, n: Reg, d: Reg, t0: Reg, t1: Reg) -> list[Instruction]:
    """q = n / d and r = n % d for a runtime divisor d (d != 0), in VALU instructions.

    Float reciprocal estimate, one Newton-Raphson step in integers, then two correction steps,
    which is exact for all 32-bit n and d. q, r, t0, t1 are distinct VGPRs; n and d may be SGPRs
    or VGPRs distinct from them. Clobbers vcc (vcc_lo in wave32).
    """
    for reg, what in ((q, "q"), (r, "r"), (t0, "t0"), (t1, "t1")):
        if reg.kind != VGPR or reg.count != 1:
            raise AsmError(f"udiv_vector: {what} must be one VGPR, got {reg.text}")
    if len({q, r, t0, t1}) != 4 or n in (q, r, t0, t1) or d in (q, r, t0, t1):
        raise AsmError("udiv_vector: q, r, t0, t1 must be distinct and differ from n and d")
    vcc = isa.arch.vcc
    out = [isa.v_cvt_f32_u32(t0, d), isa.v_rcp_iflag_f32(t0, t0)]
    if isa.arch.hazards.trans_use:
        out.append(isa.s_nop(isa.arch.hazards.trans_use - 1))
    out += [
        isa.v_mul_f32(t0, _RCP_SCALE, t0),
        isa.v_cvt_u32_f32(t0, t0),          # z ~ 2^32 / d, never above it
        isa.v_sub_u32(t1, 0, d),
        isa.v_mul_lo_u32(t1, t1, t0),       # -d * z (mod 2^32): the error of z
        isa.v_mul_hi_u32(t1, t0, t1),
        isa.v_add_u32(t0, t0, t1),          # z += mulhi(z, err): one Newton-Raphson step
        isa.v_mul_hi_u32(q, n, t0),         # q estimate, at most 2 too small
        isa.v_mul_lo_u32(t1, q, d),
        isa.v_sub_u32(r, n, t1),
    ]
    for _ in range(2):
        out += [
            isa.v_cmp_ge_u32(vcc, r, d),
            isa.v_add_u32(t1, 1, q),
            isa.v_cndmask_b32(q, q, t1, vcc),
            isa.v_sub_u32(t1, r, d),
            isa.v_cndmask_b32(r, r, t1, vcc),
        ]
    return out


def udiv_scalar(isa: InstructionSet, q: Reg, r: Reg, n: Reg, d: Reg, vtmp: Reg) -> list[Instruction]:
    """q = n / d and r = n % d for SGPRs with a runtime divisor, through four temporary VGPRs.

    SALU has no float conversions before gfx11.5, so the work runs on the VALU and the uniform
    results come back with v_readfirstlane. Clobbers vcc.
    """
    if vtmp.kind != VGPR or vtmp.count != 4:
        raise AsmError(f"udiv_scalar: vtmp must be 4 VGPRs, got {vtmp.text}")
    for reg, what in ((q, "q"), (r, "r"), (n, "n"), (d, "d")):
        if reg.kind != SGPR or reg.count != 1:
            raise AsmError(f"udiv_scalar: {what} must be one SGPR, got {reg.text}")
    vq, vr, t0, t1 = vtmp.split(1)
    return [*udiv_vector(isa, vq, vr, n, d, t0, t1), isa.v_readfirstlane_b32(q, vq),
            isa.v_readfirstlane_b32(r, vr)]


def _halves(b: Reg | int) -> tuple[Reg | int, Reg | int]:
    if isinstance(b, int):
        if not -(1 << 63) <= b < (1 << 64):
            raise AsmError(f"64-bit addend {b} is out of range")
        return b & _U32, (b >> 32) & _U32
    if b.count == 2:
        return b[0], b[1]
    if b.count == 1:
        return b, 0
    raise AsmError(f"64-bit addend must be one or two registers or an integer, got {b.text}")


def add64(isa: InstructionSet, dst: Reg, a: Reg, b: Reg | int) -> list[Instruction]:
    """dst = a + b on 64-bit register pairs (b: pair, one register zero-extended, or an integer).

    Scalar (s_add_u32 / s_addc_u32, via SCC) when dst is an SGPR pair; vector (carry through vcc)
    when dst is a VGPR pair.
    """
    if dst.count != 2 or a.count != 2:
        raise AsmError(f"add64 needs register pairs, got {dst.text} and {a.text}")
    lo, hi = _halves(b)
    if _file(dst, "add64 destination") == SGPR:
        return [isa.s_add_u32(dst[0], a[0], lo), isa.s_addc_u32(dst[1], a[1], hi)]
    vcc = isa.arch.vcc
    # constants go first: gfx9 takes a literal only in the first source of the 32-bit encoding
    if isinstance(lo, int):
        return [isa.v_add_co_u32(dst[0], vcc, lo, a[0]), isa.v_addc_co_u32(dst[1], vcc, hi, a[1], vcc)]
    return [isa.v_add_co_u32(dst[0], vcc, a[0], lo), isa.v_addc_co_u32(dst[1], vcc, a[1], hi, vcc)]


def mul32x32_64(isa: InstructionSet, dst: Reg, a: Reg | int, b: Reg | int) -> list[Instruction]:
    """dst (a pair) = a * b as unsigned 32-bit values; dst must not overlap a or b."""
    if dst.count != 2:
        raise AsmError(f"mul32x32_64 needs a destination pair, got {dst.text}")
    for src in (a, b):
        if isinstance(src, Reg) and src.kind == dst.kind and src.index < dst.end and dst.index < src.end:
            raise AsmError(f"mul32x32_64: destination {dst.text} overlaps source {src.text}")
    if _file(dst, "mul32x32_64 destination") == SGPR:
        return [isa.s_mul_hi_u32(dst[1], a, b), isa.s_mul_i32(dst[0], a, b)]
    return [isa.v_mul_hi_u32(dst[1], a, b), isa.v_mul_lo_u32(dst[0], a, b)]


def buffer_resource(isa: InstructionSet, srd: Reg, base: Reg, num_records: Reg | int) -> list[Instruction]:
    """Fill a 4-SGPR buffer resource: 48-bit base address (stride 0), `num_records` bytes as the
    bound, and the target's word 3 (raw 32-bit format with out-of-bounds reads returning 0)."""
    if srd.kind != SGPR or srd.count != 4:
        raise AsmError(f"a buffer resource is 4 SGPRs, got {srd.text}")
    if base.count != 2:
        raise AsmError(f"a buffer base is a register pair, got {base.text}")
    out = []
    if base != srd[0:2]:
        out += [isa.s_mov_b32(srd[0], base[0]), isa.s_mov_b32(srd[1], base[1])]
    out += [isa.s_mov_b32(srd[2], num_records), isa.s_mov_b32(srd[3], isa.arch.srd_word3)]
    return out
