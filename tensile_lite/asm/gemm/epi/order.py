"""The epilogue's features in the order the epilogue applies them (spec/epilogue_semantics.md §1.1),
the one list the GEMM epilogue, the conversion kernel, the argument lists, the conversion kernel's
name and the support gate walk. To add a feature: one module in this package and its place in FEATURES."""

from __future__ import annotations

from tensile_lite.asm.gemm.epi.act import Activation
from tensile_lite.asm.gemm.epi.amax_d import AmaxD
from tensile_lite.asm.gemm.epi.base import Arg, Feature
from tensile_lite.asm.gemm.epi.bias import Bias, FactorDim
from tensile_lite.asm.gemm.epi.output_e import OutputE
from tensile_lite.asm.gemm.epi.scales import ScaleAB, ScaleAlphaVec, ScaleCD
from tensile_lite.asm.gemm.features import EpilogueFeatures

FEATURES: tuple[Feature, ...] = (ScaleAB(), ScaleAlphaVec(), Bias(), FactorDim(), OutputE(), Activation(), AmaxD(),
                                 ScaleCD())


def active(feat: EpilogueFeatures) -> tuple[Feature, ...]:
    """The active features, in epilogue order."""
    return tuple(f for f in FEATURES if f.active(feat))


def steps(feat: EpilogueFeatures, stage: str) -> tuple[Feature, ...]:
    """The active features whose step runs at `stage` (BEFORE_C or AFTER_C), in epilogue order."""
    return tuple(f for f in active(feat) if f.stage == stage)


def gemm_registers(feat: EpilogueFeatures) -> tuple[str, ...]:
    """The names of the active features' working VGPRs in the GEMM epilogue, in register-rank order,
    each once."""
    names = (n for f in by_rank(active(feat), "register_rank") for n in f.gemm_registers(feat))
    return tuple(dict.fromkeys(names))


def lds_vectors(feat: EpilogueFeatures) -> tuple[tuple[str, str, int], ...]:
    """The vectors the active features stage in LDS, in epilogue order."""
    return tuple(v for f in active(feat) for v in f.lds_vectors(feat))


def lds_bytes(feat: EpilogueFeatures, threads: int) -> int:
    """The most LDS any active feature needs besides the staged vectors."""
    return max((f.lds_bytes(feat, threads) for f in active(feat)), default=0)


def by_rank(features: tuple[Feature, ...], key: str) -> tuple[Feature, ...]:
    """`features` in the order of one of the runtime's lists ('gemm_rank', 'conversion_rank')."""
    return tuple(sorted(features, key=lambda f: getattr(f, key)))


__all__ = ["FEATURES", "Arg", "Feature", "active", "by_rank", "steps"]
