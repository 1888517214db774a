"""Operand readers and writers, built once per instruction when a kernel is compiled.

Each `read_*` returns a function of the wave giving the operand's value: a numpy lane array for
VGPRs, a numpy scalar for SGPRs and constants (numpy broadcasts it). Each `write_*` returns a
function that stores a value under the exec mask. Register bounds are checked here, at compile time,
against what the kernel descriptor allocates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs
import numpy as np

from tensile_lite.emu.arch import ArchInfo
from tensile_lite.emu.errors import CodeObjectError, HazardError, UnsupportedInstruction
from tensile_lite.emu.hazards import WaitStates
from tensile_lite.emu.operands import (
    EXEC_HI,
    EXEC_LO,
    NULL,
    SCALAR_SLOTS,
    TTMP0,
    VCC_LO,
    Instr,
    Operand,
    scalar_slot_name,
)
from tensile_lite.emu.state import (
    MATRIX_WRITE,
    READ,
    SCALAR_KEY,
    TRANS_READ,
    WRITE,
    Wave,
    int_from_mask,
    mask_from_int,
)

U16 = np.uint16
U32 = np.uint32
U64 = np.uint64
F16 = np.float16
F32 = np.float32
F64 = np.float64
MASK32 = 0xFFFFFFFF
MASK64 = 0xFFFFFFFFFFFFFFFF

# A lane value: a numpy array over the lanes (VGPRs) or one numpy scalar (SGPRs, constants) that
# numpy broadcasts against lane arrays.
Lanes = np.ndarray | np.number[Any]
Reader = Callable[[Wave], Lanes]
Writer = Callable[[Wave, Lanes], None]

_F16_INLINE_1_2PI = 0x3118
_F32_INLINE_1_2PI = 0x3E22F983
_F64_INLINE_1_2PI = 0x3FC45F306DC9C882
_1_2PI = 0.15915494309189535


@attrs.frozen(slots=True)
class Ctx:
    """What compiling one kernel's instructions needs to know."""

    arch: ArchInfo
    lanes: int
    kernel: str
    vgprs: int  # registers in the wave's file (unified VGPR+AGPR file on gfx90a+)
    accum_offset: int | None
    sgprs: int
    flush_f32: bool
    check_hazards: bool
    address_index: Mapping[int, int] = attrs.field(factory=dict, hash=False)
    # Wait states the target does not interlock (CDNA), None where it interlocks everything.
    hazards: WaitStates | None = None

    @property
    def timed(self) -> WaitStates | None:
        """The wait-state table to enforce: None when hazards are not checked or all interlocked."""
        return self.hazards if self.check_hazards else None

    @property
    def scratch(self) -> int:
        """First of the spare columns after the VGPR file, used to stage SDWA operands."""
        return self.vgprs


# ---------------------------------------------------------------------------------------------
# Register indices, checked at compile time.

def vgpr_index(op: Operand, ctx: Ctx, count: int | None = None) -> int:
    """Index into the wave's VGPR file of the first register of `op` (v or a)."""
    n = op.count if count is None else count
    if op.kind == "vgpr":
        limit = ctx.accum_offset if ctx.accum_offset is not None else ctx.vgprs
        first = op.index
        if first + n > limit:
            raise CodeObjectError(f"{op.text} is outside the {limit} VGPRs the kernel descriptor gives "
                                  + ("before the AGPRs (accum_offset)" if ctx.accum_offset is not None
                                     else "(next_free_vgpr)"))
        return first
    if op.kind == "agpr":
        if ctx.accum_offset is None:
            raise UnsupportedInstruction(f"{op.text}: {ctx.arch.gfx} has no AGPRs in the emulator")
        first = ctx.accum_offset + op.index
        if first + n > ctx.vgprs:
            raise CodeObjectError(f"{op.text} is outside the {ctx.vgprs - ctx.accum_offset} AGPRs the "
                                  "kernel descriptor allocates (next_free_vgpr - accum_offset)")
        return first
    if op.kind == "scratch":
        return op.index
    raise UnsupportedInstruction(f"{op.text} is not a vector register")


def scalar_index(op: Operand, ctx: Ctx, count: int | None = None) -> int:
    n = op.count if count is None else count
    if op.kind != "sgpr":
        raise UnsupportedInstruction(f"{op.text} is not a scalar register")
    if op.index < VCC_LO and op.index + n > ctx.sgprs:
        raise CodeObjectError(f"{op.text} is outside the {ctx.sgprs} SGPRs the kernel descriptor allocates")
    if op.index >= TTMP0 and op.index + n > SCALAR_SLOTS:
        raise CodeObjectError(f"{op.text} is not a valid register range")
    return op.index


def vkeys(first: int, count: int) -> tuple[int, ...]:
    return tuple(range(first, first + count))


def skeys(first: int, count: int) -> tuple[int, ...]:
    return tuple(SCALAR_KEY + i for i in range(first, first + count))


# ---------------------------------------------------------------------------------------------
# Constants

def const_bits(op: Operand, width: int, kind: str) -> int:
    """Bits of an inline constant or literal as an operand of `width` bits read as `kind`.

    kind is "int" or "float". Integer constants are their two's-complement bits (also for float
    operands); float inline constants are encoded in the operand's float format. A 32-bit literal
    read as a 64-bit float holds the high half (the low half is zero).
    """
    if op.fval is not None:
        v = op.fval
        if width == 16:
            return _F16_INLINE_1_2PI if v == _1_2PI else int(np.array(v, F16).view(U16))
        if width == 32:
            return _F32_INLINE_1_2PI if v == _1_2PI else int(np.array(v, F32).view(U32))
        return _F64_INLINE_1_2PI if v == _1_2PI else int(np.array(v, F64).view(U64))
    assert op.ival is not None
    v = op.ival
    if width == 64 and kind == "float" and not -16 <= v <= 64 and 0 <= v <= MASK32:
        return v << 32
    return v & ((1 << width) - 1)


def _specials(op: Operand, ctx: Ctx | None = None) -> Reader:
    """scc, src_execz, src_vccz, null; `ctx` given for a VALU source, whose execz/vccz CDNA derives
    from exec/vcc only 5 wait states after a VALU wrote them."""
    name = op.name
    if name in ("scc", "src_scc"):
        return lambda w: U32(w.scc)
    if name in ("src_execz", "src_vccz"):
        zero = (lambda w: w.exec_value() == 0) if name == "src_execz" else (lambda w: _vcc(w) == 0)
        slots = (EXEC_LO, EXEC_HI) if name == "src_execz" else (VCC_LO, VCC_LO + 1)
        t = ctx.timed if ctx is not None else None
        guard = valu_sgpr_guard(slots, ctx, t.valu_mask_then_z_source, f"read as {name} by a VALU") \
            if t is not None and ctx is not None else None
        if guard is None:
            return lambda w: U32(zero(w))

        def checked(w: Wave) -> Lanes:
            guard(w)
            return U32(zero(w))
        return checked
    if name == "null":
        return lambda w: U32(0)
    raise UnsupportedInstruction(f"operand {op.text} cannot be read")


def _vcc(w: Wave) -> int:
    lo = w.s[VCC_LO]
    return lo | (w.s[VCC_LO + 1] << 32) if w.lanes == 64 else lo


# ---------------------------------------------------------------------------------------------
# 32-bit readers

def valu_sgpr_guard(slots: tuple[int, ...], ctx: Ctx, need: int, what: str) -> Callable[[Wave], None] | None:
    """A check that no VALU wrote one of the scalar `slots` fewer than `need` wait states ago (the
    hazards of a VALU-written SGPR read by what follows, hazards.WaitStates), or None if none applies."""
    if need <= 0 or ctx.timed is None:
        return None

    def guard(w: Wave) -> None:
        hit = w.valu_wrote(slots, w.sclock, need)
        if hit is not None:
            raise HazardError(f"{scalar_slot_name(hit)} {what} {w.clock - w.sclock[hit] - 1} wait states after a "
                              f"VALU wrote it; the hardware needs {need} (s_nop {need - 1} or independent "
                              "instructions) and does not wait by itself")
    return guard


def valu_vgpr_guard(first: int, count: int, ctx: Ctx, need: int, what: str) -> Callable[[Wave], None] | None:
    """A check that no VALU wrote VGPR-file columns first..first+count-1 fewer than `need` wait
    states ago, or None if none applies."""
    if need <= 0 or ctx.timed is None:
        return None
    cols = tuple(range(first, first + count))
    accum = ctx.accum_offset

    def guard(w: Wave) -> None:
        hit = w.valu_wrote(cols, w.vclock, need)
        if hit is not None:
            name = f"a{hit - accum}" if accum is not None and hit >= accum else f"v{hit}"
            raise HazardError(f"{name} {what} {w.clock - w.vclock[hit] - 1} wait states after a VALU wrote it; "
                              f"the hardware needs {need} (s_nop {need - 1} or independent instructions) "
                              "and does not wait by itself")
    return guard


def _valu_sgpr_reads(i: int, n: int, ctx: Ctx, what: str) -> Callable[[Wave], None] | None:
    """gfx940+: a VALU reading an SGPR a VALU wrote just before (no interlock there)."""
    t = ctx.timed
    if t is None or what not in (READ, TRANS_READ):
        return None
    return valu_sgpr_guard(tuple(range(i, i + n)), ctx, t.valu_sgpr_then_valu, "read by a VALU")


def read_b32(op: Operand, ctx: Ctx, what: str = READ) -> Reader:
    """Raw 32 bits of an operand (register, constant or special); source modifiers not applied.
    `what`: how the instruction reads it (state.READ for VALU, MEM_READ for memory instructions)."""
    if op.kind in ("vgpr", "agpr", "scratch"):
        i = vgpr_index(op, ctx, 1)
        if ctx.check_hazards:
            keys = vkeys(i, 1)

            def rd(w: Wave, i: int = i, keys: tuple[int, ...] = keys) -> Lanes:
                if w.pending:
                    w.check(keys, what)
                return w.v[:, i]
            return rd
        return lambda w: w.v[:, i]
    if op.kind == "sgpr":
        i = scalar_index(op, ctx, 1)
        if ctx.check_hazards:
            keys = skeys(i, 1)
            guard = _valu_sgpr_reads(i, 1, ctx, what)

            def rds(w: Wave, i: int = i, keys: tuple[int, ...] = keys) -> Lanes:
                if w.pending:
                    w.check(keys, "read")
                if guard is not None:
                    guard(w)
                return U32(w.s[i])
            return rds
        return lambda w: U32(w.s[i])
    if op.kind == "const":
        c = U32(const_bits(op, 32, "int"))
        return lambda w: c
    return _specials(op, ctx)


def read_f32(op: Operand, ctx: Ctx, what: str = READ) -> Reader:
    """An operand as f32 with abs/neg applied (and subnormals flushed if the kernel asks for it)."""
    if op.kind == "const":
        c = _apply_float_mods(np.array(const_bits(op, 32, "float"), U32).view(F32)[()], op)
        return lambda w: c
    raw = read_b32(op, ctx, what)
    neg, ab, flush = op.neg, op.abs, ctx.flush_f32
    if not (neg or ab or flush):
        return lambda w: _as_f32(raw(w))

    def rd(w: Wave) -> Lanes:
        x = _as_f32(raw(w))
        if flush:
            x = _flush32(x)
        if ab:
            x = np.abs(x)
        if neg:
            x = -x
        return x
    return rd


def _as_f32(x: Lanes) -> Lanes:
    if isinstance(x, np.ndarray):
        return x.view(F32)
    return U32(x).view(F32)


def _flush32(x: Lanes) -> np.ndarray:
    tiny = np.finfo(F32).tiny
    return np.where((np.abs(x) < tiny) & (x != 0), np.copysign(F32(0), x), x).astype(F32)


def _apply_float_mods(c: Lanes, op: Operand) -> Lanes:
    if op.abs:
        c = np.abs(c)
    if op.neg:
        c = -c
    return c


def half_select(op: Operand, ins: Instr, position: int) -> int:
    """Which 16-bit half an operand reads/writes: `.h` suffix, or op_sel bit `position` (0 = low)."""
    if op.half is not None:
        return op.half
    sel = ins.mod("op_sel")
    if isinstance(sel, tuple) and position < len(sel):
        return sel[position]
    return 0


def read_b16(op: Operand, ctx: Ctx, half: int) -> Reader:
    """16 bits of an operand as uint16 (a constant gives its low 16 bits)."""
    if op.kind == "const":
        kind = "float" if op.fval is not None else "int"
        c = U16(const_bits(op, 16, kind))
        return lambda w: c
    raw = read_b32(op, ctx)
    shift = U32(16 * half)
    return lambda w: np.right_shift(raw(w), shift).astype(U16)


def read_f16(op: Operand, ctx: Ctx, half: int) -> Reader:
    bits = read_b16(op, ctx, half)
    neg, ab = op.neg, op.abs

    def rd(w: Wave) -> Lanes:
        x = np.asarray(bits(w), dtype=U16).view(F16)
        if ab:
            x = np.abs(x)
        if neg:
            x = -x
        return x
    return rd


# ---------------------------------------------------------------------------------------------
# 64-bit readers

def read_b64(op: Operand, ctx: Ctx, kind: str = "int", what: str = READ) -> Reader:
    if op.kind in ("vgpr", "agpr"):
        i = vgpr_index(op, ctx, 2)
        keys = vkeys(i, 2)
        check = ctx.check_hazards

        def rd(w: Wave) -> Lanes:
            if check and w.pending:
                w.check(keys, what)
            return np.ascontiguousarray(w.v[:, i:i + 2]).view(U64).reshape(-1)
        return rd
    if op.kind == "sgpr":
        i = scalar_index(op, ctx, 2)
        keys = skeys(i, 2)
        check = ctx.check_hazards
        guard = _valu_sgpr_reads(i, 2, ctx, what)

        def rds(w: Wave) -> Lanes:
            if check and w.pending:
                w.check(keys, "read")
            if guard is not None:
                guard(w)
            return U64(w.s[i] | (w.s[i + 1] << 32))
        return rds
    if op.kind == "const":
        c = U64(const_bits(op, 64, kind))
        return lambda w: c
    r = _specials(op, ctx)
    return lambda w: U64(r(w))


def read_f64(op: Operand, ctx: Ctx, what: str = READ) -> Reader:
    if op.kind == "const":
        c = _apply_float_mods(np.array(const_bits(op, 64, "float"), U64).view(F64)[()], op)
        return lambda w: c
    raw = read_b64(op, ctx, "float", what)
    neg, ab = op.neg, op.abs

    def rd(w: Wave) -> Lanes:
        x = np.asarray(raw(w), dtype=U64).view(F64)
        if ab:
            x = np.abs(x)
        if neg:
            x = -x
        return x
    return rd


def read_vector_block(op: Operand, ctx: Ctx, count: int, what: str = READ, *,
                      check: bool = True) -> Callable[[Wave], np.ndarray]:
    """`count` consecutive VGPRs/AGPRs of every lane as a contiguous (lanes, count) uint32 copy
    (check=False: the caller checks the registers itself)."""
    i = vgpr_index(op, ctx, count)
    keys = vkeys(i, count)
    check = check and ctx.check_hazards

    def rd(w: Wave) -> np.ndarray:
        if check and w.pending:
            w.check(keys, what)
        return np.ascontiguousarray(w.v[:, i:i + count])
    return rd


# ---------------------------------------------------------------------------------------------
# Writers

def write_b32(op: Operand, ctx: Ctx) -> Writer:
    """A VALU's 32-bit VGPR destination."""
    if op.kind in ("vgpr", "agpr", "scratch"):
        i = vgpr_index(op, ctx, 1)
        keys = vkeys(i, 1)
        check = ctx.check_hazards
        stamp = ctx.timed is not None

        def wr(w: Wave, vals: Lanes) -> None:
            if check and w.pending:
                w.check(keys, WRITE)
            if stamp:
                w.vclock[i] = w.clock
            if w.exec_full:
                w.v[:, i] = vals
            else:
                np.copyto(w.v[:, i], vals, casting="unsafe", where=w.exec_mask)
        return wr
    raise UnsupportedInstruction(f"{op.text} cannot be a vector destination")


def write_b16(op: Operand, ctx: Ctx, half: int, zero_other: bool, *, check: bool = True) -> Writer:
    """Store uint16 values into one half of a VGPR; the other half is kept or zeroed. Loads pass
    check=False (they are checked when they issue, and are no VALU writes)."""
    i = vgpr_index(op, ctx, 1)
    keys = vkeys(i, 1)
    stamp = check and ctx.timed is not None
    check = check and ctx.check_hazards
    shift = U32(16 * half)
    keep = U32(0) if zero_other else U32(0xFFFF0000 if half == 0 else 0x0000FFFF)

    def wr(w: Wave, vals: Lanes) -> None:
        if check and w.pending:
            w.check(keys, WRITE)
        if stamp:
            w.vclock[i] = w.clock
        new = (w.v[:, i] & keep) | (np.asarray(vals, dtype=U16).astype(U32) << shift)
        if w.exec_full:
            w.v[:, i] = new
        else:
            np.copyto(w.v[:, i], new, where=w.exec_mask)
    return wr


def write_block(op: Operand, ctx: Ctx, count: int, *, check: bool = True,
                matrix: bool = False) -> Callable[[Wave, np.ndarray], None]:
    """Store a (lanes, count) uint32 array into `count` consecutive VGPRs under exec.

    Loads pass check=False: whether they may overwrite a register with a load in flight is decided
    when the load is issued (two in-order loads of one kind may). MFMAs pass matrix=True: their D
    is no VALU write for the VALU-to-MFMA hazards and may follow an MFMA on the same registers.
    """
    i = vgpr_index(op, ctx, count)
    keys = vkeys(i, count)
    stamp = check and not matrix and ctx.timed is not None
    check = check and ctx.check_hazards
    what = MATRIX_WRITE if matrix else WRITE

    def wr(w: Wave, vals: np.ndarray) -> None:
        if check and w.pending:
            w.check(keys, what)
        if stamp:
            w.vclock[i:i + count] = [w.clock] * count
        if w.exec_full:
            w.v[:, i:i + count] = vals
        else:
            m = w.exec_mask
            w.v[m, i:i + count] = np.broadcast_to(vals, (w.lanes, count))[m]
    return wr


def write_b64(op: Operand, ctx: Ctx) -> Writer:
    block = write_block(op, ctx, 2)

    def wr(w: Wave, vals: Lanes) -> None:
        v64 = np.broadcast_to(np.asarray(vals, dtype=U64), (w.lanes,))
        block(w, np.ascontiguousarray(v64).view(U32).reshape(w.lanes, 2))
    return wr


def write_f32(op: Operand, ctx: Ctx, ins: Instr) -> Writer:
    """Store f32 results after the VOP3 output modifier (mul:2/4, div:2) and clamp to [0, 1]."""
    raw = write_b32(op, ctx)
    omod = ins.mod("mul")
    div = ins.mod("div")
    clamp = ins.flag("clamp")
    flush = ctx.flush_f32
    scale = F32(omod) if isinstance(omod, int) else (F32(1.0 / div) if isinstance(div, int) else None)
    if scale is None and not clamp and not flush:
        return lambda w, vals: raw(w, np.asarray(vals, dtype=F32).view(U32))

    def wr(w: Wave, vals: Lanes) -> None:
        x = np.asarray(vals, dtype=F32)
        if scale is not None:
            x = (x * scale).astype(F32)
        if clamp:
            x = np.clip(np.nan_to_num(x, nan=0.0), F32(0), F32(1)).astype(F32)
        if flush:
            x = _flush32(x)
        raw(w, x.view(U32))
    return wr


def write_f64(op: Operand, ctx: Ctx, ins: Instr) -> Writer:
    raw = write_b64(op, ctx)
    clamp = ins.flag("clamp")

    def wr(w: Wave, vals: Lanes) -> None:
        x = np.asarray(vals, dtype=F64)
        if clamp:
            x = np.clip(np.nan_to_num(x, nan=0.0), 0.0, 1.0)
        raw(w, x.view(U64))
    return wr


# ---------------------------------------------------------------------------------------------
# Scalar (SALU) access: Python ints.

def sread(op: Operand, ctx: Ctx, width: int = 32) -> Callable[[Wave], int]:
    """A scalar operand as an unsigned int of `width` bits."""
    if op.kind == "sgpr":
        n = 2 if width == 64 else 1
        i = scalar_index(op, ctx, n)
        keys = skeys(i, n)
        check = ctx.check_hazards
        if n == 1:
            def r1(w: Wave) -> int:
                if check and w.pending:
                    w.check(keys, "read")
                return w.s[i]
            return r1

        def r2(w: Wave) -> int:
            if check and w.pending:
                w.check(keys, "read")
            return w.s[i] | (w.s[i + 1] << 32)
        return r2
    if op.kind == "const":
        c = const_bits(op, width, "int")
        return lambda w: c
    if op.kind == "special":
        r = _specials(op)
        return lambda w: int(r(w))
    raise UnsupportedInstruction(f"{op.text} cannot be a scalar source")


def swrite(op: Operand, ctx: Ctx, width: int = 32, *, valu: bool = False) -> Callable[[Wave, int], None]:
    """Store an int into a scalar destination (masking to width); writes to exec refresh the mask.
    `valu`: the writer is a VALU (v_cmp, v_readlane, carries), whose SGPR writes later readers
    must wait for on CDNA (hazards.WaitStates)."""
    if op.kind == "special" and op.name == "null":
        return lambda w, v: None
    n = 2 if width == 64 else 1
    i = scalar_index(op, ctx, n)
    if i == NULL:
        return lambda w, v: None
    keys = skeys(i, n)
    check = ctx.check_hazards
    stamp = valu and ctx.timed is not None
    touches_exec = i in (EXEC_LO, EXEC_HI) or (n == 2 and i + 1 in (EXEC_LO, EXEC_HI))
    if n == 1:
        def w1(w: Wave, v: int) -> None:
            if check and w.pending:
                w.check(keys, "written")
            if stamp:
                w.sclock[i] = w.clock
            w.s[i] = v & MASK32
            if touches_exec:
                w.refresh_exec()
        return w1

    def w2(w: Wave, v: int) -> None:
        if check and w.pending:
            w.check(keys, "written")
        if stamp:
            w.sclock[i] = w.sclock[i + 1] = w.clock
        w.s[i] = v & MASK32
        w.s[i + 1] = (v >> 32) & MASK32
        if touches_exec:
            w.refresh_exec()
    return w2


def lane_mask_reader(op: Operand, ctx: Ctx) -> Callable[[Wave], np.ndarray]:
    """A VALU's lane-mask operand (vcc, an SGPR pair, or one SGPR on wave32) as a boolean lane array."""
    r = sread(op, ctx, 64 if ctx.lanes == 64 else 32)
    lanes = ctx.lanes
    guard = _valu_sgpr_reads(op.index, ctx.lanes // 32, ctx, READ) if op.kind == "sgpr" else None
    if guard is not None:
        def checked(w: Wave) -> np.ndarray:
            guard(w)
            return mask_from_int(r(w), lanes)
        return checked
    return lambda w: mask_from_int(r(w), lanes)


def lane_mask_writer(op: Operand, ctx: Ctx) -> Callable[[Wave, np.ndarray], None]:
    """A VALU's lane-mask destination: a boolean lane array stored as a mask; inactive lanes write 0
    (as VOPC and carries do)."""
    wr = swrite(op, ctx, 64 if ctx.lanes == 64 else 32, valu=True)

    def store(w: Wave, mask: np.ndarray) -> None:
        m = np.broadcast_to(mask, (w.lanes,))
        if not w.exec_full:
            m = m & w.exec_mask
        wr(w, int_from_mask(m))
    return store
