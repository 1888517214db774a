"""Compare a kernel's D with the reference, over the tiles that ran, and explain any difference."""

from __future__ import annotations

import numpy as np

from tensile_lite.verify.elements import Element
from tensile_lite.verify.mapping import Tile
from tensile_lite.verify.reference import Expected, Output

_SHOWN = 4


def as_mnb(x: np.ndarray) -> np.ndarray:
    """D-ordered values (i, j[, k]) as [m, n, batch]."""
    return x if x.ndim == 3 else x[..., None]


def tile_mask(shape: tuple[int, int, int], macro_tile: tuple[int, int], tiles: list[Tile]) -> np.ndarray:
    mask = np.zeros(shape, dtype=bool)
    mt0, mt1 = macro_tile
    for t0, t1, b in tiles:
        mask[t0 * mt0:(t0 + 1) * mt0, t1 * mt1:(t1 + 1) * mt1, b] = True
    return mask


def tiles_of(changed: np.ndarray, macro_tile: tuple[int, int]) -> set[Tile]:
    """Tiles with at least one element set in `changed` ([m, n, batch])."""
    mt0, mt1 = macro_tile
    return {(int(i) // mt0, int(j) // mt1, int(b)) for i, j, b in zip(*np.nonzero(changed), strict=True)}


def written_tiles(bits: np.ndarray, sentinel: int, macro_tile: tuple[int, int]) -> set[Tile]:
    """Tiles of D ([m, n, batch] bit patterns) with at least one element no longer the sentinel."""
    return tiles_of(bits != np.asarray(sentinel).astype(bits.dtype), macro_tile)


def mismatches(got_bits: np.ndarray, got: np.ndarray, want: Expected | Output, out: Element, mask: np.ndarray,
               name: str = "D") -> str | None:
    """None when every element under `mask` is within tolerance; else a description of the differences
    (of output `name`: D, or E). All arrays are [m, n, batch]."""
    exact, tol, rounded = as_mnb(want.exact), as_mnb(want.tolerance), as_mnb(want.rounded)
    with np.errstate(invalid="ignore"):
        bad = mask & ~(np.abs(got - exact) <= tol)
    count = int(bad.sum())
    if not count:
        return None
    never = mask & (got_bits == np.asarray(out.sentinel).astype(got_bits.dtype))
    parts = [f"{count} of {int(mask.sum())} checked elements{'' if name == 'D' else ' of ' + name} differ"]
    if never.any():
        parts.append(f"{int(never.sum())} never written")
    shown = []
    for i, j, b in np.argwhere(bad)[:_SHOWN]:
        at = (int(i), int(j), int(b))
        what = "never written" if never[at] else f"{float(got[at]):.9g}"
        shown.append(f"{name}[{at[0]},{at[1]},{at[2]}] = {what}, want {float(rounded[at]):.9g} "
                     f"(tolerance {float(tol[at]):.3g})")
    return "; ".join(parts) + ": " + "; ".join(shown)
