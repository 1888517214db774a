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
rounded to 11 significant bits) add (2e + e^2) * |alpha| * sum_k |A[i,k] B[k,j]|, e = 2^-11, to acc_err.

8-bit float inputs (fp8/bf8, and f16 mixed with one) multiply exactly in f32, so the bound is the f32
one; an fp8/bf8 D saturates (finite values beyond the largest finite one become it), which is
1-Lipschitz, so the reference is clamped first and the bound carries over, plus half an ulp of the
8-bit type (2^-4 relative for fp8, 2^-3 for bf8, half the subnormal spacing as the floor).

Integer compute (i8 inputs, i32 compute) is exact with 32-bit wrap-around at every step (the product
with alpha, with the int32 ScaleAlphaVec, beta * C and its sum, the i32 activation) and saturation to
i8 outputs: tolerance 0.

The values before scaleD and their bound acc_err (before scaleD, without D's conversion) are kept as
well: OutputAmaxD's reference is max |value| over them, within max acc_err (`Expected.amax`). A UseE
kernel's E is the value after the bias, before the activation and scaleD, converted to DataTypeE:
its bound is acc_err there plus half an ulp of E's type (`Expected.e`).
"""

from __future__ import annotations

import attrs
import numpy as np

from tensile_lite.model import DataType, ProblemType
from tensile_lite.verify import epilogue
from tensile_lite.verify.elements import Element, element, operand_types
from tensile_lite.verify.epilogue import INTEGER_COMPUTE, Epilogue
from tensile_lite.verify.errors import NotVerifiable
from tensile_lite.verify.tensors import Tensor


def _unit_roundoff(dt: DataType) -> float:
    """Relative error of one rounding to float type dt (its significand bits from the registry)."""
    return 2.0 ** -(dt.info.mantissa_bits + 1)


# the compute types the verifier has a tolerance for
_COMPUTE_ROUNDOFF = {dt: _unit_roundoff(dt) for dt in (DataType.S, DataType.D, DataType.H)}
# Relative error of each MFMA input by F32XdlMathOp: exact f32, or xf32 (f32 rounded to nearest even
# at 11 significant bits, spec/matrix_instructions.md §2.2).
_INPUT_ROUNDOFF = {DataType.S: 0.0, DataType.X: _unit_roundoff(DataType.X)}


@attrs.frozen(slots=True)
class Output:
    """The reference of one extra output (E): exact values, tolerance, and exact converted to its type."""

    exact: np.ndarray = attrs.field(eq=False)
    tolerance: np.ndarray = attrs.field(eq=False)
    rounded: np.ndarray = attrs.field(eq=False)


@attrs.frozen(slots=True)
class Expected:
    exact: np.ndarray = attrs.field(eq=False)  # float64, D's index order
    tolerance: np.ndarray = attrs.field(eq=False)
    rounded: np.ndarray = attrs.field(eq=False)  # `exact` converted to D's type (what messages show)
    # the values before scaleD (what OutputAmaxD takes the max of) and their error bound in the
    # compute type (no conversion to D's type)
    unscaled: np.ndarray = attrs.field(eq=False)
    unscaled_error: np.ndarray = attrs.field(eq=False)
    e: Output | None = None  # UseE: E's reference ([m, n, batch] like D's arrays)

    def amax(self) -> tuple[float, float]:
        """(max |value before scaleD| over every element, its tolerance): each computed value is within
        its bound of the exact one, so their max is within the largest bound of the exact max."""
        if not self.unscaled.size:
            return 0.0, 0.0
        return float(np.abs(self.unscaled).max()), float(self.unscaled_error.max())


def check_types(pt: ProblemType, arch: str | None = None) -> None:
    """NotVerifiable unless the reference and the tolerance are defined for this problem type on `arch`
    (which decides how 8-bit floats are encoded)."""
    a, b = operand_types(pt)
    inputs = [("A", a), ("B", b), ("D", pt.dest_type)]
    if not pt.data_type.is_8bit_float:
        inputs.append(("the MFMA input", pt.data_type))
    for field, dt in inputs:
        if element(dt, arch) is None:
            where = f" on {arch}" if arch and dt.is_8bit_float else ""
            raise NotVerifiable(f"data type {dt.letter} of {field} is not supported by the verifier{where}")
    if pt.compute_type in INTEGER_COMPUTE:
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
             k: int, alpha: float, beta: float, ep: Epilogue | None = None, *, out: Element | None = None) -> Expected:
    """The reference D (shape `d_shape`, index order `d_letters`) and its per-element tolerance.
    `c` is None when beta == 0 (C is not part of the result); `ep` holds the epilogue's inputs; `out` is
    D's element (needed for 8-bit floats, whose encoding depends on the target; C's when not given)."""
    if out is None:
        out = c.element if c is not None else element(pt.dest_type)
    assert out is not None, f"D's element of type {pt.dest_type.letter} must be given"
    spec = f"{a.letters},{b.letters}->{d_letters}"
    use_ab = alpha != 0 and k > 0
    if pt.compute_type in INTEGER_COMPUTE:
        return _integer(pt, a, b, c, spec, d_shape, k, alpha, beta, ep, out)
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
    v = epilogue.apply_steps(pt, epilogue.Value(exact, bound), ep, epilogue.SUM)
    exact, bound = v.exact, v.bound
    roundings = k + 3 + (epilogue.EXTRA_ROUNDINGS if ep is not None else 0)
    err = roundings * u * bound * (1 + 1e-6)  # second-order terms of the bound
    if ab_err:
        # each product of two rounded inputs is within (1 + e)^2 - 1 of the exact one; it enters
        # every term alpha * A * B bounds, so it scales the A @ B part of the bound only
        err = err + (2 * ab_err + ab_err ** 2) * np.abs(alpha * scale) * magnitude * (1 + 1e-6)
    v = epilogue.apply_steps(pt, attrs.evolve(v, err=err), ep, epilogue.VALUE)
    assert v.err is not None
    exact, err = v.exact, v.err
    e_out = None
    if ep is not None and ep.e is not None and v.e is not None:
        el = ep.e.element
        e_exact, e_err = v.e
        e_exact = np.clip(e_exact, -el.max_value, el.max_value) if el.saturates else e_exact
        e_out = Output(e_exact, e_err + el.half_ulp(np.abs(e_exact) + e_err), el.round(e_exact))
    before_d = v.unscaled if v.unscaled is not None else (exact, err)
    unscaled, unscaled_err = before_d[0].reshape(d_shape), before_d[1].reshape(d_shape)
    exact, err = exact.reshape(d_shape), err.reshape(d_shape)
    if out.saturates:
        exact = np.clip(exact, -out.max_value, out.max_value)  # 1-Lipschitz, like the kernel's clamp
    tol = err + out.half_ulp(np.abs(exact) + err)
    return Expected(exact, tol, out.round(exact), unscaled, unscaled_err, e_out)


def _integer(pt: ProblemType, a: Tensor, b: Tensor, c: Tensor | None, spec: str, d_shape: tuple[int, ...], k: int,
             alpha: float, beta: float, ep: Epilogue | None, out: Element) -> Expected:
    """int32 compute, exactly: every step wraps to 32 bits as the kernel's v_mul_lo_u32 / v_add_u32 do."""
    shape3 = d_shape if len(d_shape) == 3 else (*d_shape, 1)
    acc = _contract(spec, a.values.astype(np.int64), b.values.astype(np.int64), d_shape, k) \
        if alpha != 0 and k > 0 else np.zeros(d_shape, dtype=np.int64)
    t = _wrap32(_wrap32(acc.reshape(shape3)) * int(alpha))
    if ep is not None:
        t = _wrap32(t * np.rint(epilogue.factor(ep)).astype(np.int64))
    if c is not None:
        t = _wrap32(t + _wrap32(c.values.astype(np.int64).reshape(shape3) * int(beta)))
    if ep is not None:
        t = _int32_activation(t, ep.activation, ep.activation_args)
    exact = out.round(t.astype(np.float64)).reshape(d_shape)
    unscaled = t.astype(np.float64).reshape(d_shape)
    zero = np.zeros(d_shape)
    return Expected(exact, zero, exact, unscaled, zero)


def _int32_activation(t: np.ndarray, kind: str, args: tuple[float, float]) -> np.ndarray:
    """The i32 activations (activation.py): abs = max(-x, x) and leakyrelu's product wrap to 32 bits,
    clippedrelu gives the integer 0 at or below its threshold."""
    a, b = int(args[0]), int(args[1])
    if kind == "none":
        return t
    if kind == "relu":
        return np.maximum(t, 0)
    if kind == "abs":
        return _wrap32(np.maximum(-t, t))
    if kind == "leakyrelu":
        return np.where(t >= 0, t, _wrap32(a * t))
    if kind == "clippedrelu":
        return np.where(t > a, np.minimum(b, t), 0)
    raise NotVerifiable(f"the i32 activation {kind} has no reference")


def _wrap32(x: np.ndarray) -> np.ndarray:
    return ((np.asarray(x, dtype=np.int64) + 2 ** 31) % 2 ** 32) - 2 ** 31
