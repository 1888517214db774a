"""MFMA (CDNA) and WMMA (RDNA3/4) with the operand and result layouts of matrix_instructions.md §3.

Each shape gets index arrays once: for every matrix element, the lane and the element (or register)
that holds it. An instruction then gathers A, B and C with one fancy index each, multiplies the
blocks in float64 (exact products, one rounding to the output type, §7) or int64, and scatters D.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from types import MappingProxyType

import attrs
import numpy as np

from tensile_lite.emu.access import (
    F32,
    F64,
    U32,
    Ctx,
    const_bits,
    read_vector_block,
    valu_sgpr_guard,
    valu_vgpr_guard,
    vgpr_index,
    write_block,
)
from tensile_lite.emu.errors import EmulatorError, HazardError, UnsupportedInstruction
from tensile_lite.emu.hazards import MatrixTiming, matrix_timing
from tensile_lite.emu.numeric import (
    FP8_FORMATS,
    bf16_bits_to_f32,
    flush_bf16_subnormals,
    flush_f16_subnormals,
    flush_f32_subnormals,
    round_to_xf32,
)
from tensile_lite.emu.operands import EXEC_HI, EXEC_LO, Instr, Operand
from tensile_lite.emu.state import (
    AB_READ,
    ACCESS_KINDS,
    MATRIX_WRITE,
    MEM_READ,
    MEM_WRITE,
    READ,
    TRANS_READ,
    WRITE,
    MatrixWrite,
    PendingOp,
    Wave,
    Window,
)
from tensile_lite.model.elements import BY_ISA_FORMAT

Op = Callable[[Wave], int | None]

# Elements per 32-bit register for each input format (the element-type registry's widths); iu8 is
# gfx11/gfx12 WMMA's name for bytes that are signed or unsigned by the instruction's modifiers.
_PER_REG = MappingProxyType({**{fmt: 32 / t.bits for fmt, t in BY_ISA_FORMAT.items()}, "iu8": 4})


@attrs.frozen(slots=True)
class Layout:
    """Index arrays of one matrix-instruction shape (all numpy int arrays)."""

    blocks: int
    m: int
    n: int
    k: int
    a_lane: np.ndarray = attrs.field(eq=False)  # (blocks, m, k)
    a_elem: np.ndarray = attrs.field(eq=False)
    b_lane: np.ndarray = attrs.field(eq=False)  # (blocks, k, n)
    b_elem: np.ndarray = attrs.field(eq=False)
    d_lane: np.ndarray = attrs.field(eq=False)  # (blocks, m, n)
    d_reg: np.ndarray = attrs.field(eq=False)
    # gfx11 WMMA: lanes that must repeat the A/B data of lanes 0-15 (empty elsewhere).
    replicas: tuple[int, ...] = ()

    def __attrs_post_init__(self) -> None:
        # Layouts are cached and shared by every instruction of the shape: make them read-only.
        for arr in (self.a_lane, self.a_elem, self.b_lane, self.b_elem, self.d_lane, self.d_reg):
            arr.flags.writeable = False


@functools.cache
def cdna_layout(m: int, n: int, k: int, blocks: int, per_lane: int, d_regs: int, f64_out: bool) -> Layout:
    """§3.1/§3.2: lanes split into blocks, each block into groups of M lanes holding KL consecutive k."""
    lanes = 64
    per_block = lanes // blocks
    groups = per_block // m
    if groups * per_lane != k or per_block % m:
        raise UnsupportedInstruction(f"MFMA shape {m}x{n}x{k} with {blocks} blocks and {per_lane} elements per "
                                     "lane does not match the CDNA operand layout")
    b_idx, i_idx, k_idx = np.meshgrid(np.arange(blocks), np.arange(m), np.arange(k), indexing="ij")
    a_lane = b_idx * per_block + (k_idx // per_lane) * m + i_idx
    a_elem = k_idx % per_lane
    b_idx2, k_idx2, j_idx = np.meshgrid(np.arange(blocks), np.arange(k), np.arange(n), indexing="ij")
    b_lane = b_idx2 * per_block + (k_idx2 // per_lane) * n + j_idx
    b_elem = k_idx2 % per_lane
    d_lane = np.full((blocks, m, n), -1)
    d_reg = np.full((blocks, m, n), -1)
    if f64_out:
        if blocks != 1 or m != 16:
            raise UnsupportedInstruction("only the 16x16 single-block f64 MFMA layout is emulated")
        for lane in range(lanes):
            for p in range(d_regs // 2):
                i = 4 * p + lane // 16
                d_lane[0, i, lane % 16] = lane
                d_reg[0, i, lane % 16] = p
    else:
        groups_n = lanes // n
        for lane in range(lanes):
            g, j = divmod(lane, n)
            for r in range(d_regs):
                row = (r % 4) + 4 * g + 4 * groups_n * (r // 4)
                blk, i = divmod(row, m)
                d_lane[blk, i, j] = lane
                d_reg[blk, i, j] = r
    if (d_lane < 0).any():
        raise UnsupportedInstruction(f"MFMA {m}x{n}x{k}x{blocks}: result layout does not cover D")
    return Layout(blocks, m, n, k, a_lane, a_elem, b_lane, b_elem, d_lane, d_reg)


@functools.cache
def wmma_layout(family: str, per_lane: int) -> Layout:
    """§3.3, wave32: gfx11 replicates A/B in both half-waves; gfx12 splits K across them."""
    i_idx, k_idx = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    if family == "gfx11":
        a_lane, a_elem = i_idx, k_idx
        replicas = tuple(range(16, 32))
    else:
        if per_lane == 8:  # 16-bit inputs, 4 registers
            half = (k_idx // 4) % 2
            a_elem = 4 * (k_idx // 8) + (k_idx % 4)
        else:  # 8-bit inputs, 2 registers
            half = k_idx // 8
            a_elem = k_idx % 8
        a_lane = i_idx + 16 * half
        replicas = ()
    d_lane = np.zeros((1, 16, 16), dtype=np.int64)
    d_reg = np.zeros((1, 16, 16), dtype=np.int64)
    for i in range(16):
        for j in range(16):
            if family == "gfx11":
                d_lane[0, i, j], d_reg[0, i, j] = 16 * (i % 2) + j, i // 2
            else:
                d_lane[0, i, j], d_reg[0, i, j] = 16 * (i // 8) + j, i % 8
    # B[k][j] sits where A[i=j][k] sits.
    b_lane = a_lane.T[None]
    b_elem = a_elem.T[None]
    return Layout(1, 16, 16, 16, a_lane[None], a_elem[None], b_lane, b_elem, d_lane, d_reg, replicas)


# ---------------------------------------------------------------------------------------------
# Operand decoding: (lanes, regs) uint32 -> (lanes, elements) values

def _decoder(kind: str, ctx: Ctx, flush16: bool, signed: bool = True) -> Callable[[np.ndarray], np.ndarray]:
    if kind == "f16":
        if flush16:
            return lambda r: flush_f16_subnormals(r.view(np.uint16)).view(np.float16).astype(F64)
        return lambda r: r.view(np.float16).astype(F64)
    if kind in ("bf16",):
        if flush16:
            return lambda r: bf16_bits_to_f32(flush_bf16_subnormals(r.view(np.uint16))).astype(F64)
        return lambda r: bf16_bits_to_f32(r.view(np.uint16)).astype(F64)
    if kind == "f32":
        return lambda r: r.view(F32).astype(F64)
    if kind == "xf32":
        return lambda r: round_to_xf32(r.view(F32)).astype(F64)
    if kind in ("i8", "iu8"):
        if signed:
            return lambda r: r.view(np.int8).astype(np.int64)
        return lambda r: r.view(np.uint8).astype(np.int64)
    if kind in ("fp8", "bf8"):
        if ctx.arch.fp8 is None:
            raise UnsupportedInstruction(f"{ctx.arch.gfx} has no 8-bit float matrix inputs")
        fp8, bf8 = FP8_FORMATS[ctx.arch.fp8]
        fmt = fp8 if kind == "fp8" else bf8
        return lambda r: fmt.decode(r.view(np.uint8)).astype(F64)
    if kind == "f64":
        return lambda r: r.view(F64)
    raise UnsupportedInstruction(f"matrix input type {kind} is not emulated")


def _c_reader(op: Operand, ctx: Ctx, regs: int, out: str, timed: bool) -> Callable[[Wave], np.ndarray]:
    """C as (lanes, values) in the output type (float64 or int64); `timed`: its registers are
    checked by the MFMA hazard rules (_hazards) instead of the plain ones."""
    lanes = ctx.lanes
    if op.kind == "const":
        if out == "i32":
            value = const_bits(op, 32, "int")
            c = np.full((lanes, regs), np.int64(np.uint32(value).view(np.int32)))
        elif out == "f64":
            c = np.full((lanes, regs // 2), np.array(const_bits(op, 64, "float"), np.uint64).view(F64)[()])
        else:
            c = np.full((lanes, regs), np.array(const_bits(op, 32, "float"), U32).view(F32)[()], dtype=F64)
        return lambda w: c
    rd = read_vector_block(op, ctx, regs, check=not timed)
    if out == "i32":
        return lambda w: rd(w).view(np.int32).astype(np.int64)
    if out == "f64":
        return lambda w: rd(w).view(F64)
    return lambda w: rd(w).view(F32).astype(F64)


def _finish(out: str, flush_out: bool, clamp: bool) -> Callable[[np.ndarray], np.ndarray]:
    """Block results -> uint32 register images."""
    if out == "i32":
        if clamp:
            return lambda d: np.clip(d, -(1 << 31), (1 << 31) - 1).astype(np.int32).view(U32)
        return lambda d: (d & 0xFFFFFFFF).astype(U32)
    if out == "f64":
        return lambda d: np.ascontiguousarray(d.astype(F64)).view(U32)
    if flush_out:
        return lambda d: flush_f32_subnormals(d.astype(F32)).view(U32)
    return lambda d: d.astype(F32).view(U32)


def _matrix_op(ins: Instr, ctx: Ctx, layout: Layout, a_kind: str, b_kind: str, out: str, *,
               a_signed: bool = True, b_signed: bool = True, flush: bool = False, clamp: bool = False,
               neg: tuple[int, int, int] = (0, 0, 0), timing: MatrixTiming | None = None) -> Op:
    d, a, b, c = ins.operands
    a_regs, b_regs, d_regs = a.count, b.count, d.count
    timing = timing if ctx.timed is not None else None
    read_a = read_vector_block(a, ctx, a_regs, AB_READ)
    read_b = read_vector_block(b, ctx, b_regs, AB_READ)
    read_c = _c_reader(c, ctx, d_regs, out, timing is not None)
    write_d = write_block(d, ctx, d_regs, matrix=True)
    before, after = _hazards(ins, ctx, timing) if timing is not None else (None, None)
    dec_a = _decoder(a_kind, ctx, flush, a_signed)
    dec_b = _decoder(b_kind, ctx, flush, b_signed)
    finish = _finish(out, flush, clamp)
    lanes = ctx.lanes
    value_regs = d_regs // 2 if out == "f64" else d_regs
    integer = out == "i32"
    replicas = np.array(layout.replicas, dtype=np.int64)
    sign_a, sign_b, sign_c = (-1 if x else 1 for x in neg)
    # Flat indices: one np.take per operand instead of 2-D fancy indexing.
    per_a = int(a_regs * _PER_REG[a_kind])
    per_b = int(b_regs * _PER_REG[b_kind])
    take_a = layout.a_lane * per_a + layout.a_elem
    take_b = layout.b_lane * per_b + layout.b_elem
    take_c = layout.d_lane * value_regs + layout.d_reg
    scatter_d = np.empty(lanes * value_regs, dtype=np.int64)
    scatter_d[take_c.reshape(-1)] = np.arange(take_c.size)

    def run(w: Wave) -> None:
        if not w.exec_full:
            raise EmulatorError(f"`{ins.text}` runs with exec {w.exec_value():#x}; matrix instructions are "
                                "only emulated with every lane active")
        if before is not None:
            before(w)
        ra, rb = read_a(w), read_b(w)
        if replicas.size:
            _check_replicas(ins, ra, a, replicas)
            _check_replicas(ins, rb, b, replicas)
        am = dec_a(ra).reshape(-1).take(take_a)
        bm = dec_b(rb).reshape(-1).take(take_b)
        cm = read_c(w).reshape(-1).take(take_c)
        if sign_a < 0:
            am = -am
        if sign_b < 0:
            bm = -bm
        if sign_c < 0:
            cm = -cm
        dm = np.matmul(am, bm) + cm if not integer else np.matmul(am, bm).astype(np.int64) + cm
        result = dm.reshape(-1).take(scatter_d).reshape(lanes, value_regs)
        write_d(w, finish(result).reshape(lanes, d_regs))
        if after is not None:
            after(w)
    return run


def _vector_columns(op: Operand, ctx: Ctx) -> tuple[int, ...]:
    if op.kind not in ("vgpr", "agpr"):
        return ()
    first = vgpr_index(op, ctx)
    return tuple(range(first, first + op.count))


def _hazards(ins: Instr, ctx: Ctx, timing: MatrixTiming) -> tuple[Callable[[Wave], None], Callable[[Wave], None]]:
    """CDNA: what an MFMA must wait for before it reads its operands (VALU writes, exec, earlier
    MFMA results as C) and the windows it opens after issuing (its D, and its C while it reads it)."""
    t = ctx.timed
    assert t is not None
    d, a, b, c = ins.operands
    valu_guards = [g for op in (a, b, c) if op.kind in ("vgpr", "agpr")
                   for g in [valu_vgpr_guard(vgpr_index(op, ctx), op.count, ctx, t.valu_vgpr_then_mfma,
                                             f"read by the MFMA (operand {op.text})")] if g is not None]
    exec_guard = valu_sgpr_guard((EXEC_LO, EXEC_HI), ctx, t.valu_exec_then_mfma, "in force for the MFMA")
    c_cols = _vector_columns(c, ctx)
    d_first, d_count = vgpr_index(d, ctx), d.count
    d_cols = tuple(range(d_first, d_first + d_count))
    c_range = (c_cols[0], len(c_cols)) if c_cols else None
    source = f"the MFMA `{ins.text}` at {ins.address:#x} wrote it"
    needs = {READ: timing.result_read(False), MEM_READ: timing.result_read(True), WRITE: timing.result_write(),
             MEM_WRITE: timing.result_write(), AB_READ: timing.as_source_ab(), MATRIX_WRITE: 0,
             TRANS_READ: timing.result_read(False)}
    d_needs = tuple(needs[k] for k in ACCESS_KINDS)
    war = timing.c_overwrite()
    c_only = tuple(k for k in c_cols if k not in d_cols) if war else ()
    c_needs = tuple(war if k in (WRITE, MEM_WRITE) else 0 for k in ACCESS_KINDS)
    c_source = f"the MFMA `{ins.text}` at {ins.address:#x} read it as C"
    matrix = MatrixWrite(timing, d_first, d_count)

    def before(w: Wave) -> None:
        for g in valu_guards:
            g(w)
        if exec_guard is not None:
            exec_guard(w)
        if w.pending and c_range is not None:
            _check_c(w, ins, c_cols, c_range, timing)

    def after(w: Wave) -> None:
        window = Window.after(w.clock, d_needs, source, matrix)
        for k in d_cols:
            w.add_window(k, window)
        if c_only:
            cw = Window.after(w.clock, c_needs, c_source)
            for k in c_only:
                w.add_window(k, cw)
    return before, after


def _check_c(w: Wave, ins: Instr, cols: tuple[int, ...], c_range: tuple[int, int], reader: MatrixTiming) -> None:
    """C may be an earlier MFMA's result: the hardware chains the same registers back to back but
    needs wait states for overlapping ones (MatrixTiming.as_source_c)."""
    for k in cols:
        op = w.pending.get(k)
        if op is None:
            continue
        if isinstance(op, PendingOp) or op.matrix is None:
            w.check((k,), READ)
            continue
        writer = op.matrix
        same = (writer.first, writer.count) == c_range
        need = writer.timing.as_source_c(reader, same)
        issued = op.issued[0]
        since = w.clock - issued - 1
        if since < need:
            raise HazardError(f"{w.key_name(k)} read as C of `{ins.text}` {since} wait states after "
                              f"{op.sources[0]}; the hardware needs {need} "
                              f"({'the same' if same else 'overlapping, not the same'} registers as that D)")


def _check_replicas(ins: Instr, regs: np.ndarray, op: Operand, replicas: np.ndarray) -> None:
    upper = regs[replicas]
    lower = regs[replicas - 16]
    if not np.array_equal(upper, lower):
        lane = int(replicas[np.flatnonzero((upper != lower).any(axis=1))[0]])
        raise EmulatorError(f"`{ins.text}`: gfx11 WMMA needs lanes 16-31 of {op.text} to repeat lanes 0-15, "
                            f"but lane {lane} differs from lane {lane - 16}")


# ---------------------------------------------------------------------------------------------
# Mnemonics

_MFMA_RE = re.compile(r"^v_mfma_(f32|i32|f64)_(\d+)x(\d+)x(\d+)_?(?:(\d+)b_)?"
                      r"(f16|bf16_1k|bf16|f32|xf32|i8|f64|fp8_fp8|fp8_bf8|bf8_fp8|bf8_bf8|f8f6f4)(_1k)?$")
_F8F6F4 = MappingProxyType({0: "fp8", 1: "bf8"})


def _mfma(ins: Instr, ctx: Ctx) -> Op:
    if ctx.arch.matrix != "cdna":
        raise UnsupportedInstruction(f"`{ins.text}`: {ctx.arch.gfx} has no MFMA")
    m = _MFMA_RE.match(ins.base)
    assert m is not None
    out, mm, nn, kk, _explicit_blocks, in_type, _ = m.groups()
    mm, nn, kk = int(mm), int(nn), int(kk)
    if len(ins.operands) != 4:
        raise UnsupportedInstruction(f"`{ins.text}`: expected 4 operands")
    d, a, b, _c = ins.operands
    if in_type == "f8f6f4":
        a_kind = _F8F6F4.get(ins.int_mod("cbsz"))
        b_kind = _F8F6F4.get(ins.int_mod("blgp"))
        if a_kind is None or b_kind is None:
            raise UnsupportedInstruction(f"`{ins.text}`: only fp8/bf8 (cbsz/blgp 0 or 1) f8f6f4 inputs are emulated")
    else:
        for mod in ("cbsz", "abid", "blgp"):
            if ins.mod(mod, 0):
                raise UnsupportedInstruction(f"`{ins.text}`: {mod} broadcasts are not emulated")
        if "_" in in_type and in_type != "bf16_1k":
            a_kind, b_kind = in_type.split("_")
        else:
            a_kind = b_kind = "bf16" if in_type.startswith("bf16") else in_type
    f64_out = out == "f64"
    dvals = d.count // 2 if f64_out else d.count
    blocks = dvals * 64 // (mm * nn)
    per_lane = int(a.count * _PER_REG[a_kind])
    if b.count != a.count:
        raise UnsupportedInstruction(f"`{ins.text}`: A and B register counts differ")
    layout = cdna_layout(mm, nn, kk, blocks, per_lane, d.count, f64_out)
    flush = ctx.arch.mfma_flushes_f16_denorms and a_kind in ("f16", "bf16")
    neg_mod = ins.mod("neg")
    neg = neg_mod if isinstance(neg_mod, tuple) and len(neg_mod) == 3 else (0, 0, 0)
    timing = matrix_timing(ctx.arch.family, mm, blocks, "f32" if a_kind == "f32" else a_kind,
                           True if in_type == "f8f6f4" else None)
    return _matrix_op(ins, ctx, layout, a_kind, b_kind, out, flush=flush, neg=neg,
                      timing=timing)


_WMMA_RE = re.compile(r"^v_wmma_(f32|i32|f16|bf16)_16x16x16_(f16|bf16|iu8|fp8_fp8|fp8_bf8|bf8_fp8|bf8_bf8)$")


def _wmma(ins: Instr, ctx: Ctx) -> Op:
    family = ctx.arch.matrix
    if family not in ("gfx11", "gfx12"):
        raise UnsupportedInstruction(f"`{ins.text}`: {ctx.arch.gfx} has no WMMA")
    if ctx.lanes != 32:
        raise UnsupportedInstruction(f"`{ins.text}`: only wave32 WMMA is emulated")
    m = _WMMA_RE.match(ins.base)
    assert m is not None
    out, in_type = m.groups()
    if out in ("f16", "bf16"):
        raise UnsupportedInstruction(f"`{ins.text}`: 16-bit-output WMMA is not emulated")
    if len(ins.operands) != 4:
        raise UnsupportedInstruction(f"`{ins.text}`: expected 4 operands")
    neg_lo = ins.tuple_mod("neg_lo", (0, 0, 0))
    neg_hi = ins.tuple_mod("neg_hi", (0, 0, 0))
    if in_type == "iu8":
        a_kind = b_kind = "iu8"
        a_signed, b_signed = bool(neg_lo[0]), bool(neg_lo[1])
        if any(neg_hi):
            raise UnsupportedInstruction(f"`{ins.text}`: neg_hi on iu8 WMMA is not emulated")
    else:
        if any(neg_lo) or any(neg_hi):
            raise UnsupportedInstruction(f"`{ins.text}`: neg_lo/neg_hi on float WMMA are not emulated")
        a_signed = b_signed = True
        if "_" in in_type:
            a_kind, b_kind = in_type.split("_")
        else:
            a_kind = b_kind = in_type
    d, a, b, _c = ins.operands
    per_lane = int(a.count * _PER_REG[a_kind])
    expected = 16 if family == "gfx11" else 8
    if per_lane != expected or b.count != a.count or d.count != 8:
        raise UnsupportedInstruction(f"`{ins.text}`: operand sizes do not match the {family} WMMA layout")
    layout = wmma_layout(family, per_lane)
    return _matrix_op(ins, ctx, layout, a_kind, b_kind, out, a_signed=a_signed, b_signed=b_signed,
                      clamp=ins.flag("clamp"))


PATTERNS: tuple[tuple[re.Pattern[str], Callable[[Instr, Ctx], Op]], ...] = (
    (_MFMA_RE, _mfma),
    (_WMMA_RE, _wmma),
)
EXACT: Mapping[str, Callable[[Instr, Ctx], Op]] = MappingProxyType({})
