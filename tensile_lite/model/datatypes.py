"""Element data types as the logic files number them, with their names in every vocabulary we meet."""

from __future__ import annotations

import enum

from tensile_lite.errors import LogicError, Where


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
    def letter(self) -> str:
        """Upstream's character in kernel and library names."""
        return _INFO[self][0]

    @property
    def cpp_name(self) -> str:
        """The C++ enum name the runtime's `.dat` reader matches (`Float`, `Half`, ...)."""
        return _INFO[self][1]

    @property
    def num_bytes(self) -> int:
        """Bytes per element as stored in memory (f8 mixes use 1)."""
        return _INFO[self][2]

    @property
    def is_integral(self) -> bool:
        return self in (DataType.I8X4, DataType.I, DataType.I8, DataType.I64)

    @property
    def is_complex(self) -> bool:
        return self in (DataType.C, DataType.Z)

    @property
    def is_8bit_float(self) -> bool:
        return self in (DataType.F8, DataType.B8, DataType.F8B8, DataType.B8F8)

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


# letter, C++ enum name, bytes per element
_INFO: dict[DataType, tuple[str, str, int]] = {
    DataType.S: ("S", "Float", 4),
    DataType.D: ("D", "Double", 8),
    DataType.C: ("C", "ComplexFloat", 8),
    DataType.Z: ("Z", "ComplexDouble", 16),
    DataType.H: ("H", "Half", 2),
    DataType.I8X4: ("4xi8", "Int8x4", 4),
    DataType.I: ("I", "Int32", 4),
    DataType.B: ("B", "BFloat16", 2),
    DataType.I8: ("I8", "Int8", 1),
    DataType.I64: ("I64", "Int64", 8),
    DataType.X: ("X", "XFloat32", 4),
    DataType.F8: ("F8", "Float8", 1),
    DataType.B8: ("B8", "BFloat8", 1),
    DataType.F8B8: ("F8B8", "Float8BFloat8", 1),
    DataType.B8F8: ("B8F8", "BFloat8Float8", 1),
}

_BY_NAME: dict[str, DataType] = {}
for _dt, (_letter, _cpp, _n) in _INFO.items():
    _BY_NAME[_letter.lower()] = _dt
    _BY_NAME[_cpp.lower()] = _dt
_BY_NAME.update({"single": DataType.S, "float": DataType.S, "double": DataType.D, "half": DataType.H,
                 "bfloat16": DataType.B, "int32": DataType.I, "int8": DataType.I8})
