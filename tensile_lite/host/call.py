"""One GEMM call as the user hands it to the runtime: sizes, strides and the epilogue's run-time values."""

from __future__ import annotations

import attrs

from tensile_lite.errors import BuildError
from tensile_lite.model import DataType, ProblemType


def _assignment(pt: ProblemType, tensor: str) -> tuple[int, ...]:
    return {"A": pt.index_assignments_a, "B": pt.index_assignments_b}.get(tensor, tuple(range(pt.num_indices_c)))


@attrs.frozen(slots=True)
class GemmProblem:
    """Sizes and strides in elements.

    Strides are per tensor, for its dimensions after the first (the unit stride is implied), in the
    order of the tensor's index assignments: for `Cijk_Ailk_Bljk`, A's are (lda, batch stride).
    `None` means packed (each stride the product of the sizes before it).
    """

    m: int
    n: int
    k: int
    batch: int = 1
    strides_a: tuple[int, ...] | None = None
    strides_b: tuple[int, ...] | None = None
    strides_c: tuple[int, ...] | None = None
    strides_d: tuple[int, ...] | None = None

    def free_sizes(self, pt: ProblemType) -> tuple[int, ...]:
        return (self.m, self.n, self.batch)[:pt.num_indices_c]

    def index_size(self, pt: ProblemType, index: int) -> int:
        """The size of problem index `index` (0 = I = M, 1 = J = N, 2 = batch, then the summation)."""
        sizes = {0: self.m, 1: self.n}
        if pt.num_indices_c == 3:
            sizes[2] = self.batch
        sizes[pt.indices_summation[-1]] = self.k
        return sizes[index]

    def tensor_strides(self, pt: ProblemType, tensor: str) -> tuple[int, ...]:
        """The passed (non-unit) strides of tensor 'A', 'B', 'C' or 'D', packed when not given."""
        assign = _assignment(pt, tensor)
        given = {"A": self.strides_a, "B": self.strides_b, "C": self.strides_c, "D": self.strides_d}[tensor]
        if given is not None:
            if len(given) != len(assign) - 1:
                raise BuildError(f"tensor {tensor} takes {len(assign) - 1} strides, got {len(given)}")
            return tuple(given)
        out, running = [], 1
        for idx in assign[:-1]:
            running *= max(self.index_size(pt, idx), 1)
            out.append(running)
        return tuple(out)

    def tensor_elements(self, pt: ProblemType, tensor: str) -> int:
        """Elements a buffer for `tensor` must hold: one past the largest element offset (0 if empty)."""
        assign = _assignment(pt, tensor)
        strides = (1, *self.tensor_strides(pt, tensor))
        sizes = [self.index_size(pt, i) for i in assign]
        if any(s == 0 for s in sizes):
            return 0
        return 1 + sum((s - 1) * st for s, st in zip(sizes, strides, strict=True))

    def packed_output_strides(self, pt: ProblemType) -> tuple[int, ...]:
        """The workspace strides (`strideW`) a split-K call sends for D and C: M, M x N."""
        out, running = [], 1
        for size in self.free_sizes(pt)[:-1]:
            running *= size
            out.append(running)
        return tuple(out)


@attrs.frozen(slots=True)
class EpilogueArgs:
    """Run-time values of the epilogue's by-value arguments (its pointers come from `buffers`).

    The defaults make the epilogue the identity: null scale pointers mean 1.0, a null bias adds 0,
    activation type 0 is none.
    """

    bias_type: DataType | None = None     # None: the first type the problem type accepts
    stride_bias: int = 0                  # elements between the bias vectors of consecutive batches
    factor_dim: int = 0                   # 0: along M, otherwise N (UseBias / UseScaleAlphaVec 3)
    activation: int = 0                   # the runtime's ActivationType enum value
    activation_args: tuple[float, ...] = ()   # activationAlpha, activationBeta (missing ones 0)
    strides_e: tuple[int, ...] = ()
