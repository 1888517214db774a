"""The float reference of each activation (spec/epilogue_semantics.md §2.2 names them) and how far the
kernel's f32 sequence may land from it.

The formulas are the mathematical functions; the kernel's own sequences (approximate exp and rcp, the
rounding of the exponent's argument) differ by a few units in the last place, which the bound allows
for. relu, abs and none are exact in f32, so the input's bound carries over unchanged.
"""

from __future__ import annotations

import numpy as np

# gelu's tanh approximation constants, as the kernel holds them in f32 (sqrt(2/pi) and 0.044715)
GELU_K0 = float(np.array([0x3F4C422A], np.uint32).view(np.float32)[0])
GELU_K1 = float(np.array([0x3D372713], np.uint32).view(np.float32)[0])
# exact in f32: max, abs and the identity add no error of their own
_EXACT = frozenset({"none", "relu", "abs"})
# relative error of the approximate f32 sequences (exp, rcp, tanh), with room to spare
_SEQUENCE_ERROR = 2.0 ** -18


def _slope(kind: str, args: tuple[float, float]) -> float:
    """A bound of |act'|: how much an error of the input can grow."""
    a, b = args
    return {"relu": 1.0, "abs": 1.0, "clippedrelu": 1.0, "leakyrelu": max(1.0, abs(a)), "gelu": 1.13,
            "geluscaling": 1.13 * abs(a), "sigmoid": 0.25, "silu": 1.1, "tanh": abs(a * b), "none": 1.0}[kind]


def value(kind: str, args: tuple[float, float], x: np.ndarray) -> np.ndarray:
    """act(x) in float64, activationAlpha and activationBeta being `args`."""
    a, b = args
    with np.errstate(over="ignore"):
        if kind == "none":
            return x
        if kind == "abs":
            return np.abs(x)
        if kind == "relu":
            return np.maximum(x, 0.0)
        if kind == "clippedrelu":
            return np.where(x > a, np.minimum(b, x), 0.0)
        if kind == "leakyrelu":
            return np.where(x >= 0, x, a * x)
        if kind in ("gelu", "geluscaling"):
            g = 0.5 * x * (1.0 + np.tanh(GELU_K0 * x * (1.0 + GELU_K1 * x * x)))
            return g * a if kind == "geluscaling" else g
        if kind == "sigmoid":
            return 1.0 / (1.0 + np.exp(-x))
        if kind == "silu":
            return x / (1.0 + np.exp(-x))
        if kind == "tanh":
            return b * np.tanh(a * x)
    raise ValueError(f"no reference for the activation {kind}")


def activate(kind: str, args: tuple[float, float], t: np.ndarray, err: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(act(t), its error bound): the input's bound `err` through the slope, plus the f32 sequence's
    own error relative to its input and output."""
    out = value(kind, args, t)
    if kind in _EXACT:
        return out, err
    new_err = _slope(kind, args) * err + (np.abs(out) + np.abs(t) + abs(args[1])) * _SEQUENCE_ERROR
    if kind == "clippedrelu":
        # near the threshold the kernel may land on either side
        near = np.abs(t - args[0]) <= err
        new_err = np.where(near, np.maximum(new_err, np.abs(np.minimum(args[1], t)) + new_err), new_err)
    return out, new_err
