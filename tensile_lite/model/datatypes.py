"""Element data types as the logic files number them; their facts live in the registry (elements.py)."""

from __future__ import annotations

import enum

from tensile_lite.errors import LogicError, Where
from tensile_lite.model.elements import BY_CODE, COMPLEX, ELEMENT_TYPES, INT, ElementType


class DataType(enum.Enum):
    """Value = the integer code logic files use (`DataType: 4`). Properties give the other spellings."""

    S = 0
    D = 1
    C = 2
    Z = 3
    H = 4
    I8X4 = 5
    I = 6  # noqa: E741 - upstream's letter for int32
    B = 7
    I8 = 8
    I64 = 9
    X = 10
    F8 = 11
    B8 = 12
    F8B8 = 13
    B8F8 = 14
    # ROCm 7.x codes (elements.py): OCP 8-bit floats, their mixes, fp6, bf6, fp4 and the MX scale type
    F8O = 15
    B8O = 16
    F8B8O = 17
    B8F8O = 18
    F6 = 19
    B6 = 20
    F4 = 21
    E8 = 22

    @property
    def info(self) -> ElementType:
        """This type's record in the element-type registry (elements.py)."""
        return BY_CODE[self.value]

    @property
    def name7(self) -> str:
        """The ROCm 7.x name (`Float8_fnuz` for code 11): what a 7.x runtime matches."""
        return self.info.name7

    @property
    def letter7(self) -> str:
        """The ROCm 7.x token in kernel and file names (`F8N` for code 11)."""
        return self.info.letter7

    @property
    def letter(self) -> str:
        """Upstream's character in kernel and library names."""
        return self.info.letter

    @property
    def cpp_name(self) -> str:
        """The C++ enum name the runtime's `.dat` reader matches (`Float`, `Half`, ...)."""
        return self.info.cpp_name

    @property
    def num_bytes(self) -> int:
        """Bytes per element as stored in memory (f8 mixes use 1)."""
        return self.info.storage_bytes

    @property
    def isa_format(self) -> str | None:
        """The format name matrix instructions and conversions use ("f16", "fp8", ...)."""
        return self.info.isa_format

    @property
    def value_type(self) -> str:
        """The code-object metadata value type of this type's pointers and values."""
        return self.info.value_type

    @property
    def is_integral(self) -> bool:
        return self.info.kind == INT

    @property
    def is_complex(self) -> bool:
        return self.info.kind == COMPLEX

    @property
    def is_8bit_float(self) -> bool:
        return self.info.is_float8

    @property
    def operand_types(self) -> tuple[DataType, DataType]:
        """The types of A and B when both are of this DataType: a mixed 8-bit pair (F8B8) names two."""
        pair = self.info.operands
        return (DataType(pair[0]), DataType(pair[1])) if pair is not None else (self, self)

    @classmethod
    def parse(cls, value: object, parameter: str = "DataType") -> DataType:
        """From a logic file's integer code or any of the letter / C++ spellings of either vocabulary; where
        the two disagree (`Float8`, `F8`) the 2024 meaning wins, as the dev set spells it."""
        if isinstance(value, bool):
            raise LogicError(f"data type must be a number or a name, got {value!r}", _where(parameter))
        if isinstance(value, int):
            try:
                return cls(value)
            except ValueError:
                raise LogicError(f"unknown data type code {value}", _where(parameter)) from None
        if isinstance(value, str):
            hit = _BY_NAME.get(value.lower())
            if hit is not None:
                return hit
        raise LogicError(f"unknown data type {value!r}", _where(parameter))


def _where(parameter: str) -> Where:
    return Where(parameter=parameter)


def _by_name() -> dict[str, DataType]:
    names = {spelling.lower(): DataType(t.code) for t in ELEMENT_TYPES
             for spelling in (t.letter, t.cpp_name, *t.aliases)}
    for t in ELEMENT_TYPES:  # 7.x spellings only where the 2024 vocabulary does not already use them
        for spelling in (t.name7, t.letter7):
            names.setdefault(spelling.lower(), DataType(t.code))
    return names


_BY_NAME: dict[str, DataType] = _by_name()
