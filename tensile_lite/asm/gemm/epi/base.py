"""What one epilogue feature declares, and the contexts its two users hand it.

A feature is a frozen object that reads a problem type and says: whether it is active, why the
writer cannot build it, which arguments it adds to the GEMM kernel and to the split-K conversion
kernel (by role, resolved to metadata types by the argument list's owner), the part it adds to the
conversion kernel's name, its LDS and named working registers, and the instructions it contributes
at its place in the epilogue (a once-per-workgroup preparation and a step). The GEMM epilogue
(epilogue.py) and the conversion kernel (postgsu.py) walk the same ordered list (epi/order.py), so
a feature lands once; its reference math is verify/epilogue.REFERENCE_STEPS (the verifier's layer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from tensile_lite.asm.gemm.features import EpilogueFeatures
from tensile_lite.model import DataType, ProblemType

if TYPE_CHECKING:
    from tensile_lite.asm.gemm.emit import Emitter
    from tensile_lite.asm.gemm.epilogue import Regs, Step
    from tensile_lite.asm.gemm.postgsu import ConversionStep

# Where a feature's step runs relative to the two steps every epilogue has (alpha, beta * C).
BEFORE_C = "before_c"
AFTER_C = "after_c"

# Value-type roles an argument may name instead of a metadata type (the argument list resolves them).
COMPUTE = "compute"          # the compute type's value type
ACTIVATION = "activation"    # the activation compute type's argument type
E_TYPE = "e"                 # E's element type

# The lane's LDS byte offsets of its first row and of its column in a staged vector (every feature
# whose vector is staged in LDS reads them).
VECTOR_REGISTERS = ("lds_row", "lds_col")

# Sections of the conversion kernel's argument list a feature may add to (runtime order,
# ContractionSolution.cpp outputConversionCallArgs): before D; after C; after alpha and beta;
# before the D strides; after the W/C strides; after the GSU.
CONV_LEAD, CONV_POINTERS, CONV_VALUES, CONV_STRIDES, CONV_AFTER_STRIDES, CONV_TAIL = range(6)


@attrs.frozen(slots=True)
class Arg:
    """One declared argument: name, pointer or value, and a metadata type or a role above."""

    name: str
    pointer: bool
    type: str


def ptr(name: str, type_: str) -> Arg:
    return Arg(name, True, type_)


def val(name: str, type_: str) -> Arg:
    return Arg(name, False, type_)


@attrs.frozen(slots=True)
class Feature:
    """The defaults of a feature that contributes nothing; each feature overrides what it has.

    `gemm_rank` and `conversion_rank` place the feature's arguments where the runtime expects them
    (kernel_anatomy.md §1.5; the conversion kernel's call arguments), which is not the order the
    epilogue applies the features in. The conversion kernel's NAME is the host's (host/conversion.py)."""

    name: str = ""
    stage: str = AFTER_C
    # compute types whose epilogue this feature is built for (others: "epilogue compute type X")
    compute_types: tuple[DataType, ...] = (DataType.S,)
    gemm_rank: int = 0
    conversion_rank: int = 0
    # upstream's conversion kernel applies this before alpha (the GEMM kernel after)
    before_alpha: bool = False
    # where the feature's working VGPRs sit in the GEMM epilogue's block (after the common ones)
    register_rank: int = 0
    # every GEMM epilogue variant ends by branching to this feature's finish (at most one feature)
    finishes: bool = False

    def active(self, feat: EpilogueFeatures) -> bool:
        return False

    def reasons(self, pt: ProblemType, feat: EpilogueFeatures, earlier: list[str]) -> list[str]:
        """Why the writer cannot build this feature of `pt` (support.py's epilogue gate; `earlier`:
        the reasons of the features before it, which some gates defer to)."""
        return []

    def problem_reasons(self, pt: ProblemType, feat: EpilogueFeatures) -> list[str]:
        """Reasons the support gate lists with the problem type's own (after the epilogue's)."""
        return []

    def gemm_registers(self, feat: EpilogueFeatures) -> tuple[str, ...]:
        """Names of the per-lane VGPRs the feature's GEMM step needs (features needing the same name
        share one register)."""
        return ()

    def lds_vectors(self, feat: EpilogueFeatures) -> tuple[tuple[str, str, int], ...]:
        """The vectors the GEMM epilogue stages in LDS for this feature: (name, pointer argument,
        factor dimension), in the order its step reads them (features.vector_regions places them)."""
        return ()

    def lds_bytes(self, feat: EpilogueFeatures, threads: int) -> int:
        """LDS the feature needs after the main loop besides staged vectors."""
        return 0

    def gemm_arguments(self, pt: ProblemType, feat: EpilogueFeatures, activation_fused: bool) -> tuple[Arg, ...]:
        return ()

    def conversion_arguments(self, pt: ProblemType, feat: EpilogueFeatures) -> dict[int, tuple[Arg, ...]]:
        return {}

    def gemm_prepare(self, e: Emitter) -> None:
        """The GEMM epilogue's once-per-workgroup setup (before the vectors are staged)."""

    def conversion_prepare(self, step: ConversionStep) -> None:
        """The conversion kernel's setup (after alpha and beta are read, before the slices are summed)."""

    def gemm_lane_setup(self, e: Emitter, w: Regs) -> None:
        """The lane's own values (offsets into the feature's tensors), once the lane's row and column
        in the tile are known."""

    def gemm_start(self, e: Emitter, w: Regs) -> None:
        """Before the first variant of the stores."""

    def gemm_finish(self, e: Emitter, w: Regs) -> None:
        """After every variant (`finishes`): the end of the program."""

    def gemm_step(self, step: Step) -> None:
        """The GEMM epilogue's instructions for one block of the tile."""

    def conversion_step(self, step: ConversionStep) -> None:
        """The conversion kernel's instructions for the thread's elements."""
