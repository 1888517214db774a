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

    @property
    def info(self) -> ElementType:
        """This type's record in the element-type registry (elements.py)."""
        return BY_CODE[self.value]

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
        """From a logic file's integer code or any of the letter / C++ spellings."""
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


_BY_NAME: dict[str, DataType] = {
    spelling.lower(): DataType(t.code) for t in ELEMENT_TYPES for spelling in (t.letter, t.cpp_name, *t.aliases)}
