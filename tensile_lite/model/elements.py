"""The element-type registry: one frozen record per data type holding every fact about it that the
formats and the packages need (its code, names, size, kind, instruction and metadata formats, and for
the 8-bit floats their encodings). Nothing else lists types; consumers read these records through
`DataType` (datatypes.py) and keep only policy (which type combinations the writer builds).

Records are keyed by the logic files' integer code, so this module does not depend on the enum.

Two vocabularies name the types. The 2024 one (`letter`, `cpp_name`: what our problem-type names and
`.dat` files use today) has codes 0-14, where 11-14 stand for fp8/bf8 in the target's encoding. ROCm 7.x
(`letter7`, `name7`) renames 11-14 as the FNUZ types (`Float8_fnuz`, token `F8N`), gives the OCP ones
their own codes 15-18 and adds fp6/bf6 (19, 20), fp4 (21) and the MX scale type E8M0 (22); the 7.x
runtime matches problem types by these names (spec/rocm7_delta.md, addendum item 2). Codes 15-22
have no 2024 name; their `letter`/`cpp_name` are ours, chosen not to collide with the 2024 spellings.
8-bit float format facts (spec/matrix_instructions.md §6.1) are given per encoding; which encoding a
GPU uses is a target fact (`Target.fp8` in tensile_lite/targets.py), passed in by the caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import attrs

# kinds of element
FLOAT, INT, COMPLEX, PAIR = "float", "int", "complex", "pair"  # PAIR: A and B of two 8-bit float formats
SCALE = "scale"  # an exponent-only block-scale factor (E8M0 of MX formats): never an operand by itself
# 8-bit float encodings (the values of Target.fp8)
FNUZ, OCP = "fnuz", "ocp"
ENCODINGS = (FNUZ, OCP)
# which codes of an 8-bit float are NaN
NAN_NEGATIVE_ZERO = "0x80 only"        # FNUZ: the would-be -0 is the one NaN; no -0, no infinity
NAN_ALL_ONES = "S.1111.111"             # OCP E4M3FN: exponent and mantissa all ones; no infinity
NAN_IEEE = "top exponent, mantissa != 0"  # OCP E5M2: IEEE-like, the top exponent with mantissa 0 is +-inf
# a type without a code-object metadata value type is described as an opaque `struct`
STRUCT = "struct"


@attrs.frozen(slots=True)
class Float8Spec:
    """One 8-bit float format in one encoding, from its field definitions."""

    format: str          # the instruction format name: "fp8" (E4M3) or "bf8" (E5M2)
    encoding: str        # FNUZ | OCP
    exponent_bits: int
    mantissa_bits: int
    bias: int
    max_finite: float    # largest finite value (what saturating conversions clamp to)
    nan: str             # NAN_NEGATIVE_ZERO | NAN_ALL_ONES | NAN_IEEE

    @property
    def has_infinity(self) -> bool:
        return self.nan == NAN_IEEE

    @property
    def has_negative_zero(self) -> bool:
        return self.nan != NAN_NEGATIVE_ZERO

    @property
    def precision(self) -> int:
        """Significant bits, the implicit one included."""
        return self.mantissa_bits + 1

    @property
    def min_exponent(self) -> int:
        """Exponent of the smallest normal value."""
        return 1 - self.bias


@attrs.frozen(slots=True)
class ElementType:
    """Everything about one data type."""

    code: int                 # the logic files' number (`DataType: 4`)
    name: str                 # the DataType member
    letter: str               # upstream's character(s) in kernel and library names
    cpp_name: str             # the C++ enum name the runtime's `.dat` reader matches
    bits: int                 # bits of one element (of each operand for a PAIR)
    kind: str                 # FLOAT | INT | COMPLEX | PAIR
    # the format name matrix instructions and conversions use ("f16", "fp8", "i32", ...), or None
    isa_format: str | None = None
    # the matrix instructions read it as an input (i32 is only ever an accumulator)
    matrix_input: bool = False
    value_type: str = STRUCT  # the code-object metadata `.value_type` of its pointers and values
    operands: tuple[int, int] | None = None  # PAIR: codes of A's and B's types
    aliases: tuple[str, ...] = ()             # further spellings `DataType.parse` accepts
    # FLOAT: widths of the exponent and mantissa fields (xf32: the mantissa bits its MFMAs keep of
    # f32's 23); the 8-bit floats' bias and special codes depend on the target's encoding (FLOAT8),
    # the others are IEEE-style (bias 2^(e-1) - 1)
    exponent_bits: int = 0
    mantissa_bits: int = 0
    # the ROCm 7.x names (module docstring): its DataTypeEnum / `.dat` name and its name token
    name7: str = ""
    letter7: str = ""
    # the 8-bit float encoding the code itself fixes (7.x's OCP codes 15-18); None for 11-14, which the
    # 2024 files, the writer and the verifier take in the target's encoding (Target.fp8)
    fixed_encoding: str | None = None

    @property
    def storage_bytes(self) -> int:
        """Bytes per element in memory (one for the 8-bit pairs: each operand is one byte)."""
        return self.bits // 8

    @property
    def ieee_bias(self) -> int:
        """The exponent bias of an IEEE-style float (not the 8-bit floats: see FLOAT8)."""
        return (1 << (self.exponent_bits - 1)) - 1

    @property
    def is_float8(self) -> bool:
        """An 8-bit float or a pair of them, in the target's encoding (codes 11-14) or in the one its
        code fixes (7.x's OCP codes 15-18): the writer, the emulator and the verifier handle both."""
        return self.bits == 8 and self.kind in (FLOAT, PAIR)

    def encoding_on(self, target_encoding: str | None) -> str | None:
        """The encoding this 8-bit float has on a target whose fp8/bf8 are `target_encoding` (its
        `Target.fp8`): the one the code fixes, else the target's. None for the other types."""
        if not self.is_float8:
            return None
        return self.fixed_encoding or target_encoding

    def runs_on(self, target_encoding: str | None) -> bool:
        """Whether a target with 8-bit floats in `target_encoding` computes this type: a fixed encoding
        must be the target's own (OCP fp8 on gfx950/gfx12, never on the FNUZ gfx94x)."""
        return self.fixed_encoding is None or self.fixed_encoding == target_encoding


def _t(code: int, name: str, letter: str, cpp: str, bits: int, kind: str, isa: str | None = None,
       value_type: str = STRUCT, *, matrix_input: bool = True, operands: tuple[int, int] | None = None,
       aliases: tuple[str, ...] = (), fields: tuple[int, int] = (0, 0), v7: tuple[str, str] | None = None,
       encoding: str | None = None) -> ElementType:
    name7, letter7 = v7 or (cpp, letter)
    return ElementType(code, name, letter, cpp, bits, kind, isa, matrix_input and isa is not None, value_type,
                       operands, aliases, *fields, name7, letter7, encoding)


ELEMENT_TYPES: tuple[ElementType, ...] = (
    _t(0, "S", "S", "Float", 32, FLOAT, "f32", "f32", aliases=("single", "float"), fields=(8, 23)),
    _t(1, "D", "D", "Double", 64, FLOAT, "f64", "f64", aliases=("double",), fields=(11, 52)),
    _t(2, "C", "C", "ComplexFloat", 64, COMPLEX),
    _t(3, "Z", "Z", "ComplexDouble", 128, COMPLEX),
    _t(4, "H", "H", "Half", 16, FLOAT, "f16", "f16", aliases=("half",), fields=(5, 10)),
    _t(5, "I8X4", "4xi8", "Int8x4", 32, INT),
    _t(6, "I", "I", "Int32", 32, INT, "i32", "i32", matrix_input=False, aliases=("int32",)),
    _t(7, "B", "B", "BFloat16", 16, FLOAT, "bf16", "bf16", aliases=("bfloat16",), fields=(8, 7)),
    _t(8, "I8", "I8", "Int8", 8, INT, "i8", "i8", aliases=("int8",)),
    _t(9, "I64", "I64", "Int64", 64, INT, value_type="i64"),
    # F32XdlMathOp's type: f32 data rounded to 10 mantissa bits by the xf32 MFMAs
    _t(10, "X", "X", "XFloat32", 32, FLOAT, "xf32", fields=(8, 10)),
    _t(11, "F8", "F8", "Float8", 8, FLOAT, "fp8", fields=(4, 3), v7=("Float8_fnuz", "F8N")),
    _t(12, "B8", "B8", "BFloat8", 8, FLOAT, "bf8", fields=(5, 2), v7=("BFloat8_fnuz", "B8N")),
    _t(13, "F8B8", "F8B8", "Float8BFloat8", 8, PAIR, operands=(11, 12), v7=("Float8BFloat8_fnuz", "F8B8N")),
    _t(14, "B8F8", "B8F8", "BFloat8Float8", 8, PAIR, operands=(12, 11), v7=("BFloat8Float8_fnuz", "B8F8N")),
    # ROCm 7.x only (rocm7_delta.md addendum item 2, §1.3): the OCP formats whatever the target; the
    # same instruction formats as 11/12, which read OCP on the targets that have it (gfx950, gfx12)
    _t(15, "F8O", "F8O", "Float8_ocp", 8, FLOAT, "fp8", fields=(4, 3), v7=("Float8", "F8"), encoding=OCP),
    _t(16, "B8O", "B8O", "BFloat8_ocp", 8, FLOAT, "bf8", fields=(5, 2), v7=("BFloat8", "B8"), encoding=OCP),
    _t(17, "F8B8O", "F8B8O", "Float8BFloat8_ocp", 8, PAIR, operands=(15, 16), v7=("Float8BFloat8", "F8B8"),
       encoding=OCP),
    _t(18, "B8F8O", "B8F8O", "BFloat8Float8_ocp", 8, PAIR, operands=(16, 15), v7=("BFloat8Float8", "B8F8"),
       encoding=OCP),
    _t(19, "F6", "F6", "Float6", 6, FLOAT, fields=(2, 3)),   # E2M3
    _t(20, "B6", "B6", "BFloat6", 6, FLOAT, fields=(3, 2)),  # E3M2
    _t(21, "F4", "F4", "Float4", 4, FLOAT, fields=(2, 1)),   # E2M1
    _t(22, "E8", "E8", "E8M0", 8, SCALE, fields=(8, 0)),
)
BY_CODE: Mapping[int, ElementType] = MappingProxyType({t.code: t for t in ELEMENT_TYPES})
# isa_format -> the type with that format in the target's encoding (fp8 -> code 11, not OCP's 15)
BY_ISA_FORMAT: Mapping[str, ElementType] = MappingProxyType(
    {t.isa_format: t for t in ELEMENT_TYPES if t.isa_format is not None and t.fixed_encoding is None})


def _f8(fmt: str, encoding: str, bias: int, max_finite: float, nan: str) -> Float8Spec:
    t = BY_ISA_FORMAT[fmt]
    return Float8Spec(fmt, encoding, t.exponent_bits, t.mantissa_bits, bias, max_finite, nan)


# (encoding, format) -> facts. FNUZ moves the bias up by one against OCP, taking the -0 code for NaN;
# OCP E4M3FN gives up infinity and keeps only S.1111.111 for NaN, so its top exponent holds 448.
FLOAT8: Mapping[tuple[str, str], Float8Spec] = MappingProxyType({
    (FNUZ, "fp8"): _f8("fp8", FNUZ, 8, 240.0, NAN_NEGATIVE_ZERO),
    (FNUZ, "bf8"): _f8("bf8", FNUZ, 16, 57344.0, NAN_NEGATIVE_ZERO),
    (OCP, "fp8"): _f8("fp8", OCP, 7, 448.0, NAN_ALL_ONES),
    (OCP, "bf8"): _f8("bf8", OCP, 15, 57344.0, NAN_IEEE),
})


def float8_spec(fmt: str, encoding: str) -> Float8Spec:
    """The facts of 8-bit float format `fmt` ("fp8", "bf8") in `encoding` (a target's `fp8`)."""
    spec = FLOAT8.get((encoding, fmt))
    if spec is None:
        raise KeyError(f"no 8-bit float {fmt!r} in encoding {encoding!r}")
    return spec


def format_bytes(isa_format: str) -> int:
    """Bytes per element of an instruction format ("f16" -> 2)."""
    return BY_ISA_FORMAT[isa_format].storage_bytes
