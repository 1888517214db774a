"""The fused activation: t = act(t) chosen at run time by `activationType` in an `all` or
`hipblaslt_all` kernel (spec/epilogue_semantics.md §1.1 step 8a, §2); the instructions are
activation.py's."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from tensile_lite.asm.gemm import activation
from tensile_lite.asm.gemm.epi.base import ACTIVATION, AFTER_C, CONV_VALUES, Arg, Feature, val
from tensile_lite.asm.gemm.features import EpilogueFeatures, activation_argument_count
from tensile_lite.model import DataType, ProblemType

if TYPE_CHECKING:
    from tensile_lite.asm.gemm.epilogue import Step
    from tensile_lite.asm.gemm.postgsu import ConversionStep


@attrs.frozen(slots=True)
class Activation(Feature):
    name: str = "Activation"
    stage: str = AFTER_C
    compute_types: tuple[DataType, ...] = (DataType.S, DataType.I)
    gemm_rank: int = 7
    conversion_rank: int = 5

    def active(self, feat: EpilogueFeatures) -> bool:
        return feat.activation != "none"

    def problem_reasons(self, pt: ProblemType, feat: EpilogueFeatures) -> list[str]:
        # a gradient kernel multiplies by dgelu(E) instead of applying the forward activation
        # (spec/epilogue_semantics.md §1.1 step 8b); not built yet
        return ["Gradient activation (dgelu of E)"] if feat.gradient else []

    def reasons(self, pt: ProblemType, feat: EpilogueFeatures, earlier: list[str]) -> list[str]:
        # the activation runs in the compute type; a float epilogue names a mismatch only when
        # nothing before it already rules the kernel out
        expected = DataType.I if pt.compute_type is DataType.I else DataType.S
        if feat.activation_compute is expected or (expected is DataType.S and earlier):
            return []
        return [f"ActivationComputeDataType:{feat.activation_compute.letter}"]

    def gemm_arguments(self, pt: ProblemType, feat: EpilogueFeatures, activation_fused: bool) -> tuple[Arg, ...]:
        if not activation_fused:
            return ()
        names = ("activationAlpha", "activationBeta")[:activation_argument_count(feat.activation)]
        return (*(val(n, ACTIVATION) for n in names), val("activationType", "u32"))

    def conversion_arguments(self, pt: ProblemType, feat: EpilogueFeatures) -> dict[int, tuple[Arg, ...]]:
        count = activation_argument_count(feat.activation)
        return {CONV_VALUES: (*(val(f"activation_{i}", "f32") for i in range(count)), val("activationType", "u32"))}

    def gemm_step(self, step: Step) -> None:
        e, r = step.e, step.e.r
        activation.apply(e, step.feat.activation, step.values, step.w.t, r.arg("activationType"),
                         r.arg("activationAlpha"), r.arg("activationBeta"), integer=e.plan.integer)

    def conversion_step(self, step: ConversionStep) -> None:
        w = step.writer
        activation.apply(w.e, step.feat.activation, [w.r.acc[j] for j in range(w.variant.vw)], w.r.v["x"],
                         w.arg("activationType"), w.arg("activation_0"), w.arg("activation_1"))
