"""The expected D of a GEMM in float64, and how far a correct kernel may be from it.

D = alpha * (A @ B) + beta * C, the contraction taken over the tensors' own index orders (so
transposes and batch layouts come from the problem type, never from a guess), with C read only when
beta != 0 (spec/epilogue_semantics.md §1.1: beta == 0 skips C). Inputs are the exact quantised values
the kernel reads. HPA kernels (f16/bf16 inputs, f32 compute) and f32 kernels accumulate in f32;
f64 kernels in f64; non-HPA f16 kernels in f16.

Tolerance, per element, for float compute types (u = unit roundoff of the compute type:
2^-24 f32, 2^-53 f64, 2^-11 f16):

    acc_err = (K + 3 + E) * u * (|alpha| * sum_k |A[i,k] B[k,j]| + |beta C[i,j]|)
    tol     = acc_err + half_ulp_D(|ref| + acc_err)

The first term is the worst case of K accumulating additions (in any order: MFMA blocks, split
loops), one product rounding, the alpha multiply, and the fused beta step; E = 8 more roundings
when the problem type has epilogue extras (epilogue.py; their factors scale the terms, the bias
adds its magnitude, scaleD multiplies the whole bound). The second term is the
final round-to-nearest-even conversion to D's type (half an ulp: 2^-24 relative for f32, 2^-11 f16,
2^-8 bf16, with the subnormal spacing as the floor). f32 kernels with F32XdlMathOp X (xf32 MFMAs, inputs
rounded to 11 significant bits) add (2e + e^2) * |alpha| * sum_k |A[i,k] B[k,j]|, e = 2^-11, to acc_err. Integer compute (i8 inputs, i32 compute) is
exact with 32-bit wrap-around and saturation to i8 outputs: tolerance 0.

The values before scaleD and their bound acc_err (before scaleD, without D's conversion) are kept as
well: OutputAmaxD's reference is max |value| over them, within max acc_err (`Expected.amax`).
"""

from __future__ import annotations

import attrs
import numpy as np

from tensile_lite.model import DataType, ProblemType
from tensile_lite.verify import epilogue
from tensile_lite.verify.elements import Element, element
from tensile_lite.verify.epilogue import Epilogue
from tensile_lite.verify.errors import NotVerifiable
from tensile_lite.verify.tensors import Tensor

_COMPUTE_ROUNDOFF = {DataType.S: 2.0 ** -24, DataType.D: 2.0 ** -53, DataType.H: 2.0 ** -11}
# Relative error of each MFMA input by F32XdlMathOp: exact f32, or xf32 (f32 rounded to nearest even
# at 11 significant bits, spec/matrix_instructions.md §2.2).
_INPUT_ROUNDOFF = {DataType.S: 0.0, DataType.X: 2.0 ** -11}


@attrs.frozen(slots=True)
class Expected:
    exact: np.ndarray = attrs.field(eq=False)  # float64, D's index order
    tolerance: np.ndarray = attrs.field(eq=False)
    rounded: np.ndarray = attrs.field(eq=False)  # `exact` converted to D's type (what messages show)
    # the values before scaleD (what OutputAmaxD takes the max of) and their error bound in the
    # compute type (no conversion to D's type)
    unscaled: np.ndarray = attrs.field(eq=False)
    unscaled_error: np.ndarray = attrs.field(eq=False)

    def amax(self) -> tuple[float, float]:
        """(max |value before scaleD| over every element, its tolerance): each computed value is within
        its bound of the exact one, so their max is within the largest bound of the exact max."""
        if not self.unscaled.size:
            return 0.0, 0.0
        return float(np.abs(self.unscaled).max()), float(self.unscaled_error.max())


def check_types(pt: ProblemType) -> None:
    """NotVerifiable unless the reference and the tolerance are defined for this problem type."""
    for field, dt in (("A", pt.a_type), ("B", pt.b_type), ("the MFMA input", pt.data_type), ("D", pt.dest_type)):
        if element(dt) is None:
            raise NotVerifiable(f"data type {dt.letter} of {field} is not supported by the verifier")
    if pt.compute_type in (DataType.I, DataType.I8):
        if pt.dest_type not in (DataType.I, DataType.I8):
            raise NotVerifiable(f"integer compute with {pt.dest_type.letter} output is not supported")
        return
    if pt.compute_type not in _COMPUTE_ROUNDOFF:
        raise NotVerifiable(f"compute type {pt.compute_type.letter} is not supported by the verifier")
    if pt.dest_type in (DataType.I, DataType.I8) or pt.a_type in (DataType.I8, DataType.I):
        raise NotVerifiable("integer data with float compute is not supported by the verifier")
    if pt.data_type is DataType.S and pt.f32_xdl_math_op not in _INPUT_ROUNDOFF:
        raise NotVerifiable(f"F32XdlMathOp {pt.f32_xdl_math_op.letter}: reduced-precision f32 math has no "
                            "tolerance defined")


def _contract(spec: str, a: np.ndarray, b: np.ndarray, shape: tuple[int, ...], k: int) -> np.ndarray:
    return np.einsum(spec, a, b) if k else np.zeros(shape)


def expected(pt: ProblemType, a: Tensor, b: Tensor, c: Tensor | None, d_letters: str, d_shape: tuple[int, ...],
             k: int, alpha: float, beta: float, ep: Epilogue | None = None) -> Expected:
    """The reference D (shape `d_shape`, index order `d_letters`) and its per-element tolerance.
    `c` is None when beta == 0 (C is not part of the result); `ep` holds the epilogue's inputs."""
    out: Element = element(pt.dest_type)  # type: ignore[assignment]
    spec = f"{a.letters},{b.letters}->{d_letters}"
    use_ab = alpha != 0 and k > 0
    if pt.compute_type in (DataType.I, DataType.I8):
        acc = _contract(spec, a.values.astype(np.int64), b.values.astype(np.int64), d_shape, k) if use_ab \
            else np.zeros(d_shape, dtype=np.int64)
        t = _wrap32(_wrap32(acc) * int(alpha))
        if c is not None:
            t = _wrap32(t + _wrap32(c.values.astype(np.int64) * int(beta)))
        exact = out.round(t.astype(np.float64))
        return Expected(exact, np.zeros(d_shape), exact, exact, np.zeros(d_shape))
    u = _COMPUTE_ROUNDOFF[pt.compute_type]
    ab_err = _INPUT_ROUNDOFF.get(pt.f32_xdl_math_op, 0.0) if pt.data_type is DataType.S else 0.0
    shape3 = d_shape if len(d_shape) == 3 else (*d_shape, 1)
    prod = _contract(spec, a.values, b.values, d_shape, k).reshape(shape3) if use_ab else np.zeros(shape3)
    magnitude = _contract(spec, np.abs(a.values), np.abs(b.values), d_shape, k).reshape(shape3) if use_ab \
        else np.zeros(shape3)
    scale = epilogue.factor(ep)
    exact = alpha * scale * prod
    bound = np.abs(alpha * scale) * magnitude
    if c is not None:
        beta_c = beta * (ep.scale_c if ep else 1.0) * c.values.reshape(shape3)
        exact = exact + beta_c
        bound = bound + np.abs(beta_c)
    if ep is not None and ep.bias is not None:
        exact = exact + ep.bias
        bound = bound + np.abs(ep.bias)
    if ep is not None and ep.relu:
        exact = np.maximum(exact, 0.0)  # 1-Lipschitz: the error bound carries over
    roundings = k + 3 + (epilogue.EXTRA_ROUNDINGS if ep is not None else 0)
    err = roundings * u * bound * (1 + 1e-6)  # second-order terms of the bound
    if ab_err:
        # each product of two rounded inputs is within (1 + e)^2 - 1 of the exact one; it enters
        # every term alpha * A * B bounds, so it scales the A @ B part of the bound only
        err = err + (2 * ab_err + ab_err ** 2) * np.abs(alpha * scale) * magnitude * (1 + 1e-6)
    unscaled, unscaled_err = exact.reshape(d_shape), err.reshape(d_shape)
    if ep is not None:
        exact, err = exact * ep.scale_d, err * abs(ep.scale_d)
    exact, err = exact.reshape(d_shape), err.reshape(d_shape)
    tol = err + out.half_ulp(np.abs(exact) + err)
    return Expected(exact, tol, out.round(exact), unscaled, unscaled_err)


def _wrap32(x: np.ndarray) -> np.ndarray:
    return ((np.asarray(x, dtype=np.int64) + 2 ** 31) % 2 ** 32) - 2 ** 31
