"""Instruction modifiers: logical values rendered in each target's syntax.

A modifier is passed as `mods=` when building an instruction. Its `render(op)` validates it against
the instruction and target and returns the text to append (with a leading space, or "" when every
field has its default value, so emitted text never carries no-op modifiers).
"""

from __future__ import annotations

from typing import Protocol, TypedDict, Unpack

import attrs

from tensile_lite.asm.arch import Arch
from tensile_lite.asm.errors import OperandError
from tensile_lite.asm.matrix import MatrixInstruction
from tensile_lite.asm.table import M_BUF, M_DPP, M_DS, M_DS2, M_GLB, M_MFMA, M_SEL, Row


class Op(Protocol):
    """What a modifier checks itself against: the instruction being built (isa.Op, which imports
    this module, so it is described here rather than imported)."""

    @property
    def arch(self) -> Arch: ...
    @property
    def row(self) -> Row: ...
    @property
    def spelling(self) -> str: ...
    @property
    def matrix(self) -> MatrixInstruction | None: ...

_TH = {"LOAD": frozenset({"NT", "HT", "LU", "RT_NT", "NT_RT", "NT_HT"}),
       "STORE": frozenset({"NT", "HT", "RT_NT", "NT_RT", "NT_HT", "WB"}),
       "ATOMIC": frozenset({"NT", "CASCADE_RT", "CASCADE_NT"})}
_SCOPES = frozenset({"SE", "DEV", "SYS"})


class Modifier(Protocol):
    # Read-only: the modifier classes are frozen, so a settable member would reject them all.
    @property
    def group(self) -> str: ...

    def render(self, op: Op) -> str: ...


@attrs.frozen(slots=True)
class CachePolicy:
    """Cache-control bits in logical form.

    glc/slc/nt are hipBLASLt's NonTemporal bits 0/1/2: gfx908/gfx90a print glc/slc, gfx94x/gfx950
    print sc0/sc1/nt, gfx11 prints glc/slc (and dlc). gfx12 has temporal hints and scopes instead:
    pass `th` ("NT", "HT", ...) and `scope` ("SE", "DEV", "SYS"); `nt=True` means th NT there.
    A bit the target cannot express raises instead of being dropped.
    """

    glc: bool = False
    slc: bool = False
    nt: bool = False
    dlc: bool = False
    th: str | None = None
    scope: str | None = None

    def render(self, op: Op) -> str:
        arch = op.arch
        atomic = "atomic" in op.row.flags
        if atomic and self.glc:
            raise OperandError(f"{_where(op)}: glc on an atomic asks for the old value, which this "
                               "no-return form does not provide")
        out = []
        if arch.temporal_hints:
            for bit in ("glc", "slc", "dlc"):
                if getattr(self, bit):
                    raise OperandError(f"{_where(op)}: cache bit {bit} does not exist on {arch.name}; "
                                       "use th=/scope=")
            th = self.th or ("NT" if self.nt else None)
            if th is not None:
                kind = "ATOMIC" if atomic else ("STORE" if op.row.mem == "store" else "LOAD")
                allowed = _TH[kind]
                if th not in allowed:
                    raise OperandError(f"{_where(op)}: temporal hint {th!r} is not one of {sorted(allowed)}")
                out.append(f" th:TH_{kind}_{th}")
            if self.scope is not None:
                if self.scope not in _SCOPES:
                    raise OperandError(f"{_where(op)}: scope {self.scope!r} is not one of {sorted(_SCOPES)}")
                out.append(f" scope:SCOPE_{self.scope}")
            return "".join(out)
        if self.th is not None or self.scope is not None:
            raise OperandError(f"{_where(op)}: th/scope exist only on gfx12, not on {arch.name}")
        for bit in ("glc", "slc", "dlc", "nt"):
            if getattr(self, bit):
                spelled = arch.cache_bits.get(bit)
                if spelled is None:
                    raise OperandError(f"{_where(op)}: cache bit {bit} does not exist on {arch.name}")
                out.append(" " + spelled)
        return "".join(out)


NO_CACHE = CachePolicy()


def _where(op: Op) -> str:
    return f"{op.spelling} on {op.arch.name}"


def _check_range(op: Op, what: str, value: int, lo: int, hi: int) -> None:
    if type(value) is not int or not lo <= value <= hi:
        raise OperandError(f"{_where(op)}: {what} {value!r} is outside {lo}..{hi}")


@attrs.frozen(slots=True)
class Buf:
    """MUBUF: `offen` (vaddr is a byte offset), `idxen`, immediate `offset`, cache policy."""

    offen: bool = False
    idxen: bool = False
    offset: int = 0
    cache: CachePolicy = NO_CACHE
    group: str = attrs.field(default=M_BUF, init=False, repr=False)

    def render(self, op: Op) -> str:
        lo, hi = op.arch.mubuf_offset
        _check_range(op, "offset", self.offset, lo, hi)
        text = (" offen" if self.offen else "") + (" idxen" if self.idxen else "")
        if self.offset:
            text += f" offset:{self.offset}"
        return text + self.cache.render(op)


@attrs.frozen(slots=True)
class Glb:
    """global_*: immediate `offset` (signed) and cache policy."""

    offset: int = 0
    cache: CachePolicy = NO_CACHE
    group: str = attrs.field(default=M_GLB, init=False, repr=False)

    def render(self, op: Op) -> str:
        lo, hi = op.arch.global_offset
        _check_range(op, "offset", self.offset, lo, hi)
        text = f" offset:{self.offset}" if self.offset else ""
        return text + self.cache.render(op)


@attrs.frozen(slots=True)
class DS:
    """ds_* single-address forms: byte `offset` 0..65535."""

    offset: int = 0
    group: str = attrs.field(default=M_DS, init=False, repr=False)

    def render(self, op: Op) -> str:
        _check_range(op, "offset", self.offset, 0, 65535)
        return f" offset:{self.offset}" if self.offset else ""


@attrs.frozen(slots=True)
class DS2:
    """ds_read2/ds_write2 (ds_load_2addr/...): two offsets 0..255 in element units."""

    offset0: int = 0
    offset1: int = 0
    group: str = attrs.field(default=M_DS2, init=False, repr=False)

    def render(self, op: Op) -> str:
        _check_range(op, "offset0", self.offset0, 0, 255)
        _check_range(op, "offset1", self.offset1, 0, 255)
        return ((f" offset0:{self.offset0}" if self.offset0 else "")
                + (f" offset1:{self.offset1}" if self.offset1 else ""))


def _bits(op: Op, name: str, value: tuple[int, ...] | None) -> str:
    if value is None:
        return ""
    if not 1 <= len(value) <= 4 or any(b not in (0, 1) for b in value) or any(type(b) is not int for b in value):
        raise OperandError(f"{_where(op)}: {name} must be 1 to 4 bits of 0/1, got {value!r}")
    return f" {name}:[{','.join(map(str, value))}]"


@attrs.frozen(slots=True)
class Sel:
    """VOP3/VOP3P/WMMA selection and negation bits (`op_sel:[...]` ...) and `clamp`.

    Fields left at None are not printed; the assembler checks the list lengths per instruction.
    """

    op_sel: tuple[int, ...] | None = None
    op_sel_hi: tuple[int, ...] | None = None
    neg_lo: tuple[int, ...] | None = None
    neg_hi: tuple[int, ...] | None = None
    clamp: bool = False
    group: str = attrs.field(default=M_SEL, init=False, repr=False)

    def render(self, op: Op) -> str:
        return (_bits(op, "op_sel", self.op_sel) + _bits(op, "op_sel_hi", self.op_sel_hi)
                + _bits(op, "neg_lo", self.neg_lo) + _bits(op, "neg_hi", self.neg_hi)
                + (" clamp" if self.clamp else ""))


@attrs.frozen(slots=True)
class Mfma:
    """MFMA broadcast controls (hipBLASLt leaves them 0) and, on gfx94x+ f64, `neg:[a,b,c]`.

    On gfx950's f8f6f4 instructions cbsz/blgp are the A/B formats (0 fp8, 1 bf8, 2 fp6 E2M3,
    3 fp6 E3M2, 4 fp4) and decide how many registers A and B take.
    """

    cbsz: int = 0
    abid: int = 0
    blgp: int = 0
    neg: tuple[int, int, int] | None = None
    group: str = attrs.field(default=M_MFMA, init=False, repr=False)

    def render(self, op: Op) -> str:
        mi = op.matrix
        assert mi is not None
        if mi.format_regs:
            _check_range(op, "cbsz (A format)", self.cbsz, 0, 4)
            _check_range(op, "blgp (B format)", self.blgp, 0, 4)
            _check_range(op, "abid", self.abid, 0, 0)
        else:
            max_cbsz = mi.blocks.bit_length() - 1
            _check_range(op, "cbsz", self.cbsz, 0, max_cbsz)
            _check_range(op, "abid", self.abid, 0, (1 << self.cbsz) - 1)
            _check_range(op, "blgp", self.blgp, 0, 7)
        text = ((f" cbsz:{self.cbsz}" if self.cbsz else "") + (f" abid:{self.abid}" if self.abid else "")
                + (f" blgp:{self.blgp}" if self.blgp else ""))
        if self.neg is not None:
            if mi.acc_type != "f64" or "gfx94x+" not in op.arch.tags:
                raise OperandError(f"{_where(op)}: neg:[...] exists only on f64 MFMA of gfx94x/gfx950")
            text += _bits(op, "neg", self.neg)
        return text


_DPP_GFX9_ONLY = ("row_bcast:15", "row_bcast:31", "wave_shl:1", "wave_shr:1", "wave_rol:1", "wave_ror:1")


class DPPMasks(TypedDict, total=False):
    """The optional fields of a DPP control, as keyword arguments of its constructors."""

    row_mask: int
    bank_mask: int
    bound_ctrl: bool


@attrs.frozen(slots=True)
class DPP:
    """Data-parallel primitives on VOP1/VOP2: `ctrl` such as "quad_perm:[1,0,3,2]" or "row_shr:1".

    Build it with the class methods, which validate the control; the instruction gets `_dpp` and
    all its sources must be VGPRs.
    """

    ctrl: str
    row_mask: int = 0xF
    bank_mask: int = 0xF
    bound_ctrl: bool = False
    group: str = attrs.field(default=M_DPP, init=False, repr=False)

    @classmethod
    def quad_perm(cls, a: int, b: int, c: int, d: int, **kw: Unpack[DPPMasks]) -> DPP:
        if any(x not in (0, 1, 2, 3) for x in (a, b, c, d)):
            raise OperandError(f"quad_perm lanes must be 0..3, got {(a, b, c, d)}")
        return cls(f"quad_perm:[{a},{b},{c},{d}]", **kw)

    @classmethod
    def row(cls, kind: str, n: int, **kw: Unpack[DPPMasks]) -> DPP:
        """row_shl / row_shr / row_ror by 1..15, or row_share / row_xmask 0..15 (gfx10+)."""
        lo = 0 if kind in ("row_share", "row_xmask") else 1
        if kind not in ("row_shl", "row_shr", "row_ror", "row_share", "row_xmask") or not lo <= n <= 15:
            raise OperandError(f"bad DPP row control {kind}:{n}")
        return cls(f"{kind}:{n}", **kw)

    @classmethod
    def named(cls, ctrl: str, **kw: Unpack[DPPMasks]) -> DPP:
        """row_mirror, row_half_mirror, and (gfx9 only) row_bcast:15/31, wave_shl:1 ..."""
        if ctrl not in ("row_mirror", "row_half_mirror", *_DPP_GFX9_ONLY):
            raise OperandError(f"bad DPP control {ctrl!r}")
        return cls(ctrl, **kw)

    def render(self, op: Op) -> str:
        arch = op.arch
        if self.ctrl in _DPP_GFX9_ONLY and not arch.dpp_row_bcast:
            raise OperandError(f"{_where(op)}: DPP {self.ctrl} does not exist on {arch.name}")
        if self.ctrl.startswith(("row_share", "row_xmask")) and arch.dpp_row_bcast:
            raise OperandError(f"{_where(op)}: DPP {self.ctrl} does not exist on {arch.name}")
        _check_range(op, "row_mask", self.row_mask, 0, 15)
        _check_range(op, "bank_mask", self.bank_mask, 0, 15)
        return (f" {self.ctrl} row_mask:{self.row_mask:#x} bank_mask:{self.bank_mask:#x}"
                + (" bound_ctrl:1" if self.bound_ctrl else ""))
