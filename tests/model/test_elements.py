"""The element-type registry agrees with the enum, with itself and with what its consumers need."""

from __future__ import annotations

import pytest

from tensile_lite.asm.gemm.support import MIXED_TYPES, TYPES
from tensile_lite.asm.kernel import VALUE_TYPE_SIZES
from tensile_lite.model import DataType
from tensile_lite.model.elements import (
    BY_CODE,
    BY_ISA_FORMAT,
    ELEMENT_TYPES,
    ENCODINGS,
    FLOAT,
    FLOAT8,
    FNUZ,
    NAN_ALL_ONES,
    NAN_IEEE,
    NAN_NEGATIVE_ZERO,
    OCP,
    PAIR,
    STRUCT,
    float8_spec,
    format_bytes,
)
from tensile_lite.targets import TARGETS


def test_every_data_type_has_one_record() -> None:
    assert sorted(BY_CODE) == sorted(dt.value for dt in DataType)
    assert len(ELEMENT_TYPES) == len(BY_CODE)
    for dt in DataType:
        assert dt.info.code == dt.value and dt.info.name == dt.name


@pytest.mark.parametrize("dt", list(DataType), ids=lambda d: d.name)
def test_names_round_trip_through_parse(dt: DataType) -> None:
    for spelling in (dt.letter, dt.cpp_name, dt.letter.lower(), dt.cpp_name.upper(), *dt.info.aliases):
        assert DataType.parse(spelling) is dt
    assert DataType.parse(dt.value) is dt


def test_spellings_are_unambiguous() -> None:
    owners: dict[str, int] = {}
    for t in ELEMENT_TYPES:
        for spelling in {s.lower() for s in (t.letter, t.cpp_name, *t.aliases)}:
            assert owners.setdefault(spelling, t.code) == t.code, spelling


def test_sizes_and_kinds() -> None:
    assert [DataType.parse(n).num_bytes for n in ("S", "D", "C", "Z", "H", "B", "I8", "I", "I64", "F8B8")] == [
        4, 8, 8, 16, 2, 2, 1, 4, 8, 1]
    assert {dt for dt in DataType if dt.is_8bit_float} == {DataType.F8, DataType.B8, DataType.F8B8, DataType.B8F8,
                                                          DataType.F8O, DataType.B8O, DataType.F8B8O, DataType.B8F8O}
    assert {dt for dt in DataType if dt.is_integral} == {DataType.I8X4, DataType.I, DataType.I8, DataType.I64}
    assert {dt for dt in DataType if dt.is_complex} == {DataType.C, DataType.Z}


def test_pairs_name_their_operands() -> None:
    assert DataType.F8B8.operand_types == (DataType.F8, DataType.B8)
    assert DataType.B8F8.operand_types == (DataType.B8, DataType.F8)
    assert DataType.H.operand_types == (DataType.H, DataType.H)
    for t in ELEMENT_TYPES:
        assert (t.kind == PAIR) == (t.operands is not None)
        if t.operands is not None:
            for code in t.operands:
                part = BY_CODE[code]
                assert part.kind == FLOAT and part.bits == t.bits
                assert part.fixed_encoding == t.fixed_encoding
                # every 8-bit operand has an instruction format, OCP's the same as the target-encoded one
                assert part.isa_format in ("fp8", "bf8")
    assert DataType.F8O.isa_format == DataType.F8.isa_format and DataType.B8O.isa_format == DataType.B8.isa_format


# ROCm 7.x names of codes 11-22 (spec/rocm7_delta.md, addendum item 2, and §1.3's name tokens)
_ROCM7 = {11: ("Float8_fnuz", "F8N"), 12: ("BFloat8_fnuz", "B8N"), 13: ("Float8BFloat8_fnuz", "F8B8N"),
          14: ("BFloat8Float8_fnuz", "B8F8N"), 15: ("Float8", "F8"), 16: ("BFloat8", "B8"),
          17: ("Float8BFloat8", "F8B8"), 18: ("BFloat8Float8", "B8F8"), 19: ("Float6", "F6"),
          20: ("BFloat6", "B6"), 21: ("Float4", "F4"), 22: ("E8M0", "E8")}


def test_rocm7_codes_carry_the_7x_names() -> None:
    for code, (name7, letter7) in _ROCM7.items():
        assert (BY_CODE[code].name7, BY_CODE[code].letter7) == (name7, letter7)
    for t in ELEMENT_TYPES:
        if t.code not in _ROCM7:  # the older types are spelled alike in both vocabularies
            assert (t.name7, t.letter7) == (t.cpp_name, t.letter)
    assert {t.code for t in ELEMENT_TYPES if t.fixed_encoding == OCP} == {15, 16, 17, 18}


def test_rocm7_spellings_parse_where_they_do_not_clash_with_2024() -> None:
    assert DataType.parse("F8N") is DataType.F8 and DataType.parse("Float8_fnuz") is DataType.F8
    assert DataType.parse("B8F8N") is DataType.B8F8 and DataType.parse("E8M0") is DataType.E8
    assert DataType.parse("Float4") is DataType.F4 and DataType.parse(21) is DataType.F4
    # `Float8` / `F8` mean code 11 in the 2024 files and the dev set: that reading stays
    assert DataType.parse("Float8") is DataType.F8 and DataType.parse("F8") is DataType.F8


def test_writer_types_are_the_2024_codes_and_ocp_fp8() -> None:
    """Of the 7.x-only codes the writer takes the OCP 8-bit floats (15-18), not fp6/fp4/E8M0 yet."""
    assert {dt.value for dt in _writer_types()} - set(range(15)) == {15, 16, 17, 18}
    assert not any(DataType(c).is_8bit_float for c in range(19, 23))


@pytest.mark.parametrize("code", [11, 12, 13, 14, 15, 16, 17, 18])
def test_float8_encoding_on_each_target(code: int) -> None:
    """11-14 take the target's encoding; 15-18 are OCP and run only where the target's fp8 is OCP."""
    t = BY_CODE[code]
    for target, want in ((FNUZ, FNUZ), (OCP, OCP)):
        assert t.encoding_on(target) == (OCP if code >= 15 else want)
        assert t.runs_on(target) == (code < 15 or target == OCP)
    assert BY_CODE[0].encoding_on(OCP) is None


def _writer_types() -> set[DataType]:
    out = set()
    for combo in (*TYPES, *MIXED_TYPES):
        out.update(combo)
    return out


def test_every_type_the_writer_supports_has_its_formats() -> None:
    """Each type in a supported combination has an instruction format (or, for a pair, its operands
    do), a metadata value type whose size the kernel metadata knows, and storage bytes."""
    for dt in _writer_types():
        for part in dt.operand_types:
            assert part.isa_format is not None, part
            # one type per format: the target-encoded one (OCP's codes share its format)
            assert BY_ISA_FORMAT[part.isa_format].code == (part.value - 4 if part.info.fixed_encoding else part.value)
            assert format_bytes(part.isa_format) == part.num_bytes
        if not dt.is_8bit_float:
            assert dt.value_type != STRUCT, dt
            assert VALUE_TYPE_SIZES[dt.value_type] == dt.num_bytes
    # every by-value metadata type of an element is sized as the element is stored
    for t in ELEMENT_TYPES:
        if t.value_type != STRUCT:
            assert VALUE_TYPE_SIZES[t.value_type] == t.storage_bytes


def test_matrix_inputs() -> None:
    inputs = {dt for dt in DataType if dt.info.matrix_input}
    assert inputs == {DataType.S, DataType.D, DataType.H, DataType.B, DataType.I8, DataType.X, DataType.F8, DataType.B8,
                      DataType.F8O, DataType.B8O}
    assert DataType.I.isa_format == "i32" and not DataType.I.info.matrix_input


@pytest.mark.parametrize(("encoding", "fmt", "bits", "bias", "top", "inf", "neg_zero"), [
    (FNUZ, "fp8", (4, 3), 8, 240.0, False, False),
    (FNUZ, "bf8", (5, 2), 16, 57344.0, False, False),
    (OCP, "fp8", (4, 3), 7, 448.0, False, True),
    (OCP, "bf8", (5, 2), 15, 57344.0, True, True),
])
def test_float8_facts(encoding: str, fmt: str, bits: tuple[int, int], bias: int, top: float, inf: bool,
                      neg_zero: bool) -> None:
    spec = float8_spec(fmt, encoding)
    assert (spec.exponent_bits, spec.mantissa_bits, spec.bias) == (*bits, bias)
    assert spec.max_finite == top
    assert (spec.has_infinity, spec.has_negative_zero) == (inf, neg_zero)
    assert spec.min_exponent == 1 - bias and spec.precision == bits[1] + 1


def test_float8_max_finite_follows_from_the_layout() -> None:
    """The stated largest finite value is the one the layout and NaN rule give."""
    for spec in FLOAT8.values():
        m = spec.mantissa_bits
        top_exp = (1 << spec.exponent_bits) - 1
        exponent, mantissa = {
            NAN_NEGATIVE_ZERO: (top_exp, (1 << m) - 1),   # every code but 0x80 is a number
            NAN_ALL_ONES: (top_exp, (1 << m) - 2),        # the top code of the top binade is NaN
            NAN_IEEE: (top_exp - 1, (1 << m) - 1),        # the top binade is infinity and NaN
        }[spec.nan]
        assert spec.max_finite == (1 + mantissa / (1 << m)) * 2.0 ** (exponent - spec.bias), spec


def test_every_target_encoding_is_known() -> None:
    """The target registry owns which encoding a GPU uses; each one it names has both formats here."""
    used = {t.fp8 for t in TARGETS.values() if t.fp8 is not None}
    assert used == set(ENCODINGS)
    for encoding in used:
        for fmt in ("fp8", "bf8"):
            assert float8_spec(fmt, encoding).encoding == encoding
    assert TARGETS["gfx942"].fp8 == FNUZ and TARGETS["gfx950"].fp8 == OCP
    with pytest.raises(KeyError):
        float8_spec("fp8", "ieee")


def test_float_fields_fill_the_element() -> None:
    """Sign, exponent and mantissa fields add up to the element's width; the IEEE-style formats give
    their well-known largest values and the 8-bit floats' widths are their formats' in every encoding."""
    for t in ELEMENT_TYPES:
        if t.kind == FLOAT:
            # xf32 is stored as f32; its MFMAs keep 10 of the 23 mantissa bits
            width = 1 + t.exponent_bits + (23 if t.name == "X" else t.mantissa_bits)
            assert width == t.bits, t.name
    tops = {"f16": 65504.0, "bf16": float.fromhex("0x1.fep127"), "f32": float.fromhex("0x1.fffffep127")}
    for fmt, top in tops.items():
        t = BY_ISA_FORMAT[fmt]
        assert (2.0 - 2.0 ** -t.mantissa_bits) * 2.0 ** t.ieee_bias == top
    for spec in FLOAT8.values():
        t = BY_ISA_FORMAT[spec.format]
        assert (spec.exponent_bits, spec.mantissa_bits) == (t.exponent_bits, t.mantissa_bits)
