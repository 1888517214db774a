"""Epilogue inputs of a problem type (scale factors, scale vectors, bias) with random values, and
their part of the reference (spec/epilogue_semantics.md §1.1):

    alpha' = alpha * scaleA * scaleB                  beta' = beta * scaleC
    t = alpha' * acc * scaleAVec[m] * scaleBVec[n] * scaleAlphaVec[f]
    t = t + beta' * C + bias[b * strideBias + f]
    E = cvt_E(t)                                      (UseE)
    t = act(t)                                        (activationType, some cases)
    D = cvt_D(t * scaleD)

`f` is m or n, by the problem type's factor dimension (or the run-time `factorDim` argument, which the
cases alternate). The activation selector (`all`, `hipblaslt_all`) runs relu (exact, so the tolerance
stays that of the plain epilogue) in the `edges` and `small` cases and none (activationType 0) in the
others; its other f32 activations (gelu, ...) have a reference (activation.py, used by the emulator
tests) but no case here runs them. Integer compute (i32) has ScaleAlphaVec
as an int32 vector and the i32 activations, all exact with wrap-around: `edges` relu, `small` abs,
`alpha0` leakyrelu, `k0` clippedrelu where the kernel's selector has them (relu otherwise in `edges`
and `small`, none elsewhere). UseE kernels get an E buffer with strides of its own (5 more elements
per column than M, 7 more between batches), filled with its type's sentinel: E is the value after the
bias and before the activation, in DataTypeE. Of the gradient problem types only BGRADB is verified
(the bias written from B, bias_grad.py; D is the forward epilogue's without the bias). OutputAmaxD
(the max of |t| before scaleD) is checked against the reference's values before scaleD (amax.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs
import numpy as np

from tensile_lite.asm.gemm.activation import BY_NAME, kinds_for
from tensile_lite.asm.gemm.epi.order import active
from tensile_lite.asm.gemm.features import DIM_N, DIM_RUNTIME, epilogue_features
from tensile_lite.host import EpilogueArgs, GemmProblem
from tensile_lite.model import DataType, ProblemType
from tensile_lite.verify import activation, bias_grad
from tensile_lite.verify.elements import ELEMENTS, Element, element
from tensile_lite.verify.errors import NotVerifiable
from tensile_lite.verify.tensors import Tensor, make_tensor

# Roundings the epilogue may add on top of the plain GEMM's (alpha', each scale, bias, scaleD).
EXTRA_ROUNDINGS = 8
# Cases that take the factor dimension N when it is chosen at run time (the others take M).
_ALONG_N_CASES = frozenset({"edges", "small"})
# Cases that run relu when the kernel has a fused activation selector, and its ActivationType value.
_RELU_CASES = frozenset({"edges", "small"})
RELU = BY_NAME["relu"].value
# Integer compute: the i32 activation each case asks for, and its arguments (activationAlpha, Beta);
# the thresholds fall inside the values beta * C takes in `alpha0` and `k0`, so both branches run.
_INTEGER_ACTIVATIONS: Mapping[str, tuple[str, tuple[float, float]]] = {
    "edges": ("relu", (0.0, 0.0)), "small": ("abs", (0.0, 0.0)), "alpha0": ("leakyrelu", (3.0, 0.0)),
    "k0": ("clippedrelu", (2.0, 9.0)),
}
INTEGER_COMPUTE = (DataType.I, DataType.I8)
# E's padding: extra elements per column and between batches (unlike D's, so a kernel that writes E
# with D's strides is caught)
_E_PADS = (5, 7)


@attrs.frozen(slots=True)
class Epilogue:
    """Host values (float64) and device buffers (bit patterns) of one call's epilogue inputs."""

    args: EpilogueArgs
    buffers: Mapping[str, np.ndarray] = attrs.field(eq=False)  # POINTER_KEYS name -> buffer contents
    scale_a: float = 1.0
    scale_b: float = 1.0
    scale_c: float = 1.0
    scale_d: float = 1.0
    row: np.ndarray | None = attrs.field(default=None, eq=False)  # product of the factors along m
    col: np.ndarray | None = attrs.field(default=None, eq=False)  # product of the factors along n
    bias: np.ndarray | None = attrs.field(default=None, eq=False)  # [m, n, batch] broadcastable
    activation: str = "none"  # the activation applied after the bias (activation.py's names)
    activation_args: tuple[float, float] = (0.0, 0.0)
    e: Tensor | None = attrs.field(default=None, eq=False)  # UseE: E's layout (buffer 'E' holds its bits)
    bias_out: DataType | None = None  # BGRADB: the type the kernel writes the bias from B in (buffer 'bias')

    @property
    def alpha_scale(self) -> float:
        return self.scale_a * self.scale_b

    @property
    def relu(self) -> bool:
        return self.activation == "relu"


def check_supported(pt: ProblemType) -> None:
    """NotVerifiable for epilogue features the verifier has no reference for."""
    feat = epilogue_features(pt)
    if not feat.any:
        return
    # the gradient verified is BGRADB: the forward epilogue, and the bias written from B (bias_grad.py)
    for present, what in ((feat.gradient and not feat.bgradb, "gradient"),
                          (feat.bias == "write" and not feat.bgradb, "bias gradient")):
        if present:
            raise NotVerifiable(f"{what} of the epilogue is not verified")
    if pt.activation_type not in ("none", "all", "hipblaslt_all"):
        raise NotVerifiable(f"activation {pt.activation_type} is not verified")
    if pt.compute_type in INTEGER_COMPUTE:
        others = [what for present, what in ((feat.scale_ab, "ScaleAB"), (feat.scale_cd, "ScaleCD"),
                                             (feat.bias, "bias"), (feat.use_e, "the E output"),
                                             (feat.amax_d, "OutputAmaxD")) if present]
        if others:
            raise NotVerifiable(f"{', '.join(others)} with integer compute {pt.compute_type.letter} are not verified")
        return
    if pt.compute_type is not DataType.S:
        raise NotVerifiable(f"epilogue extras with compute type {pt.compute_type.letter} are not verified")
    if feat.use_e and element(pt.e_type) is None:
        raise NotVerifiable(f"E of type {pt.e_type.letter} is not supported by the verifier")
    for dt in feat.bias_types:
        if element(dt) is None:
            raise NotVerifiable(f"bias type {dt.letter} is not supported by the verifier")


def _scale(rng: np.random.Generator, shape: int | tuple[int, ...] = ()) -> np.ndarray:
    """Scale factors in [0.5, 2), f32 values with their sign flipped at random."""
    s = ELEMENTS[DataType.S]
    return s.round(rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape))


def _f32_buffer(values: np.ndarray | float) -> np.ndarray:
    return ELEMENTS[DataType.S].to_bits(np.atleast_1d(values))


def _int32_buffer(values: np.ndarray) -> np.ndarray:
    return np.asarray(values).astype(np.int32).view(np.uint32)


def _activation(pt: ProblemType, case: str, fused: bool) -> tuple[str, tuple[float, float]]:
    """The activation (name, arguments) of `case`: see the module's description."""
    feat = epilogue_features(pt)
    if not fused or feat.activation == "none":
        return "none", (0.0, 0.0)
    integer = pt.compute_type in INTEGER_COMPUTE
    kinds = {k.name for k in kinds_for(feat.activation, integer=integer)}
    if integer and case in _INTEGER_ACTIVATIONS and _INTEGER_ACTIVATIONS[case][0] in kinds:
        return _INTEGER_ACTIVATIONS[case]
    return ("relu", (0.0, 0.0)) if case in _RELU_CASES and "relu" in kinds else ("none", (0.0, 0.0))


def e_strides(pt: ProblemType, problem: GemmProblem) -> tuple[int, ...]:
    """E's strides (ld, batch stride), as the epilogue arguments StrideE0 / StrideE1 carry them."""
    ld = problem.m + _E_PADS[0]
    return (ld, ld * problem.n + _E_PADS[1])[:pt.num_indices_c - 1]


def e_tensor(pt: ProblemType, problem: GemmProblem) -> Tensor:
    """E of `problem`: D's shape at E's strides, filled with the sentinel of DataTypeE."""
    el: Element = element(pt.e_type)  # type: ignore[assignment]  # checked by check_supported
    at_e = attrs.evolve(problem, strides_d=e_strides(pt, problem))
    return attrs.evolve(make_tensor(pt, at_e, "D", el, None), name="E")


def make(pt: ProblemType, problem: GemmProblem, case: str, rng: np.random.Generator, *,
         activation_fused: bool = True) -> Epilogue | None:
    """Random epilogue inputs for one call, or None when the problem type has no epilogue extras.
    `activation_fused` is the solution's ActivationFused: without it the kernel takes no activation."""
    feat = epilogue_features(pt)
    kind, kind_args = _activation(pt, case, activation_fused)
    if not (feat.scale_ab or feat.scale_cd or feat.scale_alpha_vec or feat.bias or feat.use_e
            or kind != "none"):
        return None
    activation = BY_NAME[kind].value
    integer = pt.compute_type in INTEGER_COMPUTE
    m, n = problem.m, problem.n
    batch = problem.batch if pt.num_indices_c == 3 else 1
    along_n = feat.factor_dim == DIM_N or (feat.factor_dim == DIM_RUNTIME and case in _ALONG_N_CASES)
    buffers: dict[str, np.ndarray] = {}
    fields: dict[str, object] = {}
    row, col = np.ones(m), np.ones(n)
    if feat.scale_ab == "Scalar":
        sa, sb = float(_scale(rng)), float(_scale(rng))
        fields["scale_a"], fields["scale_b"] = sa, sb
        buffers["scaleA"], buffers["scaleB"] = _f32_buffer(sa), _f32_buffer(sb)
    elif feat.scale_ab == "Vector":
        va, vb = _scale(rng, m), _scale(rng, n)
        row, col = row * va, col * vb
        buffers["scaleA"], buffers["scaleB"] = _f32_buffer(va), _f32_buffer(vb)
    if feat.scale_cd:
        sc, sd = float(_scale(rng)), float(_scale(rng))
        fields["scale_c"], fields["scale_d"] = sc, sd
        buffers["scaleC"], buffers["scaleD"] = _f32_buffer(sc), _f32_buffer(sd)
    if feat.scale_alpha_vec:
        length = n if along_n else m
        if integer:
            # int32 factors, never 0 (which would hide the accumulator)
            v = rng.integers(1, 5, size=length) * rng.choice([-1, 1], size=length)
        else:
            v = _scale(rng, length)
        if along_n:
            col = col * v
        else:
            row = row * v
        buffers["scaleAlphaVec"] = _int32_buffer(v) if integer else _f32_buffer(v)
    bias = None
    e = e_tensor(pt, problem) if feat.use_e else None
    if e is not None:
        buffers["E"] = e.flat
    args = EpilogueArgs(factor_dim=1 if along_n else 0, activation=activation, activation_args=kind_args,
                        strides_e=e_strides(pt, problem) if e is not None else ())
    # the run-time bias type rotates over the accepted ones, case by case
    names = ("full", "edges", "small", "alpha0", "k0", "override")
    bias_type = feat.bias_types[(names.index(case) if case in names else 0) % len(feat.bias_types)] \
        if feat.bias_types else None
    bias_out = None
    if feat.bias_from_b and bias_type is not None:
        out_el: Element = element(bias_type)  # type: ignore[assignment]  # checked by check_supported
        buffers["bias"] = bias_grad.output_buffer(out_el, n)
        args = attrs.evolve(args, bias_type=bias_type, stride_bias=n)
        bias_out = bias_type
    if feat.bias_read and bias_type is not None:
        el: Element = element(bias_type)  # type: ignore[assignment]
        length = n if along_n else m
        values = el.random(rng, (batch, length))
        buffers["bias"] = el.to_bits(values).reshape(-1)
        bias = values.T[None, :, :] if along_n else values.T[:, None, :]  # -> [m or 1, n or 1, batch]
        args = attrs.evolve(args, bias_type=bias_type, stride_bias=length)
    return Epilogue(args, buffers, row=row, col=col, bias=bias, activation=kind, activation_args=kind_args, e=e,
                    bias_out=bias_out, **fields)  # type: ignore[arg-type]


def reads_c(beta: float, ep: Epilogue | None) -> bool:
    """Whether the kernel reads C: beta' = beta * scaleC (f32) is not +0.0 bit for bit. Upstream's
    kernels take the beta path for -0.0 too (spec/epilogue_semantics.md §1.1 step 5), so beta 0 with a
    negative scaleC reads C; adding -0.0 x C then changes nothing as long as C is finite."""
    scaled = np.float32(beta) * np.float32(ep.scale_c if ep is not None else 1.0)
    return bool(scaled != 0 or np.signbit(scaled))


def factor(ep: Epilogue | None) -> np.ndarray | float:
    """The per-element multiplier of alpha * acc, [m, n, 1] (1.0 without an epilogue)."""
    if ep is None:
        return 1.0
    if ep.row is None or ep.col is None:  # no vector factors: alpha's scale alone
        return ep.alpha_scale
    return ep.alpha_scale * np.multiply.outer(ep.row, ep.col)[..., None]


# ---- the features' reference steps (float compute) ---------------------------------------------------

@attrs.frozen(slots=True)
class Value:
    """The reference between two epilogue steps: exact values ([m, n, batch]) and, before the error
    bound is fixed, the magnitude it scales (`bound`); after, the bound itself (`err`). `e` and
    `unscaled` are what the E output and OutputAmaxD are checked against."""

    exact: np.ndarray = attrs.field(eq=False)
    bound: np.ndarray = attrs.field(eq=False)
    err: np.ndarray | None = attrs.field(default=None, eq=False)
    e: tuple[np.ndarray, np.ndarray | None] | None = attrs.field(default=None, eq=False)  # (exact, err) at E
    unscaled: tuple[np.ndarray, np.ndarray] | None = attrs.field(default=None, eq=False)  # before scaleD


# When a step runs: its factor multiplies alpha * acc (before C, `factor`), it adds to the sum whose
# magnitude the error bound scales (SUM), or it maps the value and its fixed bound (VALUE).
FACTOR, SUM, VALUE = "factor", "sum", "value"


def _bias(v: Value, ep: Epilogue) -> Value:
    if ep.bias is None:
        return v
    return attrs.evolve(v, exact=v.exact + ep.bias, bound=v.bound + np.abs(ep.bias))


def _e_output(v: Value, ep: Epilogue) -> Value:
    # E: after the bias, before the activation, in its own type (the caller converts it)
    return attrs.evolve(v, e=(v.exact, v.err)) if ep.e is not None else v


def _activation_step(v: Value, ep: Epilogue) -> Value:
    assert v.err is not None
    exact, err = activation.activate(ep.activation, ep.activation_args, v.exact, v.err)
    return attrs.evolve(v, exact=exact, err=err)


def _scale_d(v: Value, ep: Epilogue) -> Value:
    assert v.err is not None
    return attrs.evolve(v, exact=v.exact * ep.scale_d, err=v.err * abs(ep.scale_d), unscaled=(v.exact, v.err))


@attrs.frozen(slots=True)
class ReferenceStep:
    stage: str
    apply: Callable[[Value, Epilogue], Value] | None  # None: the factor (`factor`) carries it


# Every epilogue feature's reference step (asm/gemm/epi/order.FEATURES names), in the verifier's
# layer; FactorDim only picks the index the vectors take (`make`), amax is read off `unscaled`.
REFERENCE_STEPS: Mapping[str, ReferenceStep | None] = {
    "ScaleAB": ReferenceStep(FACTOR, None), "ScaleAlphaVec": ReferenceStep(FACTOR, None),
    "Bias": ReferenceStep(SUM, _bias), "FactorDim": None, "UseE": ReferenceStep(VALUE, _e_output),
    "Activation": ReferenceStep(VALUE, _activation_step), "AmaxD": None, "ScaleCD": ReferenceStep(VALUE, _scale_d),
}


def apply_steps(pt: ProblemType, v: Value, ep: Epilogue | None, stage: str) -> Value:
    """`v` after the active features' reference steps of `stage`, in epilogue order."""
    if ep is None:
        return v
    for f in active(epilogue_features(pt)):
        step = REFERENCE_STEPS[f.name]
        if step is not None and step.stage == stage and step.apply is not None:
            v = step.apply(v, ep)
    return v
