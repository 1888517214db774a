"""SDWA (gfx9 sub-dword addressing): any VOP1/VOP2/VOPC operation with byte/word source selects and
a destination select, built around the plain operation.

Sources are staged, already selected and extended, into spare columns after the VGPR file; the plain
operation runs on them and writes a spare column; the selected field of that result is then merged
into the real destination (dst_unused: pad with zeros, sign-extend, or preserve the other bits).
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType

import attrs
import numpy as np

from tensile_lite.emu.access import U32, Ctx, read_b32, write_b32
from tensile_lite.emu.errors import UnsupportedInstruction
from tensile_lite.emu.operands import Instr, Operand
from tensile_lite.emu.state import Wave

Op = Callable[[Wave], int | None]

_SEL = MappingProxyType({"BYTE_0": (0, 8), "BYTE_1": (8, 8), "BYTE_2": (16, 8), "BYTE_3": (24, 8),
                         "WORD_0": (0, 16), "WORD_1": (16, 16), "DWORD": (0, 32)})
_SDWA_KEYS = frozenset({"src0_sel", "src1_sel", "dst_sel", "dst_unused"})
# Spare columns: sources 0 and 1, then the result.
SCRATCH_COLUMNS = 3


def _select(value: np.ndarray, shift: int, width: int, sext: bool) -> np.ndarray:
    x = (np.asarray(value, dtype=U32) >> U32(shift)) & U32((1 << width) - 1 if width < 32 else 0xFFFFFFFF)
    if sext and width < 32:
        sign = U32(1 << (width - 1))
        x = np.where(x & sign, x | U32((0xFFFFFFFF << width) & 0xFFFFFFFF), x)
    return x.astype(U32)


def sdwa(ins: Instr, ctx: Ctx, factory: Callable[[Instr, Ctx], Op]) -> Op:
    if ins.base.startswith(("v_addc", "v_subb", "v_add_co", "v_sub_co", "v_subrev_co", "v_cndmask")):
        raise UnsupportedInstruction(f"`{ins.text}`: SDWA with carries or masks is not emulated")
    ops = ins.operands
    is_cmp = ins.base.startswith("v_cmp")
    srcs = ops[1:]
    if not srcs or len(srcs) > 2:
        raise UnsupportedInstruction(f"`{ins.text}`: unexpected SDWA operands")
    stage = []
    new_srcs: list[Operand] = []
    for k, src in enumerate(srcs):
        sel = ins.mod(f"src{k}_sel", "DWORD")
        bits = _SEL.get(sel) if isinstance(sel, str) else None
        if bits is None:
            raise UnsupportedInstruction(f"`{ins.text}`: unknown select {sel}")
        shift, width = bits
        reader = read_b32(attrs.evolve(src, neg=False, abs=False, sext=False), ctx)
        stage.append((reader, ctx.scratch + k, shift, width, src.sext))
        new_srcs.append(Operand(src.text, "scratch", ctx.scratch + k, neg=src.neg, abs=src.abs))
    dst = ops[0]
    mods = {k: v for k, v in ins.modifiers.items() if k not in _SDWA_KEYS}
    whole = ins.mod("dst_sel", "DWORD") == "DWORD"
    if is_cmp or whole:
        # No destination select: the plain operation writes the real destination (one or more VGPRs).
        new_ops = (dst, *new_srcs)
        merge = None
    else:
        result = Operand(dst.text, "scratch", ctx.scratch + 2)
        new_ops = (result, *new_srcs)
        dsel = ins.mod("dst_sel", "DWORD")
        unused = ins.mod("dst_unused", "UNUSED_PAD")
        dbits = _SEL.get(dsel) if isinstance(dsel, str) else None
        if dbits is None or unused not in ("UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE"):
            raise UnsupportedInstruction(f"`{ins.text}`: unknown destination select")
        dshift, dwidth = dbits
        field = ((1 << dwidth) - 1) << dshift if dwidth < 32 else 0xFFFFFFFF
        old = read_b32(dst, ctx) if unused == "UNUSED_PRESERVE" else None
        write = write_b32(dst, ctx)
        col = ctx.scratch + 2

        def merge(w: Wave) -> None:
            r = w.v[:, col]
            value = ((r & U32((1 << dwidth) - 1)) << U32(dshift)).astype(U32)
            if old is not None:
                value = value | (np.asarray(old(w), dtype=U32) & U32(~field & 0xFFFFFFFF))
            elif unused == "UNUSED_SEXT":
                top = (value >> U32(dshift + dwidth - 1)) & U32(1)
                high = U32((0xFFFFFFFF << (dshift + dwidth)) & 0xFFFFFFFF)
                value = np.where(top == 1, value | high, value).astype(U32)
            write(w, value)
    plain = attrs.evolve(ins, mnemonic=ins.base, encoding="e64", operands=new_ops,
                         modifiers=MappingProxyType(mods))
    op = factory(plain, ctx)
    lanes = ctx.lanes

    def run(w: Wave) -> int | None:
        for reader, col, shift, width, sext in stage:
            w.v[:, col] = _select(np.broadcast_to(reader(w), (lanes,)), shift, width, sext)
        r = op(w)
        if merge is not None:
            merge(w)
        return r
    return run
