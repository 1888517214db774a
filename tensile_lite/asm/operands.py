"""Operand values: registers and register ranges, special registers, labels and wait counts.

Every operand is an immutable value that carries its assembler text, computed once, so formatting
an instruction is a join of ready strings. Integers and floats are passed as plain Python numbers
(`int` / `float`); the instruction builder decides whether they are inline constants or literals.

Register ranges index like Python sequences (`r[2]`, `r[0:4]` are relative and end-exclusive) but
print in the assembler's inclusive form (`v[4:7]`).
"""

from __future__ import annotations

import re
from functools import lru_cache

import attrs

from tensile_lite.asm.errors import OperandError

# Operand kinds as bits, so an instruction slot's accepted kinds are one int mask.
SGPR = 1 << 0
VGPR = 1 << 1
AGPR = 1 << 2
TTMP = 1 << 3
SPECIAL = 1 << 4      # vcc, exec, m0 and their halves
NULL = 1 << 5         # `null` (gfx10+)
OFF = 1 << 6          # `off` (no address register)
LABEL = 1 << 7
INT_INLINE = 1 << 8   # -16..64
INT_LITERAL = 1 << 9  # any other 32-bit integer
FLT_INLINE = 1 << 10  # 0.5, 1.0, 2.0, 4.0, their negatives, 1/(2*pi)
FLT_LITERAL = 1 << 11
WAIT = 1 << 12        # the operand of s_waitcnt

_FILE_KIND = {"s": SGPR, "v": VGPR, "a": AGPR, "ttmp": TTMP}
_MAX_INDEX = {"s": 128, "v": 512, "a": 512, "ttmp": 16}

# 1/(2*pi) is an inline constant on gfx8 and later (AMD ISA manuals, "inline constants").
INV_2PI = 0.15915494309189535
INLINE_FLOATS = frozenset({0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0, INV_2PI})


@attrs.frozen(slots=True, repr=False, cache_hash=True)
class Reg:
    """`count` consecutive registers of one file ('s', 'v', 'a' or 'ttmp') starting at `index`."""

    file: str
    index: int
    count: int = 1
    text: str = attrs.field(init=False, eq=False, hash=False)
    kind: int = attrs.field(init=False, eq=False, hash=False)

    def __attrs_post_init__(self) -> None:
        kind = _FILE_KIND.get(self.file)
        if kind is None:
            raise OperandError(f"unknown register file {self.file!r} (use 's', 'v', 'a' or 'ttmp')")
        if self.count < 1 or self.index < 0 or self.index + self.count > _MAX_INDEX[self.file]:
            raise OperandError(f"register range {self.file}[{self.index}:{self.index + self.count - 1}]"
                               " is out of range")
        if self.count == 1:
            text = f"{self.file}{self.index}"
        else:
            text = f"{self.file}[{self.index}:{self.index + self.count - 1}]"
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "kind", kind)

    @property
    def end(self) -> int:
        """One past the last register."""
        return self.index + self.count

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, key: int | slice) -> Reg:
        """A sub-range relative to this one: `r[i]` one register, `r[a:b]` registers a..b-1."""
        if type(key) is int and 0 <= key < self.count:
            return _reg(self.file, self.index + key, 1)
        if type(key) is slice and key.step is None:
            # the common r[a:b] with plain bounds, without slice.indices()
            start = key.start or 0
            stop = self.count if key.stop is None else key.stop
            if type(start) is int and type(stop) is int and 0 <= start < stop <= self.count:
                return _reg(self.file, self.index + start, stop - start)
        if isinstance(key, slice):
            # unlike a list slice, a register range never silently shrinks: out of range raises
            start = 0 if key.start is None else key.start
            stop = self.count if key.stop is None else key.stop
            start += self.count if start < 0 else 0
            stop += self.count if stop < 0 else 0
            if key.step not in (None, 1) or not 0 <= start < stop <= self.count:
                raise OperandError(f"cannot take [{key.start}:{key.stop}] of {self.text}")
            return _reg(self.file, self.index + start, stop - start)
        i = key + self.count if key < 0 else key
        if not 0 <= i < self.count:
            raise OperandError(f"register {key} is outside {self.text}")
        return _reg(self.file, self.index + i, 1)

    def split(self, width: int) -> tuple[Reg, ...]:
        """Consecutive pieces of `width` registers (the range must divide evenly)."""
        if width < 1 or self.count % width:
            raise OperandError(f"{self.text} does not split into pieces of {width}")
        return tuple(_reg(self.file, self.index + i, width) for i in range(0, self.count, width))

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Reg({self.text})"


@lru_cache(maxsize=8192)
def _reg(file: str, index: int, count: int) -> Reg:
    # Registers are values; interning the common ones makes building instructions cheaper.
    return Reg(file, index, count)


def sgpr(index: int, count: int = 1) -> Reg:
    """`s<index>` or `s[index:index+count-1]`."""
    return _reg("s", index, count)


def vgpr(index: int, count: int = 1) -> Reg:
    """`v<index>` or `v[index:index+count-1]`."""
    return _reg("v", index, count)


def agpr(index: int, count: int = 1) -> Reg:
    """`a<index>` or `a[index:index+count-1]` (accumulation registers, CDNA only)."""
    return _reg("a", index, count)


def ttmp(index: int, count: int = 1) -> Reg:
    """Trap temporaries; gfx12 delivers the workgroup ids in ttmp9 and ttmp7."""
    return _reg("ttmp", index, count)


@attrs.frozen(slots=True, repr=False)
class Special:
    """A named register such as vcc or m0. `width` is in dwords (0: fits any width, like `null`)."""

    text: str
    width: int
    kind: int = SPECIAL

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Special({self.text})"


VCC = Special("vcc", 2)
VCC_LO = Special("vcc_lo", 1)
VCC_HI = Special("vcc_hi", 1)
EXEC = Special("exec", 2)
EXEC_LO = Special("exec_lo", 1)
EXEC_HI = Special("exec_hi", 1)
M0 = Special("m0", 1)
NULL_REG = Special("null", 0, NULL)
OFF_ADDR = Special("off", 0, OFF)

_LABEL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


@attrs.frozen(slots=True, repr=False)
class Label:
    """A branch target. Names are plain identifiers, so they can never contain comment characters."""

    text: str = attrs.field()
    kind: int = attrs.field(default=LABEL, init=False)

    @text.validator
    def _check(self, _attribute: object, value: str) -> None:
        if not _LABEL_NAME.match(value):
            raise OperandError(f"label name {value!r} must match {_LABEL_NAME.pattern}")

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Label({self.text})"


@attrs.frozen(slots=True, repr=False)
class WaitCounts:
    """The operand of `s_waitcnt`: a counter is waited on only when it is not None."""

    vmcnt: int | None = None
    expcnt: int | None = None
    lgkmcnt: int | None = None
    text: str = attrs.field(init=False, eq=False, hash=False)
    kind: int = attrs.field(default=WAIT, init=False, eq=False, hash=False)

    def __attrs_post_init__(self) -> None:
        parts = [f"{name}({value})" for name, value in
                 (("vmcnt", self.vmcnt), ("expcnt", self.expcnt), ("lgkmcnt", self.lgkmcnt))
                 if value is not None]
        if not parts:
            raise OperandError("s_waitcnt needs at least one counter")
        for name, value in (("vmcnt", self.vmcnt), ("expcnt", self.expcnt), ("lgkmcnt", self.lgkmcnt)):
            if value is not None and value < 0:
                raise OperandError(f"{name} must not be negative, got {value}")
        object.__setattr__(self, "text", " ".join(parts))

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"WaitCounts({self.text})"


Operand = Reg | Special | Label | WaitCounts | int | float
