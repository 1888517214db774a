"""The bias (forward: t += bias[b * strideBias + f], spec/epilogue_semantics.md §1.1 step 6; the
gradient from B: bias_grad.py, before the stores) and the factor dimension bias and ScaleAlphaVec share."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from tensile_lite.asm.gemm import bias_grad
from tensile_lite.asm.gemm.epi.base import (
    AFTER_C,
    CONV_AFTER_STRIDES,
    CONV_POINTERS,
    CONV_TAIL,
    VECTOR_REGISTERS,
    Arg,
    Feature,
    ptr,
    val,
)
from tensile_lite.asm.gemm.features import BIAS_TYPES, DIM_NONE, EpilogueFeatures
from tensile_lite.model import DataType, ProblemType

if TYPE_CHECKING:
    from tensile_lite.asm.gemm.emit import Emitter
    from tensile_lite.asm.gemm.epilogue import Step
    from tensile_lite.asm.gemm.postgsu import ConversionStep


@attrs.frozen(slots=True)
class Bias(Feature):
    name: str = "Bias"
    stage: str = AFTER_C
    gemm_rank: int = 4
    conversion_rank: int = 1
    register_rank: int = 1

    def gemm_registers(self, feat: EpilogueFeatures) -> tuple[str, ...]:
        return VECTOR_REGISTERS if feat.bias_read else ()

    def lds_bytes(self, feat: EpilogueFeatures, threads: int) -> int:
        # the gradient from B: one f32 partial sum per thread (bias_grad.py)
        return 4 * threads if feat.bias_from_b else 0

    def lds_vectors(self, feat: EpilogueFeatures) -> tuple[tuple[str, str, int], ...]:
        return (("bias", "bias", feat.factor_dim),) if feat.bias_read else ()

    def active(self, feat: EpilogueFeatures) -> bool:
        return bool(feat.bias)

    def problem_reasons(self, pt: ProblemType, feat: EpilogueFeatures) -> list[str]:
        # a gradient bias is an output (spec/epilogue_semantics.md §1.2): from B the column sums over
        # K (bias_grad.py); from A the row sums, and from D a compute-type tile for a separate
        # reduction kernel, are not built
        if feat.bias_read:
            return []
        if feat.bias_from_b:
            stored = pt.b_type.operand_types[1]
            if stored.isa_format not in bias_grad.FORMATS:
                return [f"Gradient bias BiasSrc:B from {stored.letter}"]
            return []
        return [f"Gradient bias reduction BiasSrc:{feat.bias_src}"]

    def reasons(self, pt: ProblemType, feat: EpilogueFeatures, earlier: list[str]) -> list[str]:
        if feat.bias_from_b:
            bad = [t.letter for t in feat.bias_types if t not in bias_grad.OUTPUT_TYPES]
            return [f"Bias type:{'/'.join(bad) or 'none'}"] if bad or not feat.bias_types else []
        if pt.compute_type is DataType.I or not feat.bias_read:
            return []
        bad = [t.letter for t in feat.bias_types if t not in BIAS_TYPES]
        if bad or not feat.bias_types:
            return [f"Bias type:{'/'.join(bad) or 'none'}"]
        return []

    def gemm_arguments(self, pt: ProblemType, feat: EpilogueFeatures, activation_fused: bool) -> tuple[Arg, ...]:
        args = [ptr("bias", "void")]
        if feat.needs_bias_type:
            args += [val("biasType", "u32"), val("StrideBias", "u32")]
        return tuple(args)

    def conversion_arguments(self, pt: ProblemType, feat: EpilogueFeatures) -> dict[int, tuple[Arg, ...]]:
        if not feat.bias_read:
            return {}
        return {CONV_POINTERS: (ptr("bias", "void"),), CONV_AFTER_STRIDES: (val("strideBias", "u32"),)}

    def gemm_prepare(self, e: Emitter) -> None:
        if e.plan.epilogue.bias_from_b:
            bias_grad.write_from_b(e)

    def gemm_step(self, step: Step) -> None:
        if step.feat.bias_read:
            step.apply_vector("bias", add=True)

    def conversion_step(self, step: ConversionStep) -> None:
        if not step.feat.bias_read:
            return
        w = step.writer
        r, v = w.r, w.r.v
        srd = r.srd["X"]
        bias_type = w.variant.bias_type
        assert bias_type is not None
        skip = w.skip_if_null(w.arg("bias"))
        w.resource(srd, w.arg("bias"))
        for j in range(w.variant.vw):
            w.factor_offset(j, step.along_m, bias_type.num_bytes, w.arg("strideBias") if step.batched else None)
            w.load_f32(v["x"], v["f"], srd, bias_type)
            w.e(w.isa.v_add_f32(r.acc[j], r.acc[j], v["x"]))
        w.e.label(skip)


@attrs.frozen(slots=True)
class FactorDim(Feature):
    """The dimension bias and ScaleAlphaVec run along: M, N, or the run-time `factorDim` argument.
    No step of its own: the vector features read it."""

    name: str = "FactorDim"
    # no arithmetic of its own: the features that read it decide the compute types
    compute_types: tuple[DataType, ...] = (DataType.S, DataType.I)
    gemm_rank: int = 5
    conversion_rank: int = 6

    def active(self, feat: EpilogueFeatures) -> bool:
        return feat.factor_dim != DIM_NONE

    def gemm_arguments(self, pt: ProblemType, feat: EpilogueFeatures, activation_fused: bool) -> tuple[Arg, ...]:
        return (val("factorDim", "u32"),) if feat.has_factor_dim_arg else ()

    def conversion_arguments(self, pt: ProblemType, feat: EpilogueFeatures) -> dict[int, tuple[Arg, ...]]:
        # the runtime appends factorDim whenever ScaleAlphaVec is used, whatever its dimension
        if feat.has_factor_dim_arg or feat.scale_alpha_vec:
            return {CONV_TAIL: (val("factorDim", "u32"),)}
        return {}
