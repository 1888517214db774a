"""Strict equality for loaded YAML: same types (bool is not int), same key order, NaN equals NaN."""

from __future__ import annotations

import math
from typing import Any


def first_difference(a: Any, b: Any, path: str = "$") -> str | None:
    """Where `a` and `b` first differ, or None; `==` alone would call True equal to 1 and miss key order."""
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} {a!r} vs {type(b).__name__} {b!r}"
    if isinstance(a, dict):
        if len(a) != len(b):
            return f"{path}: {len(a)} keys vs {len(b)}"
        for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=True):
            found = first_difference(ka, kb, f"{path}.<key {ka!r}>") or first_difference(va, vb, f"{path}[{ka!r}]")
            if found:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items vs {len(b)}"
        for i, (va, vb) in enumerate(zip(a, b, strict=True)):
            found = first_difference(va, vb, f"{path}[{i}]")
            if found:
                return found
        return None
    if isinstance(a, float):
        same = (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
        return None if same else f"{path}: {a!r} vs {b!r}"
    return None if a == b else f"{path}: {a!r} vs {b!r}"
