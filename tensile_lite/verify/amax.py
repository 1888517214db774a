"""OutputAmaxD as the runtime drives it (spec/epilogue_semantics.md §1.6, asm/gemm/amax.py): the kernel
writes one f32 to AddrAmaxOut, the largest |value| of D before scaleD over the M x N (x batch)
elements, NaN dropped. It reduces across workgroups through AmaxWS (one f32 per workgroup) and a
counter in AmaxSync (dword 0, or dword i for GEMM i of a grouped launch) that must be back at 0 after
the launch, as the Synchronizer it stands for is never re-zeroed.

The verifier fills AddrAmaxOut with a NaN sentinel (so a value never written is seen), AmaxWS with
1e30 (a partial nobody wrote wins the max and fails) and AmaxSync with zeros. The amax is checked
only when every workgroup of the GEMM ran: a subset leaves the reduction waiting for the others.
hipBLASLt's UserArguments (argType 2) have no amax fields, so such launches must leave AddrAmaxOut
as it was.
"""

from __future__ import annotations

import numpy as np

from tensile_lite.model import DataType, ProblemType
from tensile_lite.verify.elements import ELEMENTS
from tensile_lite.verify.reference import Expected
from tensile_lite.verify.splitk import POISON, counters_left

OUT, WORKSPACE, SYNC = "amaxOut", "amaxWS", "amaxSync"  # the writer's POINTER_KEYS names
# Counters of one launch: one per GEMM of the largest group the verifier makes, and spares.
SYNC_DWORDS = 64
_F32 = ELEMENTS[DataType.S]


def enabled(pt: ProblemType) -> bool:
    return pt.output_amax_d


def output_buffers(workgroups: int) -> dict[str, np.ndarray]:
    """AddrAmaxOut (the sentinel) and AmaxWS (poisoned, one f32 per workgroup of the launch)."""
    return {OUT: np.full(1, _F32.sentinel, dtype=np.uint32),
            WORKSPACE: np.full(max(workgroups, 1), POISON, dtype=np.uint32)}


def sync_buffer() -> np.ndarray:
    return np.zeros(SYNC_DWORDS, dtype=np.uint32)


def mismatch(out_bits: np.ndarray, want: Expected) -> str | None:
    """None when AddrAmaxOut holds the reference's amax within its tolerance; else the difference."""
    bits = int(out_bits[0])
    if bits == _F32.sentinel:
        return "AddrAmaxOut was never written"
    got = float(_F32.from_bits(np.asarray([bits], dtype=np.uint32))[0])
    value, tolerance = want.amax()
    if abs(got - value) <= tolerance:
        return None
    return f"amax of D before scaleD = {got:.9g}, want {value:.9g} (tolerance {tolerance:.3g})"


def untouched(out_bits: np.ndarray) -> str | None:
    """None when AddrAmaxOut still holds the sentinel (a launch that must not write it)."""
    if int(out_bits[0]) == _F32.sentinel:
        return None
    got = float(_F32.from_bits(np.asarray(out_bits[:1], dtype=np.uint32))[0])
    return f"wrote amax {got:.9g} to AddrAmaxOut, which this launch does not pass to the kernel"


def sync_left(sync: np.ndarray, checked: np.ndarray | None = None) -> str | None:
    """AmaxSync after a launch back at 0 (the dwords where `checked` is true, when given)."""
    return counters_left("AmaxSync", sync, checked)
