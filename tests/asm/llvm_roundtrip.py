"""Test helpers: random valid operands for every slot kind, the real assembler and disassembler,
and a normal form of instruction text so that ours and llvm-objdump's can be compared."""

from __future__ import annotations

import re
import struct
import subprocess
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tensile_lite.asm import (
    DPP,
    DS,
    DS2,
    EXEC,
    EXEC_HI,
    EXEC_LO,
    M0,
    NULL_REG,
    OFF_ADDR,
    VCC,
    VCC_HI,
    VCC_LO,
    Buf,
    CachePolicy,
    Glb,
    Instruction,
    InstructionSet,
    Label,
    Mfma,
    Op,
    OperandError,
    Reg,
    Sel,
    WaitCounts,
    agpr,
    sgpr,
    ttmp,
    vgpr,
)
from tensile_lite.asm.isa import Slot
from tensile_lite.asm.operands import AGPR, SGPR, SPECIAL, TTMP, VGPR
from tensile_lite.asm.table import M_BUF, M_DPP, M_DS, M_DS2, M_GLB, M_MFMA, M_SEL, VOP3P, WMMA
from tensile_lite.codeobj.assemble import assemble
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.targets import get_target

END_LABEL = Label("label_end")
_SPECIALS = {1: (M0, VCC_LO, VCC_HI, EXEC_LO, EXEC_HI), 2: (VCC, EXEC)}
_FLOAT_LITERALS = (1.5, -3.25, 100.5, 1234.0, 0.375, -0.125)
_MAKERS = {VGPR: vgpr, SGPR: sgpr, AGPR: agpr, TTMP: ttmp}


def toolchain_knows(toolchain: Toolchain, arch: str) -> bool:
    return get_target(arch).supported_by_llvm(toolchain.version[0])


# ---------------------------------------------------------------- random operands

def _reg(draw: Any, slot: Slot, kind: int, width: int | None = None) -> Any:
    widths, align, limit = slot.regs[kind]
    w = width if width is not None else draw(st.sampled_from(widths))
    step = align + 1 if w > 1 else 1
    index = draw(st.integers(0, (limit - w) // step)) * step
    return _MAKERS[kind](index, w)


def _int_inline(draw: Any) -> int:
    return draw(st.integers(-16, 64))


def _int_literal(draw: Any) -> int:
    return draw(st.one_of(st.integers(65, 0xFFFFFFFF), st.integers(-0x80000000, -17)))


def _value_source(draw: Any, slot: Slot, width: int, *, floats: bool, literal: bool, specials: bool = True,
                  scalars: bool = True) -> Any:
    choices = ["v"] if VGPR in slot.regs else []
    if scalars:
        choices += [c for c, k in (("s", SGPR), ("t", TTMP)) if k in slot.regs]
        if specials and slot.mask & SPECIAL:
            choices.append("sp")
    choices += ["i"] + (["l"] if literal and width == 1 else [])
    if floats:
        choices += ["fi"] + (["fl"] if literal and width == 1 else [])
    c = draw(st.sampled_from(choices))
    if c == "v":
        return _reg(draw, slot, VGPR, width)
    if c == "s":
        return _reg(draw, slot, SGPR, width)
    if c == "t":
        return _reg(draw, slot, TTMP, width)
    if c == "sp":
        return draw(st.sampled_from(_SPECIALS[width]))
    if c == "i":
        return _int_inline(draw)
    if c == "l":
        return _int_literal(draw)
    if c == "fi":
        return draw(st.sampled_from(sorted(slot.inline_floats)))
    return draw(st.sampled_from(_FLOAT_LITERALS))


def _width(token: str) -> int:
    arg = token.partition(":")[2]
    return int(arg) if arg.isdigit() else 1


def draw_mods(draw: Any, op: Op) -> Any:
    groups = op.mods
    if not groups or draw(st.booleans()):
        return None
    arch = op.arch
    group = groups[0]
    if group in (M_BUF, M_GLB):
        cache = _draw_cache(draw, op)
        if group == M_BUF:
            lo, hi = arch.mubuf_offset
            return Buf(offen=draw(st.booleans()), offset=draw(st.sampled_from((0, hi, draw(st.integers(lo, hi))))),
                       cache=cache)
        lo, hi = arch.global_offset
        return Glb(offset=draw(st.integers(lo, hi)), cache=cache)
    if group == M_DS:
        return DS(offset=draw(st.integers(0, 65535)))
    if group == M_DS2:
        return DS2(offset0=draw(st.integers(0, 255)), offset1=draw(st.integers(0, 255)))
    if group == M_SEL:
        return _draw_sel(draw, op)
    if group == M_MFMA:
        return _draw_mfma(draw, op)
    if group == M_DPP:
        ctrls = [DPP.quad_perm(*draw(st.lists(st.integers(0, 3), min_size=4, max_size=4))),
                 DPP.row(draw(st.sampled_from(("row_shl", "row_shr", "row_ror"))), draw(st.integers(1, 15))),
                 DPP.named(draw(st.sampled_from(("row_mirror", "row_half_mirror"))))]
        if arch.dpp_row_bcast:
            ctrls.append(DPP.named(draw(st.sampled_from(("row_bcast:15", "row_bcast:31")))))
        else:
            ctrls.append(DPP.row(draw(st.sampled_from(("row_share", "row_xmask"))), draw(st.integers(0, 15))))
        ctrl = draw(st.sampled_from(ctrls))
        return DPP(ctrl.ctrl, row_mask=draw(st.integers(1, 15)), bank_mask=draw(st.integers(1, 15)),
                   bound_ctrl=draw(st.booleans()))
    raise AssertionError(group)


def _draw_cache(draw: Any, op: Op) -> CachePolicy:
    arch = op.arch
    if arch.temporal_hints:
        return CachePolicy(th=draw(st.sampled_from((None, "NT", "HT"))),
                           scope=draw(st.sampled_from((None, "SE", "DEV", "SYS"))))
    bits = {b: draw(st.booleans()) for b in arch.cache_bits}
    return CachePolicy(**bits)


_FLOAT_PACKED = re.compile(r"^v_pk_(fma|mul|add|min|max)_f(16|32)$")


def _bits(draw: Any, n: int) -> tuple[int, ...]:
    return tuple(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))


def _draw_sel(draw: Any, op: Op) -> Sel | None:
    name = op.row.name
    if op.row.family == VOP3P:
        n = sum(1 for s in op.slots if s.token.startswith("vh"))
        if name == "v_pk_mov_b32":
            return Sel(op_sel=_bits(draw, n))
        neg = _FLOAT_PACKED.match(name) is not None
        return Sel(op_sel=_bits(draw, n), op_sel_hi=_bits(draw, n),
                   neg_lo=_bits(draw, n) if neg else None, neg_hi=_bits(draw, n) if neg else None)
    if op.row.family == WMMA:
        mi = op.matrix
        assert mi is not None
        if mi.a_type in ("f16", "bf16"):
            return Sel(neg_lo=_bits(draw, 3), neg_hi=(*_bits(draw, 2), 0) if mi.acc_type != "f32" else _bits(draw, 3))
        if mi.a_type.startswith("iu"):
            return Sel(neg_lo=(*_bits(draw, 2), 0), clamp=draw(st.booleans()))
        return None
    if name == "v_pack_b32_f16":
        return Sel(op_sel=(*_bits(draw, 2), 0))
    if name.startswith("v_cvt_pk_"):
        return Sel(op_sel=(0, 0, *_bits(draw, 1)))
    if name.startswith("v_cvt_sr_"):
        return Sel(op_sel=(0, 0, *_bits(draw, 2)))
    raise AssertionError(name)


def _draw_mfma(draw: Any, op: Op) -> Mfma | None:
    mi = op.matrix
    assert mi is not None
    if mi.format_regs:
        return Mfma(cbsz=draw(st.integers(0, 4)), blgp=draw(st.integers(0, 4)))
    if mi.blocks > 1:
        cbsz = draw(st.integers(0, mi.blocks.bit_length() - 1))
        return Mfma(cbsz=cbsz, abid=draw(st.integers(0, (1 << cbsz) - 1)), blgp=draw(st.integers(0, 7)))
    if "gfx94x+" not in op.arch.tags and mi.acc_type != "f64":
        return Mfma(blgp=draw(st.integers(0, 7)))
    return None


def draw_operands(draw: Any, op: Op, mods: Any) -> list[Any]:
    arch = op.arch
    dpp = mods is not None and mods.group == M_DPP
    # VALU sources: stay near the constant-bus budget so that most draws are valid (the builder
    # still has the last word, and rejected draws are redrawn)
    budget = op.bus_limit - sum(1 for s in op.slots if s.token == "lms") if op.sources else 99
    saddr_off = draw(st.booleans())
    acc_file = draw(st.sampled_from(sorted(op.slots[0].regs))) if op.row.family == "mfma" else None
    out: list[Any] = []
    for slot in op.slots:
        kind = slot.token.partition(":")[0]
        w = _width(slot.token)
        if kind == "sd":
            use_special = w <= 2 and draw(st.integers(0, 4)) == 0
            out.append(draw(st.sampled_from(_SPECIALS[w])) if use_special else _reg(draw, slot, SGPR, w))
        elif kind in ("ss", "sf"):
            out.append(_value_source(draw, slot, w, floats=kind == "sf", literal=w == 1))
        elif kind in ("vd", "vv", "ad", "av", "wd", "ws", "sg"):
            out.append(_reg(draw, slot, next(iter(slot.regs)), w))
        elif kind in ("vs", "vf"):
            scalars = not dpp and budget > 0
            value = _value_source(draw, slot, w, floats=kind == "vf", literal=scalars, scalars=scalars)
            if not isinstance(value, Reg) or value.kind != VGPR:
                if not (isinstance(value, (int, float)) and value in slot.inline_floats | set(range(-16, 65))):
                    budget -= 1
            out.append(value)
        elif kind in ("vb16", "vf16"):
            out.append(_value_source(draw, slot, w, floats=kind == "vf16", literal=False))
        elif kind == "vh":
            c = draw(st.sampled_from(("v", "s", "i")))
            out.append(_reg(draw, slot, VGPR if c == "v" else SGPR, w) if c != "i" else _int_inline(draw))
        elif kind == "vi":
            out.append(_reg(draw, slot, VGPR, 1) if draw(st.booleans()) else _int_inline(draw))
        elif kind in ("lmd", "lms"):
            out.append(arch.vcc if draw(st.booleans()) else _reg(draw, slot, SGPR))
        elif kind == "sl":
            c = draw(st.integers(0, 2))
            out.append(_reg(draw, slot, SGPR) if c == 0 else (M0 if c == 1 else _int_inline(draw)))
        elif kind == "null":
            out.append(NULL_REG)
        elif kind == "lbl":
            out.append(END_LABEL)
        elif kind == "waitcnt":
            limits = arch.wait_counters
            counts = {n: draw(st.one_of(st.none(), st.integers(0, limits[n]))) for n in ("vmcnt", "expcnt", "lgkmcnt")}
            if all(v is None or v == limits[n] for n, v in counts.items()):
                counts["vmcnt"] = draw(st.integers(0, limits["vmcnt"] - 1))
            out.append(WaitCounts(**counts))
        elif slot.imm is not None and kind != "smoff":
            out.append(draw(st.integers(*slot.imm)))
        elif kind in ("srd", "sbase"):
            out.append(_reg(draw, slot, SGPR))
        elif kind == "smoff":
            out.append(draw(st.integers(*slot.imm)) if draw(st.booleans()) else _reg(draw, slot, SGPR))
        elif kind == "soff":
            choices = ["s"] + (["i"] if slot.mask & 256 else []) + (["n"] if slot.mask & 32 else [])
            c = draw(st.sampled_from(choices))
            out.append(_reg(draw, slot, SGPR) if c == "s" else (_int_inline(draw) if c == "i" else NULL_REG))
        elif kind == "baddr":
            addressed = mods is not None and (mods.offen or mods.idxen)
            out.append(_reg(draw, slot, VGPR) if addressed else OFF_ADDR)
        elif kind == "gaddr":
            out.append(_reg(draw, slot, VGPR, 2 if saddr_off else 1))
        elif kind == "gsaddr":
            out.append(OFF_ADDR if saddr_off else _reg(draw, slot, SGPR))
        elif kind == "md":
            out.append(_reg(draw, slot, acc_file, w))
        elif kind == "mc":
            c = draw(st.integers(0, 3))
            if c == 0 and slot.mask & 256:
                out.append(_int_inline(draw))
            else:
                out.append(out[0] if c < 3 else _reg(draw, slot, acc_file, w))
        elif kind == "ms":
            mi = op.matrix
            assert mi is not None
            if mi.format_regs:
                fmt = (mods.cbsz if mods else 0) if len(out) == 1 else (mods.blgp if mods else 0)
                w = mi.format_regs[fmt]
            out.append(_reg(draw, slot, draw(st.sampled_from(sorted(slot.regs))), w))
        elif kind == "wmc":
            c = draw(st.integers(0, 4))
            out.append(_reg(draw, slot, VGPR, w) if c else draw(st.sampled_from((0, 1, 1.0, -2.0))))
        else:
            raise AssertionError(f"no generator for slot {slot.token}")
    return out


def draw_instruction(draw: Any, isa: InstructionSet, name: str) -> Instruction:
    """A random valid instance of `name` on the set's target (the builder filters invalid mixes
    such as constant-bus overflows; those are redrawn)."""
    op = isa.ops[name]
    last: Exception | None = None
    for _ in range(200):
        mods = draw_mods(draw, op)
        operands = draw_operands(draw, op, mods)
        try:
            return op(*operands, mods=mods)
        except OperandError as exc:
            last = exc
    raise AssertionError(f"could not draw a valid {name} on {isa.arch.name}: {last}")


# ---------------------------------------------------------------- assembler and disassembler

def disassemble(toolchain: Toolchain, arch: str, body: list[str], tmp: Path) -> list[str]:
    """Assemble body lines (one instruction each) for `arch` and return objdump's instruction lines."""
    text = "\n".join([".text", ".globl start", "start:", *body, f"{END_LABEL.text}:", "s_endpgm", ""])
    obj = assemble(toolchain, text, arch, tmp / f"{arch}.o")
    objdump = toolchain.tool("llvm-objdump")
    assert objdump is not None, "llvm-objdump not found next to the assembler"
    res = subprocess.run([str(objdump), "-d", "--no-show-raw-insn", "--no-leading-addr", str(obj)],
                         capture_output=True, text=True, check=True)
    lines = []
    for raw in res.stdout.splitlines():
        if not raw.startswith(("\t", " ")) or not raw.strip():
            continue
        lines.append(raw.split("//")[0].strip())
    return lines


def llvm_mc_errors(toolchain: Toolchain, arch: str, lines: list[str]) -> dict[int, str]:
    """Line number (1-based) -> first error message, assembling `lines` with llvm-mc (which reports
    every error of the input, unlike a single failing run of clang)."""
    mc = toolchain.tool("llvm-mc")
    assert mc is not None, "llvm-mc not found next to the assembler"
    attr = "+wavefrontsize64" if get_target(arch).wavefront_size == 64 else "+wavefrontsize32"
    res = subprocess.run([str(mc), "-triple=amdgcn-amd-amdhsa", f"-mcpu={arch}", f"-mattr={attr}",
                          "-filetype=null"], input="\n".join(lines) + "\n", capture_output=True, text=True,
                         check=False)
    errors: dict[int, str] = {}
    for m in re.finditer(r"^<stdin>:(\d+):\d+: error: (.*)$", res.stderr, re.M):
        errors.setdefault(int(m.group(1)), m.group(2))
    return errors


# ---------------------------------------------------------------- normal form

_BARE_MODIFIERS = frozenset({"offen", "idxen", "glc", "slc", "dlc", "sc0", "sc1", "nt", "clamp", "lds"})
_MODIFIER = re.compile(r"^([a-z_0-9]+):(.+)$")
_COUNTER = re.compile(r"^([a-z]+cnt)\((\d+)\)$")


def _tokens(rest: str) -> list[str]:
    out, cur, depth = [], "", 0
    for ch in rest:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if depth == 0 and ch in ", ":
            if cur:
                out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        out.append(cur)
    return out


def _number(tok: str, bits16: bool) -> int | None:
    """Integers masked to their field; floats as f32 bit patterns (the disassembler prints float
    literals in hex, and inline floats rounded)."""
    try:
        return int(tok, 0) & (0xFFFF if bits16 else 0xFFFFFFFF)
    except ValueError:
        pass
    try:
        return struct.unpack("<I", struct.pack("<f", float(tok)))[0]
    except (ValueError, OverflowError):
        return None


def normal_form(line: str, slots: tuple[Slot, ...], counters_max: dict[str, int]) -> tuple[Any, ...]:
    """(mnemonic without _e32/_e64, operands, wait counters, set of non-default modifiers)."""
    mnemonic, _, rest = line.strip().partition(" ")
    mnemonic = re.sub(r"_e(32|64)$", "", mnemonic)
    operands: list[Any] = []
    mods: set[tuple[str, Any]] = set()
    counters: dict[str, int] = {}
    for tok in _tokens(rest):
        if tok.startswith("<"):
            break
        m = _COUNTER.match(tok)
        if m:
            if int(m.group(2)) != counters_max.get(m.group(1)):
                counters[m.group(1)] = int(m.group(2))
            continue
        if tok in _BARE_MODIFIERS:
            mods.add((tok, True))
            continue
        m = _MODIFIER.match(tok)
        if m and not tok.startswith(("s[", "v[", "a[", "ttmp[")):
            key, value = m.group(1), m.group(2)
            if value.startswith("["):
                bits = tuple(int(x) for x in value[1:-1].split(","))
                if not any(bits) or (key == "op_sel_hi" and all(bits)):
                    continue
                mods.add((key, bits))
            else:
                num = _number(value, False)
                if key == "offset" and num == 0:
                    continue
                mods.add((key, num if num is not None else value))
            continue
        slot = slots[len(operands)] if len(operands) < len(slots) else None
        bits16 = slot is not None and slot.token in ("i16", "u16", "bar")
        num = _number(tok, bits16)
        # gfx11+ true16 syntax names 16-bit halves (v1.l, v1.h); plain v1 assembles to the same
        # encoding, the half being given by op_sel, which is compared as a modifier
        operands.append(num if num is not None else re.sub(r"\.[lh]$", "", tok))
    return mnemonic, tuple(operands), tuple(sorted(counters.items())), frozenset(mods)
