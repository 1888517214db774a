"""The epilogue side of the emulator tests: the run-time inputs of one call (scales, vectors, bias,
activation) as a test chooses them. Their reference (each activation's model and bound included) is
the verifier's (verify/reference.py, verify/activation.py); the harness translates.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import numpy as np

from tensile_lite.asm.gemm.activation import BY_NAME
from tensile_lite.asm.gemm.features import DIM_M, DIM_N, DIM_RUNTIME, epilogue_features
from tensile_lite.host import EpilogueArgs, GemmProblem
from tensile_lite.model import DataType, ProblemType
from tests.gemm.bits import from_bits, to_bits

_NAN32 = 0x7FC00000


@attrs.frozen
class Vectors:
    """Device buffers (flat bits) of the epilogue's vectors and their values broadcast to [m, n, batch]."""

    buffers: Mapping[str, np.ndarray]
    along: Mapping[str, np.ndarray]


def _quantised(rng: np.random.Generator, n: int, dt: DataType, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    """(bits, values) of n random values of type dt with magnitudes in [low, high), both signs."""
    vals = rng.uniform(low, high, n) * rng.choice([-1.0, 1.0], n)
    bits = to_bits(vals, dt)
    return bits, from_bits(bits, dt)


def _broadcast(values: np.ndarray, dim: int) -> np.ndarray:
    """A vector over M ([m]) or N ([n]) or per batch ([batch, f]) as [m, n, batch]."""
    if values.ndim == 1:
        values = values[None, :]
    if dim == DIM_M:
        return np.transpose(values, (1, 0))[:, None, :]
    return np.transpose(values, (1, 0))[None, :, :]


@attrs.frozen
class Epilogue:
    """What one emulator run passes to the epilogue. Scalars: None is a null pointer (1.0).
    `vectors`: random ScaleAB / ScaleAlphaVec vectors, or null pointers (1.0). `bias`: the bias type
    sent as `biasType` with a random bias of that type, or None for a null bias (0)."""

    scale_a: float | None = None
    scale_b: float | None = None
    scale_c: float | None = None
    scale_d: float | None = None
    vectors: bool = True
    bias: DataType | None = None
    bias_type: DataType | None = None    # biasType sent when it must differ from `bias`; a type the
                                         # kernel does not list adds nothing
    stride_bias: int = 0                 # 0: one bias for every batch
    factor_dim: int = 0                  # run-time factorDim (0: M, else N)
    activation: str = "none"
    activation_args: tuple[float, float] = (0.0, 0.0)

    def arguments(self, pt: ProblemType) -> EpilogueArgs:
        return EpilogueArgs(bias_type=self.bias_type or self.bias, stride_bias=self.stride_bias,
                            factor_dim=self.factor_dim, activation=BY_NAME[self.activation].value,
                            activation_args=self.activation_args)

    def dim(self, pt: ProblemType) -> int:
        f = epilogue_features(pt).factor_dim
        if f == DIM_RUNTIME:
            return DIM_M if self.factor_dim == 0 else DIM_N
        return f

    def vectors_for(self, pt: ProblemType, problem: GemmProblem, rng: np.random.Generator) -> Vectors:
        feat = epilogue_features(pt)
        buffers: dict[str, np.ndarray] = {}
        along: dict[str, np.ndarray] = {}
        m, n = problem.m, problem.n
        batch = problem.batch if pt.num_indices_c == 3 else 1
        scalars = {"scaleA": self.scale_a, "scaleB": self.scale_b, "scaleC": self.scale_c, "scaleD": self.scale_d}
        for name, value in scalars.items():
            if value is not None:
                buffers[name] = np.array([value], np.float32).view(np.uint32)
        wanted = []
        if feat.scale_ab == "Vector" and self.vectors:
            wanted += [("scaleA", DIM_M), ("scaleB", DIM_N)]
        if feat.scale_alpha_vec and self.vectors:
            wanted.append(("scaleAlphaVec", self.dim(pt)))
        for name, dim in wanted:
            size = m if dim == DIM_M else n
            if pt.compute_type is DataType.I:
                # int32 compute scales by int32 vectors
                vals = rng.integers(-4, 5, size).astype(np.float64)
                bits = vals.astype(np.int32).view(np.uint32)
            else:
                bits, vals = _quantised(rng, size, DataType.S, 0.5, 2.0)
            # NaN after the vector: the kernel must bound its reads by the vector's length
            buffers[name] = np.concatenate([bits, np.full(4, _NAN32, np.uint32)])
            along[name] = _broadcast(vals, dim)
        if feat.bias_read and self.bias is not None:
            dim = self.dim(pt)
            size = m if dim == DIM_M else n
            stride = self.stride_bias
            rows = batch if stride else 1
            length = stride * batch if stride else size
            bits, vals = _quantised(rng, max(length, 1), self.bias, 0.25, 4.0)
            buffers["bias"] = bits
            if (self.bias_type or self.bias) in feat.bias_types:  # else the kernel adds nothing
                per_batch = np.stack([vals[b * stride:b * stride + size] for b in range(rows)])
                along["bias"] = _broadcast(per_batch, dim)
        return Vectors(buffers, along)
