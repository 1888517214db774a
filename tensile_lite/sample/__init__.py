"""A small logic folder of our own, in hipBLASLt's format and folder layout, shipped with the package.

Two architectures (gfx90a, gfx942) and two library types (GridBased, Equality), with solutions the kernel
writer supports. `path()` is what the README's first command builds.
"""

from __future__ import annotations

from pathlib import Path


def path() -> Path:
    """The sample's logic root (the folder that holds `asm_full/`)."""
    return Path(__file__).resolve().parent / "logic"

