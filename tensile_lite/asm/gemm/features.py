"""The epilogue flags of a problem type, decided once the way upstream's kernel writer reads them
(what each feature does with them, its arguments and its steps: epi/), and where staged vectors sit
in LDS.

Two readings follow upstream's kernels rather than its documentation (spec/epilogue_semantics.md §7):
- the activation selector is honoured only when the problem type has an `Activation` key and names
  `all` or `hipblaslt_all`; anything else means no activation (upstream forces it to `none`);
- bias and ScaleAlphaVec share one factor dimension, upstream's `FactorDim = max(UseScaleAlphaVec,
  UseBias)`: 1 along M, 2 along N, 3 chosen at run time by the `factorDim` argument (0: M, else N).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from tensile_lite.model import DataType, ProblemType

SELECTORS = ("all", "hipblaslt_all")

# factor dimensions
DIM_NONE, DIM_M, DIM_N, DIM_RUNTIME = 0, 1, 2, 3
# bias element types the epilogue converts (compute type f32)
BIAS_TYPES = (DataType.S, DataType.H, DataType.B)


@attrs.frozen(slots=True)
class EpilogueFeatures:
    scale_ab: str                      # "", "Scalar" or "Vector"
    scale_cd: bool
    scale_alpha_vec: bool
    bias: str                          # "" (none), "read" (forward add) or "write" (gradient)
    bias_src: str                      # gradient bias source: "A", "B" or "D"
    bias_types: tuple[DataType, ...]   # the run-time bias_type values the kernel accepts
    factor_dim: int                    # DIM_* shared by bias and ScaleAlphaVec
    use_e: bool
    activation: str                    # "none", "all" or "hipblaslt_all"
    activation_compute: DataType
    gradient: bool
    amax_d: bool

    @property
    def bias_read(self) -> bool:
        return self.bias == "read"

    @property
    def bias_from_b(self) -> bool:
        """BGRADB: the kernel writes the column sums of B over K as the bias (bias_grad.py)."""
        return self.bias == "write" and self.bias_src == "B"

    @property
    def bgradb(self) -> bool:
        """The one gradient problem type built: the forward epilogue with the bias from B (no E input,
        no activation)."""
        return self.bias_from_b and self.activation == "none" and not self.use_e

    @property
    def reads_operands_always(self) -> bool:
        """A gradient bias from A or B: the alpha == 0 short circuit is off (upstream's kernels run the
        main loop whatever alpha is, so NaN in A or B reaches D)."""
        return self.bias == "write" and self.bias_src in ("A", "B")

    @property
    def needs_bias_type(self) -> bool:
        """`bias_type` and `strideBias` follow the bias pointer except for a gradient written from D."""
        return self.bias_read or (self.bias == "write" and self.bias_src in ("A", "B"))

    @property
    def has_factor_dim_arg(self) -> bool:
        return self.factor_dim == DIM_RUNTIME

    @property
    def has_vectors(self) -> bool:
        """Any per-row or per-column input the epilogue stages in LDS."""
        return self.scale_ab == "Vector" or self.scale_alpha_vec or self.bias_read

    @property
    def any(self) -> bool:
        return bool(self.scale_ab or self.scale_cd or self.scale_alpha_vec or self.bias or self.use_e
                    or self.activation != "none" or self.amax_d)


# Selectors take as many activation arguments as the most demanding forward activation (upstream's
# getAdditionalArgNum): 2, even for `hipblaslt_all` whose own kinds read none (the spec's table says
# 0; upstream's kernels declare activationAlpha and activationBeta, and they are what we match).
SELECTOR_ARGS = 2


def activation_argument_count(selector: str) -> int:
    return SELECTOR_ARGS if selector in SELECTORS else 0


def activation_selector(pt: ProblemType) -> str:
    if "Activation" in pt.params and pt.activation_type in SELECTORS:
        return pt.activation_type
    return "none"


def epilogue_features(pt: ProblemType) -> EpilogueFeatures:
    act = activation_selector(pt)
    bias = ""
    if pt.use_bias:
        bias = "write" if pt.gradient else "read"
    bias_src = pt.bias_src if pt.gradient else "D"
    factor = pt.use_scale_alpha_vec
    if bias and (bias == "read" or bias_src in ("A", "B")):
        factor = max(factor, pt.use_bias)
    return EpilogueFeatures(
        scale_ab=pt.use_scale_ab, scale_cd=pt.use_scale_cd, scale_alpha_vec=bool(pt.use_scale_alpha_vec),
        bias=bias, bias_src=bias_src, bias_types=tuple(pt.bias_data_types) if bias else (),
        factor_dim=min(factor, DIM_RUNTIME), use_e=pt.use_e, activation=act,
        activation_compute=pt.activation_compute_type, gradient=pt.gradient, amax_d=pt.output_amax_d)


@attrs.frozen(slots=True)
class VectorRegion:
    """One staged vector: which one (and its pointer argument), along which dimension, where in LDS,
    how many elements."""

    name: str        # "scaleA", "scaleB", "scaleAlphaVec" or "bias"
    argument: str    # the kernel argument holding its address
    dim: int         # DIM_M, DIM_N or DIM_RUNTIME
    lds_offset: int  # bytes
    length: int      # elements staged (the macro tile rounded up to whole passes of the threads)


def vector_regions(wanted: Sequence[tuple[str, str, int]], macro_tile: tuple[int, int],
                   threads: int) -> tuple[VectorRegion, ...]:
    """The LDS regions of the staged vectors `wanted` ((name, argument, dimension), in the order the
    epilogue applies them: the features' `lds_vectors`), one after the other, 16-byte aligned."""
    out, offset = [], 0
    for name, argument, dim in wanted:
        tile = {DIM_M: macro_tile[0], DIM_N: macro_tile[1]}.get(dim, max(macro_tile))
        length = -(-tile // threads) * threads
        out.append(VectorRegion(name, argument, dim, offset, length))
        offset += -(-length * 4 // 16) * 16
    return tuple(out)


def staging_bytes(regions: tuple[VectorRegion, ...]) -> int:
    if not regions:
        return 0
    last = regions[-1]
    return last.lds_offset + last.length * 4
