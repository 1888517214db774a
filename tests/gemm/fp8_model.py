"""A numpy model of the 8-bit float encodings, written from their definitions (spec/matrix_instructions.md
§6.1) and independent of the emulator's: every code decoded from sign, exponent and mantissa fields,
and values quantised by searching the table of finite codes (round to nearest, ties to the even code).

FNUZ (gfx940/941/942): exponent bias 8 (fp8) / 16 (bf8), 0x80 is the only NaN, no infinity, no -0.
OCP (gfx950): E4M3FN, bias 7, S.1111.111 is NaN, no infinity (max 448); E5M2, bias 15, IEEE-like.
"""

from __future__ import annotations

from functools import cache

import numpy as np

# (exponent bits, mantissa bits, bias) per (encoding, format)
LAYOUT = {("fnuz", "fp8"): (4, 3, 8), ("fnuz", "bf8"): (5, 2, 16),
          ("ocp", "fp8"): (4, 3, 7), ("ocp", "bf8"): (5, 2, 15)}


def decode_code(code: int, encoding: str, fmt: str) -> float:
    """The value of one 8-bit code."""
    e_bits, m_bits, bias = LAYOUT[(encoding, fmt)]
    sign = -1.0 if code & 0x80 else 1.0
    exp = (code >> m_bits) & ((1 << e_bits) - 1)
    man = code & ((1 << m_bits) - 1)
    if encoding == "fnuz":
        if code == 0x80:
            return float("nan")
    elif fmt == "fp8":
        if exp == 15 and man == 7:
            return float("nan")
    elif exp == 31:
        return sign * float("inf") if man == 0 else float("nan")
    if exp == 0:
        return sign * man * 2.0 ** (1 - bias - m_bits)
    return sign * (1 + man / (1 << m_bits)) * 2.0 ** (exp - bias)


@cache
def table(encoding: str, fmt: str) -> np.ndarray:
    """float64 value of each of the 256 codes."""
    return np.array([decode_code(c, encoding, fmt) for c in range(256)])


def nan_code(encoding: str) -> int:
    return 0x80 if encoding == "fnuz" else 0x7F


def max_finite(encoding: str, fmt: str) -> float:
    values = table(encoding, fmt)
    return float(np.nanmax(values[np.isfinite(values)]))


def encode(values: np.ndarray, encoding: str, fmt: str) -> np.ndarray:
    """Nearest finite code (ties to the even code) of each finite value within range; uint8."""
    values = np.asarray(values, dtype=np.float64)
    codes = table(encoding, fmt)
    finite = np.flatnonzero(np.isfinite(codes) & ~((codes == 0) & (np.arange(256) >= 0x80)))
    order = finite[np.argsort(codes[finite], kind="stable")]
    sorted_vals = codes[order]
    if not np.all(np.abs(values) <= sorted_vals[-1]):
        raise ValueError("value outside the format's finite range")
    hi = np.clip(np.searchsorted(sorted_vals, values), 1, len(order) - 1)
    lo = hi - 1
    d_lo, d_hi = values - sorted_vals[lo], sorted_vals[hi] - values
    # consecutive finite codes of one sign differ in their lowest bit: a tie goes to the even one
    pick_hi = (d_hi < d_lo) | ((d_hi == d_lo) & (order[hi] % 2 == 0))
    codes = np.where(pick_hi, order[hi], order[lo])
    if encoding == "ocp":
        # OCP keeps the sign of a zero (FNUZ has no -0: 0x80 is its NaN)
        codes = np.where((codes == 0) & np.signbit(values), 0x80, codes)
    return codes.astype(np.uint8)


def decode(bits: np.ndarray, encoding: str, fmt: str) -> np.ndarray:
    return table(encoding, fmt)[np.asarray(bits, dtype=np.uint8)]


def encode_saturating(values: np.ndarray, encoding: str, fmt: str) -> np.ndarray:
    """What the kernels' D conversion gives (epilogue_semantics.md §3.3): finite values clamped to
    the largest finite one and rounded; NaN and infinities as the encoding maps them (FNUZ: the NaN
    code; OCP E4M3: NaN; OCP E5M2: infinity)."""
    values = np.asarray(values, dtype=np.float64)
    top = max_finite(encoding, fmt)
    finite = np.isfinite(values)
    codes = encode(np.where(finite, np.clip(values, -top, top), 0.0), encoding, fmt)
    sign = np.where(np.signbit(values), 0x80, 0)
    if encoding == "fnuz":
        special = np.full(values.shape, nan_code(encoding))
    elif fmt == "fp8":
        special = 0x7F | sign
    else:
        special = np.where(np.isnan(values), 0x7F, 0x7C | sign)
    return np.where(finite, codes, special).astype(np.uint8)
