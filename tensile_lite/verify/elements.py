"""Element types as the verifier stores them: bit patterns in device memory, float64 values on the host.

Every float value is rounded to nearest even at the type's precision in float64 arithmetic (a scale by
a power of two and `np.round`, which is exact and ties to even), so quantising never double-rounds,
whatever the type. Integers are rounded to nearest even and saturated.

The 8-bit floats (F8 = fp8, B8 = bf8) are stored in the target's encoding (float8.py: FNUZ on gfx94x,
OCP on gfx950 and gfx12), so their elements depend on the architecture: `element(dt, arch)`; ROCm 7.x's
F8O/B8O are OCP on any target that has 8-bit floats. They
saturate like the kernels' D conversion (finite values clamped to the largest finite one before
rounding, spec/matrix_instructions.md §6.2). The mixed DataTypes (F8B8: A fp8, B bf8; B8F8) name
each operand's type (`operand_types`).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import numpy as np

from tensile_lite.model import DataType, ProblemType
from tensile_lite.model.elements import ENCODINGS, FNUZ
from tensile_lite.targets import TARGETS
from tensile_lite.verify.float8 import FORMATS, Float8Format


@attrs.frozen(slots=True)
class Element:
    """How one data type is quantised, stored and read back."""

    dtype: DataType
    storage: np.dtype = attrs.field(converter=np.dtype)
    # floats: precision in bits (with the implicit one), smallest normal exponent, largest finite value
    precision: int = 0
    min_exponent: int = 0
    max_value: float = 0.0
    # bits a buffer is filled with where the kernel must neither read nor write: a NaN with a payload
    # no arithmetic produces (arithmetic NaNs are canonical), or an unlikely integer
    sentinel: int = 0
    # values beyond max_value become max_value when converted (fp8/bf8), not infinity
    saturates: bool = False
    float8: Float8Format | None = None  # the encoding of an 8-bit float

    @property
    def is_float(self) -> bool:
        return self.precision > 0

    @property
    def unit_roundoff(self) -> float:
        """Half the distance from 1 to the next value: the relative error of one rounding."""
        return 2.0 ** -self.precision if self.is_float else 0.0

    def round(self, values: np.ndarray) -> np.ndarray:
        """float64 values rounded to this type (RNE; saturating for integers), still as float64."""
        x = np.asarray(values, dtype=np.float64)
        if not self.is_float:
            info = np.iinfo(self.storage)
            return np.clip(np.round(x), info.min, info.max)
        if self.saturates:
            x = np.clip(x, -self.max_value, self.max_value)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            exp = np.floor(np.log2(np.abs(x)))
            exp = np.where(np.isfinite(exp), np.maximum(exp, self.min_exponent), self.min_exponent)
            quantum = np.exp2(exp - (self.precision - 1))
            out = np.round(x / quantum) * quantum
            return np.where(np.abs(out) > self.max_value, np.copysign(np.inf, x), out)

    def half_ulp(self, magnitude: np.ndarray) -> np.ndarray:
        """Half a unit in the last place at |value| <= magnitude: the error bound of one rounding."""
        if not self.is_float:
            return np.zeros_like(np.asarray(magnitude, dtype=np.float64))
        with np.errstate(divide="ignore"):
            exp = np.floor(np.log2(np.abs(magnitude)))
        exp = np.where(np.isfinite(exp), np.maximum(exp, self.min_exponent), self.min_exponent)
        return np.exp2(exp - self.precision)

    def to_bits(self, values: np.ndarray) -> np.ndarray:
        """Values already representable in this type (see `round`) -> stored bit patterns."""
        x = np.asarray(values, dtype=np.float64)
        if self.float8 is not None:
            return self.float8.encode(x)
        if self.dtype is DataType.S:
            return x.astype(np.float32).view(np.uint32)
        if self.dtype is DataType.D:
            return x.view(np.uint64).copy()
        if self.dtype is DataType.H:
            return x.astype(np.float16).view(np.uint16)
        if self.dtype is DataType.B:
            # exact: the value has at most 8 significant bits, so its f32 pattern ends in 16 zero bits
            return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        return x.astype(self.storage)

    def from_bits(self, bits: np.ndarray) -> np.ndarray:
        bits = np.asarray(bits)
        if self.float8 is not None:
            return self.float8.decode(bits)
        if self.dtype is DataType.S:
            return bits.astype(np.uint32).view(np.float32).astype(np.float64)
        if self.dtype is DataType.D:
            return bits.astype(np.uint64).view(np.float64).copy()
        if self.dtype is DataType.H:
            return bits.astype(np.uint16).view(np.float16).astype(np.float64)
        if self.dtype is DataType.B:
            return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        return bits.astype(self.storage).astype(np.float64)

    def random(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """Random values of this type: uniform in [-1, 1) with every mantissa bit used (floats),
        or small integers whose products and sums stay far from overflow.

        Subnormal floats become zero: whether they are flushed is the hardware's choice, not the
        kernel's (gfx90a MFMA flushes f16 subnormal inputs), so they would test the wrong thing."""
        if self.is_float:
            values = self.round(rng.uniform(-1.0, 1.0, size=shape))
            return np.where(np.abs(values) < 2.0 ** self.min_exponent, 0.0, values)
        return rng.integers(-8, 9, size=shape).astype(np.float64)


def _ieee(dt: DataType, sentinel: int) -> Element:
    """A float's rounding facts from its field widths in the element-type registry (stated facts of
    the format, not the emulator's arithmetic, so the reference stays independent of it)."""
    t = dt.info
    m, bias = t.mantissa_bits, t.ieee_bias
    return Element(dt, np.dtype(f"uint{t.bits}"), m + 1, 1 - bias, (2.0 - 2.0 ** -m) * 2.0 ** bias, sentinel)


ELEMENTS: Mapping[DataType, Element] = {
    DataType.S: _ieee(DataType.S, 0x7FC0DEAD),
    DataType.D: _ieee(DataType.D, 0x7FF8_0000_DEAD_BEEF),
    DataType.H: _ieee(DataType.H, 0x7E5A),
    DataType.B: _ieee(DataType.B, 0x7FDA),
    DataType.I8: Element(DataType.I8, np.int8, sentinel=0x5A),
    DataType.I: Element(DataType.I, np.int32, sentinel=0x5A5A5A5A),
}


def _float8(dt: DataType, fmt: Float8Format) -> Element:
    return Element(dt, np.uint8, fmt.precision, fmt.min_exponent, fmt.max_finite, fmt.sentinel, saturates=True,
                   float8=fmt)


# (8-bit type, encoding) -> element
FLOAT8_ELEMENTS: Mapping[tuple[DataType, str], Element] = {
    (dt, encoding): _float8(dt, FORMATS[(encoding, str(dt.isa_format))])
    for dt in DataType if dt.is_8bit_float and dt.operand_types == (dt, dt) for encoding in ENCODINGS
}


def fp8_encoding(arch: str | None) -> str | None:
    """How `arch` encodes fp8/bf8 ("fnuz", "ocp"), None when it has no 8-bit floats (or is unknown)."""
    info = TARGETS.get(arch) if arch else None
    return info.fp8 if info is not None else None


def element(dt: DataType, arch: str | None = None) -> Element | None:
    """The element description of `dt` (8-bit floats in `arch`'s encoding), or None when the verifier
    cannot handle that type (an 8-bit float without an architecture that has them)."""
    if (dt, FNUZ) in FLOAT8_ELEMENTS:
        # 7.x's OCP codes are OCP whatever the target, the 2024 codes take the target's encoding
        target = fp8_encoding(arch)
        encoding = dt.info.encoding_on(target) if target else None
        return FLOAT8_ELEMENTS[(dt, encoding)] if encoding else None
    return ELEMENTS.get(dt)


def operand_types(pt: ProblemType) -> tuple[DataType, DataType]:
    """The element types of A and B as stored: a mixed 8-bit DataType (F8B8, B8F8) names both."""
    return pt.a_type.operand_types[0], pt.b_type.operand_types[1]
