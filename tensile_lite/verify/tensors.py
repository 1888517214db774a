"""Host-side tensors of one problem: values in float64 and the device buffer of their bit patterns.

A buffer is first filled with the element type's sentinel (a NaN with an unusual payload for floats),
then the tensor's elements are written at their strided offsets. Padding between leading dimensions
and between batches therefore holds the sentinel: a kernel that reads it produces NaN, and one that
writes it is caught by comparing D's padding with the sentinel afterwards.
"""

from __future__ import annotations

import attrs
import numpy as np

from tensile_lite.host import GemmProblem
from tensile_lite.model import ProblemType
from tensile_lite.verify.elements import Element

_INDEX_BASE = ord("i")


@attrs.frozen(slots=True)
class Tensor:
    name: str
    element: Element
    letters: str  # the tensor's indices in memory order, as einsum letters ("ilk" for A of Cijk_Ailk)
    offsets: np.ndarray = attrs.field(eq=False, repr=False)  # element offset of each value, shape = sizes
    values: np.ndarray = attrs.field(eq=False, repr=False)  # float64, shape = sizes (NaN: not set)
    flat: np.ndarray = attrs.field(eq=False, repr=False)  # the device buffer's contents (storage dtype)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.offsets.shape)


def assignments(pt: ProblemType, tensor: str) -> tuple[int, ...]:
    return {"A": pt.index_assignments_a, "B": pt.index_assignments_b}.get(tensor, tuple(range(pt.num_indices_c)))


def letters(indices: tuple[int, ...]) -> str:
    return "".join(chr(_INDEX_BASE + i) for i in indices)


def _offsets(sizes: list[int], strides: tuple[int, ...]) -> np.ndarray:
    idx = np.zeros(sizes, dtype=np.int64)
    for axis, (size, stride) in enumerate(zip(sizes, strides, strict=True)):
        shape = [1] * len(sizes)
        shape[axis] = size
        idx = idx + (np.arange(size, dtype=np.int64) * stride).reshape(shape)
    return idx


def make_tensor(pt: ProblemType, problem: GemmProblem, tensor: str, element: Element,
                rng: np.random.Generator | None) -> Tensor:
    """Tensor `tensor` ('A', 'B', 'C' or 'D') of `problem`: random values when `rng` is given, else
    only the sentinel (a tensor the kernel must not read, or D before the launch)."""
    sizes = tuple(problem.index_size(pt, i) for i in assignments(pt, tensor))
    return place(pt, problem, tensor, element, None if rng is None else element.random(rng, sizes))


def place(pt: ProblemType, problem: GemmProblem, tensor: str, element: Element, values: np.ndarray | None) -> Tensor:
    """Tensor `tensor` of `problem` holding `values` (shaped by its indices in memory order, exactly
    representable in `element`), or only the sentinel when None."""
    assign = assignments(pt, tensor)
    sizes = [problem.index_size(pt, i) for i in assign]
    strides = (1, *problem.tensor_strides(pt, tensor))
    offsets = _offsets(sizes, strides)
    flat = np.full(max(problem.tensor_elements(pt, tensor), 1), element.sentinel, dtype=element.storage)
    if values is None:
        values = np.full(sizes, np.nan)
    else:
        flat[offsets.reshape(-1)] = element.to_bits(values).reshape(-1)
    return Tensor(tensor, element, letters(assign), offsets, values, flat)


def read_back(t: Tensor, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bits at the tensor's elements, their float64 values, bits of the buffer outside the tensor's
    elements) from the buffer contents `flat` after a launch."""
    bits = flat[t.offsets]
    outside = np.ones(flat.size, dtype=bool)
    outside[t.offsets.reshape(-1)] = False
    return bits, t.element.from_bits(bits), flat[outside]
