"""Instruction builders compiled from the table for one target, and the instruction values they make.

`isa_for("gfx942")` returns that target's `InstructionSet`; each row of the table is an attribute:

    isa = isa_for("gfx942")
    isa.v_add_u32(vgpr(1), vgpr(2), 3)            # -> Instruction, text "v_add_u32 v1, v2, 3"
    isa.buffer_load_dwordx4(vgpr(4, 4), vgpr(0), sgpr(8, 4), 0, mods=Buf(offen=True))
    isa.v_mfma_f32_16x16x4_4b_f16                 # the gfx90a spelling is chosen on gfx90a

Everything that depends on the target (spelling, register limits and alignment, which operand
kinds a slot takes, literal and constant-bus rules) is decided here once, when the set is built:
each instruction gets a small generated builder unrolled over its operands, so building one is a
few identity lookups and a string concatenation. Calling an instruction the target lacks raises
`UnsupportedInstruction` naming it and the target. `isa.op(name)` gives the `Op` (with its slots,
spelling and table row) for introspection or names chosen at run time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from types import MappingProxyType
from typing import Any

import attrs

from tensile_lite.asm.arch import Arch, get_arch
from tensile_lite.asm.errors import OperandError, UnsupportedInstruction
from tensile_lite.asm.matrix import MatrixInstruction
from tensile_lite.asm.modifiers import Modifier
from tensile_lite.asm.operands import (
    AGPR,
    FLT_INLINE,
    FLT_LITERAL,
    INLINE_FLOATS,
    INT_INLINE,
    INT_LITERAL,
    INV_2PI,
    LABEL,
    NULL,
    OFF,
    SGPR,
    SPECIAL,
    TTMP,
    VGPR,
    WAIT,
    Label,
    Operand,
    Reg,
    Special,
    WaitCounts,
)
from tensile_lite.asm.table import (
    GLOBAL,
    M_DPP,
    MFMA,
    MUBUF,
    ROWS,
    SOP1,
    SOP2,
    SOPC,
    VALU_FAMILIES,
    VOP1,
    VOP2,
    VOPC,
    Row,
)

_KIND_NAMES = ((SGPR, "SGPR"), (VGPR, "VGPR"), (AGPR, "AGPR"), (TTMP, "ttmp"), (SPECIAL, "vcc/exec/m0"),
               (NULL, "null"), (OFF, "off"), (LABEL, "label"), (INT_INLINE, "inline integer"),
               (INT_LITERAL, "32-bit literal"), (FLT_INLINE, "inline float"), (FLT_LITERAL, "float literal"),
               (WAIT, "wait counts"))
_SCALAR_REGS = SGPR | TTMP
_MEMO_LIMIT = 4096
_SALU = frozenset({SOP1, SOP2, SOPC})
_SOURCE_TOKENS = frozenset({"vs", "vf", "vh", "vv", "vi", "lms", "av", "ss"})
_LANE_MASK_TOKENS = frozenset({"lmd", "lms"})


# register kind -> (accepted widths, alignment mask on the index, one past the last register)
RegFiles = dict[int, tuple[tuple[int, ...], int, int]]


@attrs.frozen(slots=True)
class Slot:
    """One operand position of one instruction on one target."""

    token: str
    mask: int
    regs: Mapping[int, tuple[tuple[int, ...], int, int]] = attrs.field(eq=False)  # as RegFiles
    special_widths: tuple[int, ...] = ()
    imm: tuple[int, int] | None = None     # a raw immediate field: the accepted range
    source: bool = False
    inline_floats: frozenset[float] = INLINE_FLOATS
    # a 32-bit operand: 0xFFFFFFF0..0xFFFFFFFF are the inline constants -16..-1
    wraps: bool = True
    # registers already accepted here: id -> (register, text, scalar reads). A bounded per-process
    # cache of values the rules above accept, so it never changes a result, only skips re-checking.
    memo: dict[int, tuple[Reg, str, int]] = attrs.field(factory=dict, eq=False, repr=False)

    def describe(self) -> str:
        kinds = [name for bit, name in _KIND_NAMES if self.mask & bit]
        widths = sorted({w for ws, _, _ in self.regs.values() for w in ws})
        text = " or ".join(kinds)
        if widths and widths != [1]:
            text += f" ({'/'.join(map(str, widths))} registers)"
        if self.imm is not None:
            text = f"an integer in {self.imm[0]}..{self.imm[1]}" + (f" or {text}" if kinds else "")
        return text


def _is_literal(o: object, slot: Slot) -> bool:
    if type(o) is int:
        return not (-16 <= o <= 64 or (slot.wraps and 0xFFFFFFF0 <= o <= 0xFFFFFFFF))
    return type(o) is float and o not in slot.inline_floats


def _as_u32(o: object) -> object:
    # -1 and 0xFFFFFFFF are one literal value
    return o & 0xFFFFFFFF if type(o) is int else o


def _sgpr_align(width: int) -> int:
    # SGPR pairs start even; wider SGPR tuples start at a multiple of 4.
    return 0 if width == 1 else (1 if width == 2 else 3)


def _compile_slot(token: str, arch: Arch) -> Slot:
    slot = _slot_for_kind(token, arch)
    if slot.wraps and slot.regs and all(max(ws) > 1 for ws, _, _ in slot.regs.values()):
        return attrs.evolve(slot, wraps=False)
    return slot


def _slot_for_kind(token: str, arch: Arch) -> Slot:
    kind, _, arg = token.partition(":")
    width = int(arg) if arg.isdigit() else 1
    vec_align = 1 if arch.aligned_vgpr_tuples and width >= 2 else 0
    sg: RegFiles = {SGPR: ((width,), _sgpr_align(width), arch.max_sgprs)}
    tt: RegFiles = {TTMP: ((width,), _sgpr_align(width), 16)}
    vg: RegFiles = {VGPR: ((width,), vec_align, arch.max_vgprs)}
    ag: RegFiles = {AGPR: ((width,), vec_align, arch.max_agprs)}
    lit = INT_LITERAL if width == 1 else 0
    flit = FLT_LITERAL if width == 1 else 0
    src = kind in _SOURCE_TOKENS
    lm = arch.lane_mask_width
    null = NULL if arch.null_register else 0
    if kind == "sd":
        return Slot(token, SGPR | SPECIAL, sg, (width,))
    if kind == "sg":
        return Slot(token, SGPR, sg)
    if kind == "ss":
        return Slot(token, SGPR | TTMP | SPECIAL | INT_INLINE | lit, sg | tt, (width,), source=src)
    if kind == "sf":
        return Slot(token, SGPR | TTMP | SPECIAL | INT_INLINE | INT_LITERAL | FLT_INLINE | FLT_LITERAL,
                    sg | tt, (1,))
    if kind == "vd":
        return Slot(token, VGPR, vg)
    if kind == "vs":
        return Slot(token, VGPR | SGPR | TTMP | SPECIAL | INT_INLINE | lit, vg | sg | tt, (width,), source=True)
    if kind == "vf":
        # the f64 form of the 1/(2*pi) inline constant is not the double nearest 1/(2*pi)
        floats = INLINE_FLOATS if width == 1 else INLINE_FLOATS - {INV_2PI}
        return Slot(token, VGPR | SGPR | TTMP | SPECIAL | INT_INLINE | lit | FLT_INLINE | flit,
                    vg | sg | tt, (width,), source=True, inline_floats=floats)
    if kind in ("vb16", "vf16"):
        # 16-bit sources: a literal would be encoded in 16 bits, so only registers and inline constants
        # (float constants only where the operand is a float: gfx11+ encodes them as f16)
        float_bits = FLT_INLINE if kind == "vf16" else 0
        return Slot(token, VGPR | SGPR | TTMP | SPECIAL | INT_INLINE | float_bits, vg | sg | tt, (1,), source=True)
    if kind == "vh":
        return Slot(token, VGPR | SGPR | INT_INLINE, vg | sg, source=True)
    if kind == "vv":
        return Slot(token, VGPR, vg, source=True)
    if kind == "vi":
        return Slot(token, VGPR | INT_INLINE, vg, source=True)
    if kind == "ad":
        return Slot(token, AGPR, ag)
    if kind == "av":
        return Slot(token, AGPR, ag, source=True)
    if kind in ("lmd", "lms"):
        return Slot(token, SGPR | SPECIAL, {SGPR: ((lm,), _sgpr_align(lm), arch.max_sgprs)}, (lm,), source=src)
    if kind == "null":
        return Slot(token, NULL, {})
    if kind == "lbl":
        return Slot(token, LABEL, {})
    if kind == "waitcnt":
        return Slot(token, WAIT, {})
    if kind == "cnt":
        return Slot(token, 0, {}, imm=(0, arch.wait_counters[arg]))
    if kind in _IMM_RANGES:
        return Slot(token, 0, {}, imm=_IMM_RANGES[kind])
    if kind == "srd":
        return Slot(token, SGPR, {SGPR: ((4,), 3, arch.max_sgprs)})
    if kind == "sbase":
        return Slot(token, SGPR, {SGPR: ((2,), 1, arch.max_sgprs)})
    if kind == "smoff":
        return Slot(token, SGPR, sg, imm=arch.smem_offset)
    if kind == "soff":
        inline = INT_INLINE if arch.mubuf_soffset_inline else 0
        return Slot(token, SGPR | null | inline, sg)
    if kind == "baddr":
        return Slot(token, VGPR | OFF, vg)
    if kind == "gaddr":
        return Slot(token, VGPR, {VGPR: ((1, 2), 1 if arch.aligned_vgpr_tuples else 0, arch.max_vgprs)})
    if kind == "sl":
        return Slot(token, SGPR | SPECIAL | INT_INLINE, sg, (1,), source=True)
    if kind == "gsaddr":
        return Slot(token, SGPR | OFF, {SGPR: ((2,), 1, arch.max_sgprs)})
    if kind in ("md", "ms", "mc"):
        # gfx908 keeps C/D in AGPRs and A/B in VGPRs; gfx90a+ take either file for each.
        files = (ag | vg) if arch.unified_vgprs else (ag if kind in ("md", "mc") else vg)
        mask = (AGPR | VGPR) if arch.unified_vgprs else (AGPR if kind in ("md", "mc") else VGPR)
        if kind == "mc" and arch.unified_vgprs:
            mask |= INT_INLINE  # gfx908 takes no constant for C
        if kind == "ms" and width in (4, 6, 8):
            # gfx950 f8f6f4 operands change width with the format; checked against the modifiers
            files = {k: ((4, 6, 8), a, lim) for k, (_, a, lim) in files.items()}
        return Slot(token, mask, files, source=kind != "md")
    if kind in ("wd", "ws"):
        return Slot(token, VGPR, vg, source=kind == "ws")
    if kind == "wmc":
        return Slot(token, VGPR | INT_INLINE | FLT_INLINE, vg, source=True)
    raise AssertionError(f"instruction table uses unknown slot kind {token!r}")


_IMM_RANGES: Mapping[str, tuple[int, int]] = MappingProxyType({
    "i16": (-32768, 32767), "u16": (0, 65535), "nop": (0, 15), "prio": (0, 3), "sleep": (0, 127),
    # the named-barrier operand of gfx12's s_barrier_signal/s_barrier_wait: -1 is the workgroup barrier
    "bar": (-1, -1),
})


@attrs.frozen(slots=True, repr=False)
class Instruction:
    """One instruction: what built it, its operands and modifiers, and its text (without newline).

    Build instructions through an `InstructionSet`; constructing this class directly skips every
    check.
    """

    op: Op
    operands: tuple[Operand, ...]
    mods: Modifier | None
    text: str

    @property
    def name(self) -> str:
        """The canonical (table) name, the same on every target."""
        return self.op.row.name

    @property
    def mnemonic(self) -> str:
        return self.op.spelling

    @property
    def family(self) -> str:
        return self.op.row.family

    @property
    def mem(self) -> str | None:
        """The memory event this instruction leaves outstanding (LOAD, STORE, LDS, SMEM) or None."""
        return self.op.row.mem

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Instruction({self.text!r})"


@attrs.frozen(slots=True, repr=False)
class Op:
    """A callable builder for one table row on one target."""

    arch: Arch
    row: Row
    spelling: str
    slots: tuple[Slot, ...]
    prefix: str
    sources: tuple[int, ...]
    lane_masks: tuple[int, ...]
    bus_limit: int
    matrix: MatrixInstruction | None
    mods: tuple[str, ...] = ()   # modifier groups accepted on this target
    # the generated, operand-count-specific builder (see _make_builder)
    build: Callable[..., Instruction] = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "build", _make_builder(self))

    @property
    def name(self) -> str:
        return self.row.name

    def __repr__(self) -> str:
        return f"Op({self.spelling} on {self.arch.name})"

    def __call__(self, *operands: Any, mods: Modifier | None = None) -> Instruction:
        return self.build(*operands, mods=mods)

    def __reduce__(self) -> tuple[Any, tuple[str, str, int]]:
        # rebuilt from the table in the receiving process (the generated builder is not picklable)
        return _op_named, (self.arch.name, self.row.name, self.arch.wavefront_size)

    def _arity_error(self, got: int) -> None:
        raise OperandError(f"{self.spelling} on {self.arch.name} takes {len(self.slots)} operand(s) "
                           f"({' '.join(s.token for s in self.slots)}), got {got}")

    def _value(self, slot: Slot, o: object) -> tuple[str, int]:
        """Text of a non-register operand, and how many scalar values it reads: literals count 2
        so that a single one is enough to trigger the full constant-bus and literal checks."""
        # exact type tests (a bool is no operand), which mypy narrows on
        if type(o) is int:
            imm = slot.imm
            if imm is not None and imm[0] <= o <= imm[1]:
                return str(o), 0
            if -16 <= o <= 64 or (slot.wraps and 0xFFFFFFF0 <= o <= 0xFFFFFFFF):
                if slot.mask & INT_INLINE:
                    return str(o), 0
            elif slot.mask & INT_LITERAL and -0x80000000 <= o <= 0xFFFFFFFF:
                return str(o), 2
        elif type(o) is float:
            if o in slot.inline_floats:
                if slot.mask & FLT_INLINE:
                    return repr(o), 0
            elif slot.mask & FLT_LITERAL:
                return repr(o), 2
        elif type(o) is Special:
            if slot.mask & o.kind and (o.kind != SPECIAL or o.width in slot.special_widths):
                return o.text, 1
        elif type(o) is Label:
            if slot.mask & o.kind:
                return o.text, 0
        elif type(o) is WaitCounts:
            if slot.mask & o.kind:
                self._check_waits(o)
                return o.text, 0
        elif type(o) is Reg:
            seen = self._check_reg(slot, o)
            return seen[1], seen[2]
        self._reject(slot, o, None)
        raise AssertionError("unreachable")

    def _finish(self, operands: tuple[Any, ...], body: str, scalar: int, mods: Modifier | None) -> Instruction:
        """The checks that need the whole instruction, then the instruction itself."""
        if mods is not None and mods.group not in self.mods:
            raise OperandError(f"{self.spelling} on {self.arch.name} does not take "
                               f"{type(mods).__name__} modifiers")
        # One scalar value and no literal satisfies every constant-bus rule; anything more is
        # checked in full.
        if self.sources and (scalar > 1 or (mods is not None and mods.group == M_DPP)):
            self._check_valu(operands, mods)
        elif scalar >= 4 and self.row.family in _SALU:
            self._check_salu_literals(operands)
        if self.row.family in _WHOLE_CHECKS:
            self._check_memory_or_mfma(operands, mods)
        prefix = self.prefix
        tail = ""
        if mods is not None:
            tail = mods.render(self)
            if mods.group == M_DPP:
                prefix = self.spelling + "_dpp" + prefix[len(self.spelling):]
        return _make_instruction(self, operands, mods, prefix + body + tail)

    def _check_reg(self, slot: Slot, o: Reg) -> tuple[Reg, str, int]:
        rule = slot.regs.get(o.kind)
        if (rule is None or o.count not in rule[0] or (o.count > 1 and o.index & rule[1])
                or o.index + o.count > rule[2]):
            self._reject(slot, o, rule)
        memo = slot.memo
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        seen = (o, o.text, 1 if o.kind & _SCALAR_REGS else 0)
        # keyed by identity (a C-level lookup); the entry keeps `o` alive, so no other object can
        # take its id while the entry exists
        memo[id(o)] = seen
        return seen

    def _reject(self, slot: Slot, o: object, rule: tuple[tuple[int, ...], int, int] | None) -> None:
        what = getattr(o, "text", repr(o))
        position = self.slots.index(slot) + 1
        detail = ""
        if isinstance(o, Reg) and rule is not None:
            if o.count not in rule[0]:
                detail = f"; it has {o.count} register(s)"
            elif o.count > 1 and o.index & rule[1]:
                detail = f"; a {o.count}-register tuple must start at a multiple of {rule[1] + 1}"
            else:
                detail = f"; {self.arch.name} has {rule[2]} of them"
        raise OperandError(f"{self.spelling} on {self.arch.name}: operand {position} ({slot.token}) "
                           f"must be {slot.describe()}, got {what}{detail}")

    def _check_waits(self, w: WaitCounts) -> None:
        limits = self.arch.wait_counters
        for name in ("vmcnt", "expcnt", "lgkmcnt"):
            value = getattr(w, name)
            if value is not None and value > limits[name]:
                raise OperandError(f"{self.spelling} on {self.arch.name}: {name}({value}) exceeds "
                                   f"the counter maximum {limits[name]}")

    def _check_salu_literals(self, operands: tuple[Any, ...]) -> None:
        literals = {_as_u32(o) for o, slot in zip(operands, self.slots, strict=True) if _is_literal(o, slot)}
        if len(literals) > 1:
            raise OperandError(f"{self.spelling} on {self.arch.name}: at most one literal constant, got "
                               f"{sorted(map(str, literals))}")

    def _check_valu(self, operands: tuple[Any, ...], mods: Modifier | None) -> None:
        """Constant-bus and literal rules of VALU encodings (AMD ISA manuals, "VOP3" / "Literal")."""
        scalars: set[object] = set()
        literals: set[object] = set()
        for i in self.sources:
            o = operands[i]
            t = type(o)
            if t is Reg:
                if o.kind & (SGPR | TTMP):
                    scalars.add((o.kind, o.index, o.count))
            elif t is Special:
                if o.kind == SPECIAL:
                    scalars.add(o.text)
            elif _is_literal(o, self.slots[i]):
                literals.add(_as_u32(o))
        where = f"{self.spelling} on {self.arch.name}"
        if mods is not None and mods.group == M_DPP:
            if scalars or literals or any(type(operands[i]) is not Reg for i in self.sources):
                raise OperandError(f"{where}: DPP takes VGPR sources only")
            return
        if len(literals) > 1:
            raise OperandError(f"{where}: at most one literal constant, got {sorted(map(str, literals))}")
        if len(scalars) + len(literals) > self.bus_limit:
            raise OperandError(f"{where}: reads {len(scalars) + len(literals)} scalar values "
                               f"(SGPRs, vcc/exec/m0, literals); the constant bus allows {self.bus_limit}")
        if literals and not self.arch.vop3_literal:
            # Without VOP3 literals only the 32-bit encodings take one, in their first source, with
            # every other source a VGPR and any lane mask being vcc.
            first = operands[self.sources[0]]
            ok = (self.row.family in (VOP1, VOP2, VOPC)
                  and type(first) in (int, float) and first in literals
                  and all(type(operands[i]) is Reg and operands[i].kind == VGPR for i in self.sources[1:]
                          if i not in self.lane_masks)
                  and all(operands[i] is self.arch.vcc for i in self.lane_masks))
            if not ok:
                raise OperandError(f"{where}: a literal is only allowed in the first source of a "
                                   "VOP1/VOP2/VOPC form whose other sources are VGPRs (lane mask vcc)")

    def _check_memory_or_mfma(self, operands: tuple[Any, ...], mods: Any) -> None:
        family = self.row.family
        where = f"{self.spelling} on {self.arch.name}"
        if family == MUBUF:
            addressed = mods is not None and (mods.offen or mods.idxen)
            if (type(operands[1]) is Reg) != addressed:
                raise OperandError(f"{where}: vaddr must be a VGPR exactly when offen or idxen is set")
        elif family == GLOBAL:
            addr = operands[0] if self.row.mem != "load" else operands[1]
            saddr = operands[-1]
            if (addr.count == 2) != (type(saddr) is Special):
                raise OperandError(f"{where}: vaddr is a VGPR pair when saddr is off, else one VGPR")
        else:
            d, a, b, c = operands
            if type(c) is Reg and (c.kind != d.kind or (c != d and c.index < d.end and d.index < c.end)):
                raise OperandError(f"{where}: C must be in D's register file and either be D or not "
                                   "overlap it")
            mi = self.matrix
            if mi is not None and mi.format_regs:
                want_a = mi.format_regs[mods.cbsz if mods is not None else 0]
                want_b = mi.format_regs[mods.blgp if mods is not None else 0]
                if a.count != want_a or b.count != want_b:
                    raise OperandError(f"{where}: formats cbsz/blgp need {want_a}/{want_b}-register "
                                       f"A/B operands, got {a.count}/{b.count}")
            elif mi is not None and (a.count != mi.a_regs or b.count != mi.b_regs):
                raise OperandError(f"{where}: A/B take {mi.a_regs}/{mi.b_regs} registers")


@attrs.frozen(slots=True, repr=False)
class MissingOp:
    """Stands in for a row the target lacks: calling it raises, naming the mnemonic and target."""

    name: str
    arch: Arch
    elsewhere: tuple[str, ...]
    deprecated: bool = False

    def __call__(self, *operands: Any, mods: Modifier | None = None) -> Instruction:
        if self.deprecated:
            raise UnsupportedInstruction(f"{self.name} is deprecated on {self.arch.name}; kernels must not "
                                         "use it (see the instruction table)")
        raise UnsupportedInstruction(
            f"{self.name} is not available on {self.arch.name}"
            + (f" (the table has it on: {', '.join(self.elsewhere)})" if self.elsewhere else ""))

    def __repr__(self) -> str:
        return f"MissingOp({self.name} on {self.arch.name})"


_WHOLE_CHECKS = frozenset({MUBUF, GLOBAL, MFMA})
_INSTRUCTION_SLOTS = tuple(Instruction.__dict__[f].__set__ for f in ("op", "operands", "mods", "text"))


def _make_instruction(op: Op, operands: tuple[Any, ...], mods: Modifier | None, text: str) -> Instruction:
    # Fills the frozen slots directly: the same result as Instruction(...), without attrs' per-field
    # frozen-setattr calls, on the path every emitted instruction takes.
    ins = object.__new__(Instruction)
    set_op, set_operands, set_mods, set_text = _INSTRUCTION_SLOTS
    set_op(ins, op)
    set_operands(ins, operands)
    set_mods(ins, mods)
    set_text(ins, text)
    return ins


def _make_builder(op: Op) -> Any:
    """Generate the builder of one instruction on one target, unrolled over its operand slots.

    Registers take a fast path (an identity-keyed memo of already-accepted registers); other
    operands and every whole-instruction rule go through `Op._value` / `Op._finish`, so the
    generated code only decides which checks can be skipped, never what they conclude.
    """
    n = len(op.slots)
    count = bool(op.sources) or op.row.family in _SALU
    ns: dict[str, Any] = {"Reg": Reg, "make": _make_instruction, "op": op, "check_reg": op._check_reg,
                          "value": op._value, "finish": op._finish, "arity_error": op._arity_error,
                          "prefix": op.prefix, "id": id, "type": type, "len": len}
    src = ["def build(*ops, mods=None):", f"    if len(ops) != {n}:", "        arity_error(len(ops))"]
    if n:
        src.append(f"    {', '.join(f'o{i}' for i in range(n))}, = ops")
    if count:
        src.append("    sc = 0")
    for i, slot in enumerate(op.slots):
        ns[f"slot{i}"] = slot
        ns[f"memo{i}"] = slot.memo
        add = ["        sc += e[2]"] if count else []
        add_k = ["        sc += k"] if count else []
        if slot.regs:
            src += [f"    if type(o{i}) is Reg:", f"        e = memo{i}.get(id(o{i}))",
                    f"        if e is None or e[0] is not o{i}:", f"            e = check_reg(slot{i}, o{i})",
                    f"        t{i} = e[1]", *add, "    else:", f"        t{i}, k = value(slot{i}, o{i})", *add_k]
        else:
            src += [f"    t{i}, k = value(slot{i}, o{i})", *[a[4:] for a in add_k]]
    body = ' + ", " + '.join(f"t{i}" for i in range(n)) if n else '""'
    src.append(f"    body = {body}")
    family = op.row.family
    fast = None
    if family not in _WHOLE_CHECKS:
        fast = "mods is None" + (" and sc < 2" if op.sources else (" and sc < 4" if count else ""))
    elif family == MFMA and not (op.matrix and op.matrix.format_regs):
        fast = "mods is None and (o3 is o0 or type(o3) is not Reg)"  # C is D, or a constant
    elif family == MUBUF:
        fast = "mods is None and type(o1) is not Reg"                # vaddr off, no offen/idxen
    if fast:
        src += [f"    if {fast}:", "        return make(op, ops, None, prefix + body)"]
    src.append(f"    return finish(ops, body, {'sc' if count else '0'}, mods)")
    # the source above is assembled from the compiled table only, never from user input
    exec("\n".join(src), ns)
    return ns["build"]


def _compile_op(row: Row, arch: Arch) -> Op | None:
    variant = next((v for v in row.variants if v.tag in arch.tags), None)
    if variant is None:
        return None
    sig = variant.sig if variant.sig is not None else row.sig
    slots = tuple(_compile_slot(tok, arch) for tok in sig)
    valu = row.family in VALU_FAMILIES
    sources = tuple(i for i, s in enumerate(slots) if s.source) if valu else ()
    lane_masks = tuple(i for i, tok in enumerate(sig) if tok.partition(":")[0] in _LANE_MASK_TOKENS)
    bus = 1 if "bus1" in row.flags else arch.constant_bus_limit
    matrix = arch.matrix_instruction(row.matrix) if row.matrix else None
    prefix = variant.spelling + (" " if slots else "")
    mods = variant.mods if variant.mods is not None else row.mods
    return Op(arch, row, variant.spelling, slots, prefix, sources, lane_masks, bus, matrix, mods)


class InstructionSet:
    """Every table row as a builder attribute for one target (see the module docs).

    `ops` maps names of available instructions to their builders; `missing` holds the rest.
    """

    arch: Arch
    ops: Mapping[str, Op]
    missing: frozenset[str]

    def op(self, name: str) -> Op:
        """The builder for `name`; raises if the target lacks it or the table has no such row."""
        found = self.ops.get(name)
        if found is None:
            if name in self.missing:
                getattr(self, name)()
            raise UnsupportedInstruction(f"the instruction table has no {name!r}")
        return found

    def has(self, name: str) -> bool:
        return name in self.ops

    def __getattr__(self, name: str) -> Op:
        # Only reached for names that are not rows at all (rows are class attributes).
        raise AttributeError(f"the instruction table has no {name!r} (target {self.arch.name})")


def _op_named(arch: str, name: str, wave: int | None = None) -> Op:
    return isa_for(arch, wave).op(name)


def isa_for(arch: str, wave: int | None = None) -> InstructionSet:
    """The instruction set of a target (in wave size `wave`, None: its usual one), compiled once per process."""
    a = get_arch(arch, wave)
    return _compiled(a.name, a.wavefront_size)


@cache
def _compiled(arch: str, wave: int) -> InstructionSet:
    a = get_arch(arch, wave)
    ops: dict[str, Op] = {}
    attrs_: dict[str, object] = {}
    missing = []
    for row in ROWS:
        op = _compile_op(row, a)
        if op is None:
            missing.append(row.name)
            elsewhere = tuple(v.tag for v in row.variants)
            deprecated = any(t in a.tags for t in row.deprecated)
            attrs_[row.name] = MissingOp(row.name, a, elsewhere, deprecated)
        else:
            ops[row.name] = op
            # the generated builder itself, so `isa.v_add_u32(...)` is one plain call
            attrs_[row.name] = staticmethod(op.build)
    cls = type(f"InstructionSet_{a.name}", (InstructionSet,), attrs_)
    isa: InstructionSet = cls()
    isa.arch = a
    isa.ops = MappingProxyType(ops)
    isa.missing = frozenset(missing)
    return isa
