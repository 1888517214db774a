"""OutputAmaxD: amax = max(amax, |t|) after the activation, before scaleD (spec/epilogue_semantics.md
§1.6); the running max and the cross-workgroup reduction are amax.py's. The conversion kernel does
not take it (postgsu.supported)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from tensile_lite.asm.gemm import amax
from tensile_lite.asm.gemm.epi.base import AFTER_C, COMPUTE, Arg, Feature, ptr
from tensile_lite.asm.gemm.features import EpilogueFeatures
from tensile_lite.model import DataType, ProblemType

if TYPE_CHECKING:
    from tensile_lite.asm.gemm.emit import Emitter
    from tensile_lite.asm.gemm.epilogue import Regs, Step


@attrs.frozen(slots=True)
class AmaxD(Feature):
    name: str = "AmaxD"
    stage: str = AFTER_C
    gemm_rank: int = 8
    register_rank: int = 2
    finishes: bool = True  # the cross-workgroup reduction after every variant

    def gemm_registers(self, feat: EpilogueFeatures) -> tuple[str, ...]:
        return ("amax",)  # the lane's running max of |t|

    def lds_bytes(self, feat: EpilogueFeatures, threads: int) -> int:
        return 4 * threads  # the reduction's f32 per thread (amax.py)

    def active(self, feat: EpilogueFeatures) -> bool:
        return feat.amax_d

    def problem_reasons(self, pt: ProblemType, feat: EpilogueFeatures) -> list[str]:
        return [f"AmaxD compute type {pt.compute_type.letter}"] if pt.compute_type is not DataType.S else []

    def gemm_arguments(self, pt: ProblemType, feat: EpilogueFeatures, activation_fused: bool) -> tuple[Arg, ...]:
        return ptr("AddrAmaxOut", COMPUTE), ptr("AmaxWS", COMPUTE), ptr("AmaxSync", "u32")

    def gemm_start(self, e: Emitter, w: Regs) -> None:
        amax.start(e, w["amax"])

    def gemm_finish(self, e: Emitter, w: Regs) -> None:
        amax.finish(e, w["amax"])

    def gemm_step(self, step: Step) -> None:
        e, w = step.e, step.w
        if step.guard is None:
            amax.update(e, w["amax"], step.values, w.t)
        else:
            rows, limit = step.guard
            for value, row in zip(step.values, rows, strict=True):
                amax.update_guarded(e, w["amax"], value, row, limit, w.t)
