"""Parse the text of one disassembled instruction: mnemonic, operands and modifiers.

The text is what `llvm-objdump -d` prints for the real bytes, so the emulator runs what the
assembler produced, not what a kernel writer meant.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import TypedDict

import attrs

# Scalar register file slots. SGPRs keep their numbers; the named registers follow the gfx9 encoding.
VCC_LO = 106
VCC_HI = 107
TTMP0 = 108
M0 = 124
NULL = 125
EXEC_LO = 126
EXEC_HI = 127
SCALAR_SLOTS = 128

_NAMED_SCALARS = MappingProxyType({
    "vcc": (VCC_LO, 2), "vcc_lo": (VCC_LO, 1), "vcc_hi": (VCC_HI, 1), "exec": (EXEC_LO, 2),
    "exec_lo": (EXEC_LO, 1), "exec_hi": (EXEC_HI, 1), "m0": (M0, 1),
})
_SPECIAL = frozenset({"scc", "src_scc", "src_execz", "src_vccz", "null", "off"})
_INLINE_FLOATS = MappingProxyType({
    "0.5": 0.5, "-0.5": -0.5, "1.0": 1.0, "-1.0": -1.0, "2.0": 2.0, "-2.0": -2.0, "4.0": 4.0,
    "-4.0": -4.0, "0.15915494": 0.15915494309189535, "0.15915494309189532": 0.15915494309189535,
})
# Instructions whose operand text is a list of named fields rather than operands.
RAW_OPERANDS = frozenset({
    "s_waitcnt", "s_delay_alu", "s_sendmsg", "s_sendmsghalt", "s_waitcnt_depctr", "s_clause",
    "buffer_wbl2", "buffer_inv", "buffer_wbinvl1", "buffer_wbinvl1_vol", "buffer_gl0_inv",
    "buffer_gl1_inv", "global_wb", "global_inv", "s_setreg_b32", "s_setreg_imm32_b32", "s_getreg_b32",
    "s_wait_alu", "s_dcache_inv", "s_icache_inv", "s_dcache_wb",
    # Branches print their target as a label; the target is taken from the encoding instead.
    "s_branch", "s_cbranch_scc0", "s_cbranch_scc1", "s_cbranch_vccz", "s_cbranch_vccnz",
    "s_cbranch_execz", "s_cbranch_execnz",
})

_REG = re.compile(r"^(v|a|s|ttmp)(?:(\d+)|\[(\d+):(\d+)\])(?:\.(l|h))?$")
_INT = re.compile(r"^-?(?:0x[0-9a-fA-F]+|\d+)$")
_FLOAT = re.compile(r"^-?\d+\.\d+(?:e[-+]?\d+)?$")
_ENCODING_SUFFIX = ("_e32", "_e64", "_sdwa", "_dpp", "_e64_dpp")


def scalar_slot_name(slot: int) -> str:
    """Assembly name of a scalar register slot: s5, vcc_lo, ttmp9, m0, exec_hi..."""
    if slot < VCC_LO:
        return f"s{slot}"
    if TTMP0 <= slot < M0:
        return f"ttmp{slot - TTMP0}"
    names = {VCC_LO: "vcc_lo", VCC_HI: "vcc_hi", M0: "m0", NULL: "null", EXEC_LO: "exec_lo",
             EXEC_HI: "exec_hi"}
    return names.get(slot, f"scalar slot {slot}")


@attrs.frozen(slots=True)
class Operand:
    """One operand: a register range, a constant or a special name, with its source modifiers."""

    text: str
    kind: str  # vgpr agpr sgpr const special (and scratch: an emulator-internal staging VGPR)
    index: int = 0
    count: int = 1
    ival: int | None = None
    fval: float | None = None
    neg: bool = False
    abs: bool = False
    sext: bool = False
    half: int | None = None  # gfx11 true16 `.l` (0) / `.h` (1)
    name: str = ""  # for special operands: scc, null, off, src_execz, ...

    @property
    def is_vector(self) -> bool:
        return self.kind in ("vgpr", "agpr", "scratch")

    def describe(self) -> str:
        return self.text


def _strip_modifiers(text: str) -> tuple[str, bool, bool, bool]:
    neg = abs_ = sext = False
    t = text
    if t.startswith("neg(") and t.endswith(")"):
        neg, t = True, t[4:-1]
    if t.startswith("-") and not _INT.match(t) and not _FLOAT.match(t):
        neg, t = True, t[1:]
    if t.startswith("|") and t.endswith("|"):
        abs_, t = True, t[1:-1]
    if t.startswith("abs(") and t.endswith(")"):
        abs_, t = True, t[4:-1]
    if t.startswith("sext(") and t.endswith(")"):
        sext, t = True, t[5:-1]
    return t, neg, abs_, sext


class _SourceMods(TypedDict):
    """The source modifiers of an operand, as Operand's keyword arguments."""

    neg: bool
    abs: bool
    sext: bool


def parse_operand(text: str) -> Operand:
    """`v[0:3]`, `-|s5|`, `0x3f800000`, `1.0`, `vcc_lo`, `v1.h`, ... -> Operand (ValueError if unknown)."""
    core, neg, abs_, sext = _strip_modifiers(text.strip())
    mods: _SourceMods = {"neg": neg, "abs": abs_, "sext": sext}
    m = _REG.match(core)
    if m:
        file, one, lo, hi, half = m.groups()
        first = int(one) if one is not None else int(lo)
        last = int(one) if one is not None else int(hi)
        if last < first:
            raise ValueError(f"register range {core} runs backwards")
        half_idx = None if half is None else (0 if half == "l" else 1)
        count = last - first + 1
        if file == "v":
            return Operand(text, "vgpr", first, count, half=half_idx, **mods)
        if file == "a":
            return Operand(text, "agpr", first, count, half=half_idx, **mods)
        if file == "s":
            return Operand(text, "sgpr", first, count, half=half_idx, **mods)
        return Operand(text, "sgpr", TTMP0 + first, count, half=half_idx, **mods)
    if core.startswith(("lit(", "lit64(")) and core.endswith(")"):
        # A value the assembler encoded as a literal although it would fit an inline constant.
        inner = core[core.index("(") + 1:-1]
        if _INT.match(inner):
            return Operand(text, "const", ival=int(inner, 0), **mods)
        return Operand(text, "const", fval=float(inner), **mods)
    if core in _NAMED_SCALARS:
        slot, count = _NAMED_SCALARS[core]
        return Operand(text, "sgpr", slot, count, name=core, **mods)
    if core in _SPECIAL:
        return Operand(text, "special", name=core, **mods)
    if _INT.match(core):
        return Operand(text, "const", ival=int(core, 0), **mods)
    if core in _INLINE_FLOATS:
        return Operand(text, "const", fval=_INLINE_FLOATS[core], **mods)
    if _FLOAT.match(core):
        return Operand(text, "const", fval=float(core), **mods)
    raise ValueError(f"unrecognised operand {text!r}")


def _split_top(text: str, sep: str) -> list[str]:
    """Split at `sep` (',' or whitespace) outside brackets and parentheses."""
    parts: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        is_sep = ch.isspace() if sep == " " else ch == sep
        if is_sep and depth == 0:
            if cur:
                parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if cur and "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


# A parsed modifier: `name:3` an int, `name:[1,0]` a tuple, `name:DWORD` a str, a bare `name` True.
ModValue = int | str | tuple[int, ...]


def _modifier_value(text: str) -> ModValue:
    if text.startswith("[") and text.endswith("]"):
        return tuple(int(x, 0) for x in text[1:-1].split(",") if x.strip())
    if _INT.match(text):
        return int(text, 0)
    return text


def parse_modifiers(tokens: list[str]) -> Mapping[str, ModValue]:
    mods: dict[str, ModValue] = {}
    for tok in tokens:
        if ":" in tok:
            name, value = tok.split(":", 1)
            mods[name] = _modifier_value(value)
        else:
            mods[tok] = True
    return MappingProxyType(mods)


@attrs.frozen(slots=True)
class Instr:
    """One decoded instruction of a kernel, at its real address."""

    address: int
    size: int
    text: str
    mnemonic: str  # as printed, e.g. v_add_f32_e64
    base: str  # without the _e32/_e64/_sdwa/_dpp suffix
    encoding: str  # "", "e32", "e64", "sdwa", "dpp", "e64_dpp"
    operands: tuple[Operand, ...]
    modifiers: Mapping[str, ModValue] = attrs.field(hash=False)
    raw: str  # the operand text as printed
    branch_target: int | None = None

    def mod(self, name: str, default: ModValue | None = None) -> ModValue | None:
        return self.modifiers.get(name, default)

    def int_mod(self, name: str, default: int = 0) -> int:
        """An integer modifier (offset:16, cbsz:2, ...), `default` when absent."""
        value = self.modifiers.get(name, default)
        if not isinstance(value, int):
            raise ValueError(f"{self.text}: modifier {name} is not an integer ({value!r})")
        return int(value)

    def tuple_mod(self, name: str, default: tuple[int, ...]) -> tuple[int, ...]:
        """A list modifier (op_sel:[0,1], neg_lo:[1,0,0], ...), `default` when absent or empty."""
        value = self.modifiers.get(name)
        if not value:
            return default
        if not isinstance(value, tuple):
            raise ValueError(f"{self.text}: modifier {name} is not a list ({value!r})")
        return value

    def flag(self, name: str) -> bool:
        return bool(self.modifiers.get(name, False))


def split_mnemonic(mnemonic: str) -> tuple[str, str]:
    for suffix in _ENCODING_SUFFIX[::-1]:
        if mnemonic.endswith(suffix):
            return mnemonic[: -len(suffix)], suffix[1:]
    return mnemonic, ""


def parse_instruction(address: int, size: int, text: str) -> Instr:
    """Decode one line of disassembly text. Operands the parser does not know raise ValueError."""
    text = text.strip()
    head, _, rest = text.partition(" ")
    rest = rest.strip()
    base, encoding = split_mnemonic(head)
    if head in RAW_OPERANDS or base in RAW_OPERANDS:
        return Instr(address, size, text, head, base, encoding, (), MappingProxyType({}), rest)
    pieces = _split_top(rest, ",") if rest else []
    modifiers: list[str] = []
    if pieces:
        last = _split_top(pieces[-1], " ")
        pieces[-1] = last[0]
        modifiers = last[1:]
        # Instructions with no operands print only modifiers (e.g. `s_nop 0` has one operand, but
        # `buffer_inv sc1` has none); a lone `name:value` is a modifier, not an operand.
        if len(pieces) == 1 and ":" in pieces[0] and not pieces[0].startswith(("v[", "s[", "a[", "ttmp[")):
            modifiers.insert(0, pieces.pop())
    operands = tuple(parse_operand(p) for p in pieces)
    return Instr(address, size, text, head, base, encoding, operands, parse_modifiers(modifiers), rest)
