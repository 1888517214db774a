"""The 8-bit float encodings (spec/matrix_instructions.md §6.1), from their field definitions: sign,
exponent and mantissa bits and the exponent bias, plus which codes are NaN or infinity.

    FNUZ (gfx940/941/942): fp8 E4M3 bias 8, bf8 E5M2 bias 16; 0x80 is the only NaN, no infinity, no -0.
    OCP (gfx950, gfx12):   fp8 E4M3FN bias 7, S.1111.111 NaN, no infinity (max 448);
                           bf8 E5M2 bias 15, exponent 31 is infinity (mantissa 0) or NaN.

The same mnemonics mean one encoding or the other by target, so the verifier picks the format from
the library's architecture (`for_target`). It is kept apart from the emulator's codec
(emu/numeric.py) on purpose: a reference built with the emulator's own conversions could not catch
their bugs. Who owns what: the field layout (exponent and mantissa widths, bias) is the definition of
the format and comes from the element-type registry (model/elements.py), as the emulator's does; the
decoding of codes into values (subnormals, which codes are NaN or infinite) and so the largest finite
value are worked out here on their own, and tests hold them to the registry's stated facts (240, 448,
57344) and to the emulator's codec, code by code. Encoding is only defined for values the format holds
exactly (the verifier quantises first, elements.py); anything else is a programming error.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import numpy as np

from tensile_lite.model.elements import FLOAT8, FNUZ, OCP


@attrs.frozen(slots=True)
class Float8Format:
    name: str  # "fp8" or "bf8"
    encoding: str  # FNUZ or OCP
    exponent_bits: int
    mantissa_bits: int
    bias: int
    # a NaN code no conversion produces (conversions give the positive canonical NaN, or 0x80 in FNUZ,
    # which has no other): what buffers are filled with where the kernel must neither read nor write
    sentinel: int
    values: np.ndarray = attrs.field(init=False, eq=False, repr=False)  # float64 value of each code

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "values", np.array([self._decode(c) for c in range(256)]))

    def _decode(self, code: int) -> float:
        m = self.mantissa_bits
        sign = -1.0 if code & 0x80 else 1.0
        exp = (code >> m) & ((1 << self.exponent_bits) - 1)
        man = code & ((1 << m) - 1)
        top = (1 << self.exponent_bits) - 1
        if self.encoding == FNUZ:
            if code == 0x80:
                return float("nan")
        elif self.name == "fp8":
            if exp == top and man == (1 << m) - 1:
                return float("nan")
        elif exp == top:
            return sign * float("inf") if man == 0 else float("nan")
        if exp == 0:
            return sign * man * 2.0 ** (1 - self.bias - m)
        return sign * (1 + man / (1 << m)) * 2.0 ** (exp - self.bias)

    @property
    def precision(self) -> int:
        """Significant bits, the implicit one included."""
        return self.mantissa_bits + 1

    @property
    def min_exponent(self) -> int:
        """Exponent of the smallest normal value."""
        return 1 - self.bias

    @property
    def max_finite(self) -> float:
        return float(np.max(self.values[np.isfinite(self.values)]))

    def decode(self, bits: np.ndarray) -> np.ndarray:
        return self.values[np.asarray(bits).astype(np.uint8)]

    def encode(self, values: np.ndarray) -> np.ndarray:
        """Codes (uint8) of values this format holds exactly. -0 is 0x80 in OCP and 0x00 in FNUZ."""
        x = np.asarray(values, dtype=np.float64)
        mag = np.abs(x)
        m = self.mantissa_bits
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            exp = np.maximum(np.floor(np.log2(np.where(mag > 0, mag, 1.0))), self.min_exponent)
            units = mag / np.exp2(exp - m)  # an integer below 2^(m+1) for representable values
            normal = mag >= 2.0 ** self.min_exponent
            field = np.where(normal, exp + self.bias, 0)
            man = np.where(normal, units - (1 << m), units)
            negative = np.signbit(x) & ((mag > 0) | (self.encoding == OCP))
            fields = np.nan_to_num(field, nan=0.0, posinf=0.0).astype(np.int64)
            mans = np.nan_to_num(np.rint(man), nan=0.0, posinf=0.0).astype(np.int64)
        codes = ((negative.astype(np.int64) << 7) | (fields << m) | mans).astype(np.uint8)
        back = self.decode(codes)
        if not np.array_equal(back, x) or not np.all(np.isfinite(x)):
            bad = x.reshape(-1)[np.flatnonzero((back != x).reshape(-1) | ~np.isfinite(x).reshape(-1))[:3]]
            raise ValueError(f"{self.encoding} {self.name} cannot hold {bad.tolist()} exactly")
        return codes


# the verifier's fill code per (encoding, format): a NaN no conversion produces (see `sentinel`)
_SENTINELS: Mapping[tuple[str, str], int] = {(FNUZ, "fp8"): 0x80, (FNUZ, "bf8"): 0x80,
                                             (OCP, "fp8"): 0xFF, (OCP, "bf8"): 0xFD}
FORMATS: Mapping[tuple[str, str], Float8Format] = {
    key: Float8Format(spec.format, spec.encoding, spec.exponent_bits, spec.mantissa_bits, spec.bias, _SENTINELS[key])
    for key, spec in FLOAT8.items()
}
