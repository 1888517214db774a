"""The scale features: ScaleAB (scalar, folded into alpha, or per-row/column vectors), ScaleAlphaVec
and ScaleCD (beta' = beta * scaleC before, * scaleD at the end); spec/epilogue_semantics.md §1.1
steps 0, 0', 3, 4 and 9."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from tensile_lite.asm.gemm.epi.base import (
    AFTER_C,
    BEFORE_C,
    COMPUTE,
    CONV_POINTERS,
    VECTOR_REGISTERS,
    Arg,
    Feature,
    ptr,
)
from tensile_lite.asm.gemm.features import DIM_M, DIM_N, EpilogueFeatures
from tensile_lite.asm.gemm.vectors import load_scale, scale_d
from tensile_lite.model import DataType, ProblemType

if TYPE_CHECKING:
    from tensile_lite.asm.gemm.emit import Emitter
    from tensile_lite.asm.gemm.epilogue import Step
    from tensile_lite.asm.gemm.postgsu import ConversionStep


@attrs.frozen(slots=True)
class ScaleAB(Feature):
    """Scalar: alpha' = alpha * scaleA * scaleB once per workgroup (vectors.prepare_scalars and the
    conversion kernel's scalars); Vector: t *= scaleA[m], t *= scaleB[n]. Upstream's conversion
    kernel multiplies the vectors before alpha (`before_alpha`), the GEMM kernel after."""

    name: str = "ScaleAB"
    stage: str = BEFORE_C
    gemm_rank: int = 1
    conversion_rank: int = 2
    before_alpha: bool = True
    register_rank: int = 1

    def gemm_registers(self, feat: EpilogueFeatures) -> tuple[str, ...]:
        return VECTOR_REGISTERS if feat.scale_ab == "Vector" else ()

    def lds_vectors(self, feat: EpilogueFeatures) -> tuple[tuple[str, str, int], ...]:
        if feat.scale_ab != "Vector":
            return ()
        return ("scaleA", "AddressScaleA", DIM_M), ("scaleB", "AddressScaleB", DIM_N)

    def active(self, feat: EpilogueFeatures) -> bool:
        return bool(feat.scale_ab)

    def gemm_arguments(self, pt: ProblemType, feat: EpilogueFeatures, activation_fused: bool) -> tuple[Arg, ...]:
        return ptr("AddressScaleA", COMPUTE), ptr("AddressScaleB", COMPUTE)

    def conversion_arguments(self, pt: ProblemType, feat: EpilogueFeatures) -> dict[int, tuple[Arg, ...]]:
        return {CONV_POINTERS: (ptr("scaleA", "f32"), ptr("scaleB", "f32"))}

    def gemm_prepare(self, e: Emitter) -> None:
        if e.plan.epilogue.scale_ab != "Scalar":
            return
        isa, r = e.isa, e.r
        t, v = r.stmp, r.vtmp
        load_scale(e, t[0], r.arg("AddressScaleA"))
        load_scale(e, t[1], r.arg("AddressScaleB"))
        alpha = r.arg("alpha")
        e(isa.v_mov_b32(v[0], alpha), isa.v_mul_f32(v[0], t[0], v[0]), isa.v_mul_f32(v[0], t[1], v[0]))
        e(isa.v_readfirstlane_b32(alpha, v[0]))

    def conversion_prepare(self, step: ConversionStep) -> None:
        if step.feat.scale_ab != "Scalar":
            return
        w = step.writer
        isa, e, s, t, x = w.isa, w.e, w.r.scal, w.r.t, w.r.v["x"]
        w.scalar(t[0], w.arg("scaleA"))
        w.scalar(t[1], w.arg("scaleB"))
        e(isa.v_mov_b32(x, s["alpha"]), isa.v_mul_f32(x, t[0], x), isa.v_mul_f32(x, t[1], x))
        e(isa.v_readfirstlane_b32(s["alpha"], x))

    def gemm_step(self, step: Step) -> None:
        if step.feat.scale_ab == "Vector":
            step.apply_vector("scaleA", add=False)
            step.apply_vector("scaleB", add=False)

    def conversion_step(self, step: ConversionStep) -> None:
        if step.feat.scale_ab == "Vector":
            step.writer.vector_multiply("scaleA", True)
            step.writer.vector_multiply("scaleB", False)


@attrs.frozen(slots=True)
class ScaleAlphaVec(Feature):
    """t *= scaleAlphaVec[f] along the shared factor dimension (int32 multiply for i32 compute)."""

    name: str = "ScaleAlphaVec"
    stage: str = BEFORE_C
    compute_types: tuple[DataType, ...] = (DataType.S, DataType.I)
    gemm_rank: int = 3
    conversion_rank: int = 4
    register_rank: int = 1

    def gemm_registers(self, feat: EpilogueFeatures) -> tuple[str, ...]:
        return VECTOR_REGISTERS

    def lds_vectors(self, feat: EpilogueFeatures) -> tuple[tuple[str, str, int], ...]:
        return (("scaleAlphaVec", "AddressScaleAlphaVec", feat.factor_dim),)

    def active(self, feat: EpilogueFeatures) -> bool:
        return feat.scale_alpha_vec

    def gemm_arguments(self, pt: ProblemType, feat: EpilogueFeatures, activation_fused: bool) -> tuple[Arg, ...]:
        return (ptr("AddressScaleAlphaVec", COMPUTE),)

    def conversion_arguments(self, pt: ProblemType, feat: EpilogueFeatures) -> dict[int, tuple[Arg, ...]]:
        return {CONV_POINTERS: (ptr("scaleAlphaVec", "f32"),)}

    def gemm_step(self, step: Step) -> None:
        step.apply_vector("scaleAlphaVec", add=False)

    def conversion_step(self, step: ConversionStep) -> None:
        step.writer.vector_multiply("scaleAlphaVec", step.along_m)


@attrs.frozen(slots=True)
class ScaleCD(Feature):
    """beta' = beta * scaleC (with the scalars), and t *= scaleD after the activation and amax."""

    name: str = "ScaleCD"
    stage: str = AFTER_C
    gemm_rank: int = 2
    conversion_rank: int = 3

    def active(self, feat: EpilogueFeatures) -> bool:
        return feat.scale_cd

    def gemm_arguments(self, pt: ProblemType, feat: EpilogueFeatures, activation_fused: bool) -> tuple[Arg, ...]:
        return ptr("AddressScaleC", COMPUTE), ptr("AddressScaleD", COMPUTE)

    def conversion_arguments(self, pt: ProblemType, feat: EpilogueFeatures) -> dict[int, tuple[Arg, ...]]:
        return {CONV_POINTERS: (ptr("scaleC", "f32"), ptr("scaleD", "f32"))}

    def gemm_prepare(self, e: Emitter) -> None:
        isa, r = e.isa, e.r
        t, v = r.stmp, r.vtmp
        load_scale(e, t[0], r.arg("AddressScaleC"))
        if e.plan.use_beta:
            beta = r.arg("beta")
            e(isa.v_mov_b32(v[0], beta), isa.v_mul_f32(v[0], t[0], v[0]), isa.v_readfirstlane_b32(beta, v[0]))
        pointer = r.arg("AddressScaleD")
        load_scale(e, t[0], pointer)
        e(isa.s_mov_b32(pointer[0], t[0]))

    def conversion_prepare(self, step: ConversionStep) -> None:
        w = step.writer
        isa, e, s, t, x = w.isa, w.e, w.r.scal, w.r.t, w.r.v["x"]
        w.scalar(t[0], w.arg("scaleC"))
        e(isa.v_mov_b32(x, s["beta"]), isa.v_mul_f32(x, t[0], x), isa.v_readfirstlane_b32(s["beta"], x))
        w.scalar(s["scaleD"], w.arg("scaleD"))

    def gemm_step(self, step: Step) -> None:
        e = step.e
        e(e.isa.v_mul_f32(v, scale_d(e), v) for v in step.values)

    def conversion_step(self, step: ConversionStep) -> None:
        w = step.writer
        scale = w.r.scal["scaleD"]
        w.e(w.isa.v_mul_f32(w.r.acc[j], scale, w.r.acc[j]) for j in range(w.variant.vw))
