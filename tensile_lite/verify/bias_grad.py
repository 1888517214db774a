"""The gradient bias from B (BGRADB, asm/gemm/bias_grad.py) as the verifier checks it.

The kernel writes bias[n] = sum over k of B[k, n, batch 0] in the run-time bias type, from the
workgroups of M-tile 0 (and batch 0) only. The verifier hands it an output of N + PAD elements
filled with the type's sentinel and, after the launch, wants: the columns of every N-tile whose
M-tile-0 workgroup of batch 0 ran within the reference's tolerance, every other element (the
columns of tiles that did not run, the PAD elements past N) untouched. The tolerance is that of
an f32 sum of K terms in any order, (K + 1) u32 sum |B|, then one rounding to the bias type.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tensile_lite.model import DataType, ProblemType
from tensile_lite.verify.elements import ELEMENTS, Element
from tensile_lite.verify.tensors import Tensor, letters

# elements past N the kernel must not write
PAD = 8
_U32 = ELEMENTS[DataType.S].unit_roundoff


def output_buffer(el: Element, n: int) -> np.ndarray:
    """The bias output before the launch: N + PAD sentinels."""
    return np.full(n + PAD, el.sentinel, dtype=el.storage)


def column_sums(b: Tensor, n_letter: str, sum_letter: str) -> tuple[np.ndarray, np.ndarray]:
    """(sum over k, sum over k of |.|) of B's first batch, one per column n, float64."""
    values, letters = b.values, b.letters
    for axis in reversed(range(len(letters))):
        if letters[axis] not in (n_letter, sum_letter):
            values, letters = np.take(values, 0, axis=axis), letters[:axis] + letters[axis + 1:]
    spec = f"{letters}->{n_letter}"
    return np.einsum(spec, values), np.einsum(spec, np.abs(values))


def letters_of(pt: ProblemType) -> tuple[str, str]:
    """B's einsum letters of N (free index 1) and of K (the summation index)."""
    return letters((1,)), letters((pt.indices_summation[0],))


def mismatch(pt: ProblemType, el: Element, bits: np.ndarray, b: Tensor, mt1: int,
             tiles1: Sequence[int]) -> str | None:
    """None when `bits` (the output after the launch) holds the column sums of the N-tiles `tiles1`
    and the sentinel everywhere else; else what differs."""
    n_letter, sum_letter = letters_of(pt)
    exact, magnitude = column_sums(b, n_letter, sum_letter)
    n = exact.shape[0]
    k = b.values.shape[b.letters.index(sum_letter)]
    written = np.zeros(n + PAD, dtype=bool)
    for j in tiles1:
        written[j * mt1:min((j + 1) * mt1, n)] = True
    untouched = bits[~written] == np.asarray(el.sentinel).astype(bits.dtype)
    if not untouched.all():
        where = np.flatnonzero(~written)[~untouched]
        return f"wrote bias elements {where[:8].tolist()} that no workgroup of M-tile 0 and batch 0 owns"
    cols = np.flatnonzero(written[:n])
    got = el.from_bits(bits[cols])
    sum_err = (k + 1) * _U32 * magnitude[cols] * (1 + 1e-6)
    tolerance = sum_err + el.unit_roundoff * (np.abs(exact[cols]) + sum_err)
    bad = ~(np.abs(got - exact[cols]) <= tolerance)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        return (f"gradient bias from B: {int(bad.sum())} of {cols.size} columns differ; column {int(cols[i])}: "
                f"{got[i]:.9g}, want {exact[cols][i]:.9g} (tolerance {tolerance[i]:.3g})")
    return None
