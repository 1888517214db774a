"""Epilogue inputs of a problem type (scale factors, scale vectors, bias) with random values, and
their part of the reference (spec/epilogue_semantics.md §1.1):

    alpha' = alpha * scaleA * scaleB                  beta' = beta * scaleC
    t = alpha' * acc * scaleAVec[m] * scaleBVec[n] * scaleAlphaVec[f]
    t = t + beta' * C + bias[b * strideBias + f]
    t = relu(t)                                       (activationType 5, some cases)
    D = cvt_D(t * scaleD)

`f` is m or n, by the problem type's factor dimension (or the run-time `factorDim` argument, which the
cases alternate). The activation selector (`all`, `hipblaslt_all`) runs relu (exact, so the tolerance
stays that of the plain epilogue) in the `edges` and `small` cases and none (activationType 0) in the
others; its other activations (gelu, ...) are not verified. Problem types that write E or gradients are
not verified. OutputAmaxD (the max of |t| before scaleD) is checked against the reference's values
before scaleD (amax.py).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import numpy as np

from tensile_lite.asm.gemm import EpilogueArgs, GemmProblem
from tensile_lite.asm.gemm.features import DIM_N, DIM_RUNTIME, epilogue_features
from tensile_lite.model import DataType, ProblemType
from tensile_lite.verify.elements import ELEMENTS, Element, element
from tensile_lite.verify.errors import NotVerifiable

# Roundings the epilogue may add on top of the plain GEMM's (alpha', each scale, bias, scaleD).
EXTRA_ROUNDINGS = 8
# Cases that take the factor dimension N when it is chosen at run time (the others take M).
_ALONG_N_CASES = frozenset({"edges", "small"})
# Cases that run relu when the kernel has a fused activation selector, and its ActivationType value.
_RELU_CASES = frozenset({"edges", "small"})
RELU = 5


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
    relu: bool = False  # the activation applied after the bias

    @property
    def alpha_scale(self) -> float:
        return self.scale_a * self.scale_b


def check_supported(pt: ProblemType) -> None:
    """NotVerifiable for epilogue features the verifier has no reference for."""
    feat = epilogue_features(pt)
    if not feat.any:
        return
    for present, what in ((feat.use_e, "the E output"), (feat.gradient, "gradient"),
                          (feat.bias == "write", "bias gradient")):
        if present:
            raise NotVerifiable(f"{what} of the epilogue is not verified")
    if pt.compute_type is not DataType.S:
        raise NotVerifiable(f"epilogue extras with compute type {pt.compute_type.letter} are not verified")
    if pt.activation_type not in ("none", "all", "hipblaslt_all"):
        raise NotVerifiable(f"activation {pt.activation_type} is not verified")
    for dt in feat.bias_types:
        if element(dt) is None:
            raise NotVerifiable(f"bias type {dt.letter} is not supported by the verifier")


def _scale(rng: np.random.Generator, shape: int | tuple[int, ...] = ()) -> np.ndarray:
    """Scale factors in [0.5, 2), f32 values with their sign flipped at random."""
    s = ELEMENTS[DataType.S]
    return s.round(rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape))


def _f32_buffer(values: np.ndarray) -> np.ndarray:
    return ELEMENTS[DataType.S].to_bits(np.atleast_1d(values))


def make(pt: ProblemType, problem: GemmProblem, case: str, rng: np.random.Generator, *,
         activation_fused: bool = True) -> Epilogue | None:
    """Random epilogue inputs for one call, or None when the problem type has no epilogue extras.
    `activation_fused` is the solution's ActivationFused: without it the kernel takes no activation."""
    feat = epilogue_features(pt)
    relu = activation_fused and feat.activation != "none" and case in _RELU_CASES
    if not (feat.scale_ab or feat.scale_cd or feat.scale_alpha_vec or feat.bias_read or relu):
        return None
    activation = RELU if relu else 0
    m, n = problem.m, problem.n
    batch = problem.batch if pt.num_indices_c == 3 else 1
    along_n = feat.factor_dim == DIM_N or (feat.factor_dim == DIM_RUNTIME and case in _ALONG_N_CASES)
    buffers: dict[str, np.ndarray] = {}
    fields: dict[str, object] = {}
    row, col = np.ones(m), np.ones(n)
    if feat.scale_ab == "Scalar":
        fields["scale_a"], fields["scale_b"] = float(_scale(rng)), float(_scale(rng))
        buffers["scaleA"], buffers["scaleB"] = _f32_buffer(fields["scale_a"]), _f32_buffer(fields["scale_b"])
    elif feat.scale_ab == "Vector":
        va, vb = _scale(rng, m), _scale(rng, n)
        row, col = row * va, col * vb
        buffers["scaleA"], buffers["scaleB"] = _f32_buffer(va), _f32_buffer(vb)
    if feat.scale_cd:
        fields["scale_c"], fields["scale_d"] = float(_scale(rng)), float(_scale(rng))
        buffers["scaleC"], buffers["scaleD"] = _f32_buffer(fields["scale_c"]), _f32_buffer(fields["scale_d"])
    if feat.scale_alpha_vec:
        v = _scale(rng, n if along_n else m)
        if along_n:
            col = col * v
        else:
            row = row * v
        buffers["scaleAlphaVec"] = _f32_buffer(v)
    bias = None
    args = EpilogueArgs(factor_dim=1 if along_n else 0, activation=activation)
    if feat.bias_read:
        # the run-time bias type rotates over the accepted ones, case by case
        names = ("full", "edges", "small", "alpha0", "k0")
        bias_type = feat.bias_types[(names.index(case) if case in names else 0) % len(feat.bias_types)]
        el: Element = element(bias_type)  # type: ignore[assignment]
        length = n if along_n else m
        values = el.random(rng, (batch, length))
        buffers["bias"] = el.to_bits(values).reshape(-1)
        bias = values.T[None, :, :] if along_n else values.T[:, None, :]  # -> [m or 1, n or 1, batch]
        args = EpilogueArgs(bias_type=bias_type, stride_bias=length, factor_dim=1 if along_n else 0,
                            activation=activation)
    return Epilogue(args, buffers, row=row, col=col, bias=bias, relu=relu, **fields)  # type: ignore[arg-type]


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
    return ep.alpha_scale * np.multiply.outer(ep.row, ep.col)[..., None]

