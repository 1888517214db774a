"""Keys ROCm 7.x logic files carry that the 2024 files did not, and the values that leave them unused.

Every solution and problem-type key is kept in `Params` whatever it is; this table says which of the new
ones can change a kernel, and for each the values that mean "not used" (what 2024 kernels did). The
support gate (`asm/gemm/support.py`) rejects a solution whose value of one of them is outside that set,
naming the key, until the writer generates it. Keys listed in `SCHEDULING_ONLY` order or place the same
work differently (like the 2024 scheduling keys the gate already accepts whatever their value), and keys
that are derived from others (LDS offsets, per-operand load counts, `*MXSA/B` twins of derived values)
follow the keys they are derived from. Sources for names and ranges: spec/rocm7_delta.md §1.3-1.4
(ValidParameters.py of 2025-2026); the "off" values are the ones every sample 7.x solution that a 2024
kernel could serve carries (../shared/logic7).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

# solution key -> the values (canonical form: bools as 0/1, lists as tuples) that leave it unused
NEW_SOLUTION_KEYS: Mapping[str, tuple[object, ...]] = MappingProxyType({
    # gfx1250 clusters and the tensor data mover
    "ClusterDim": ((1, 1),), "ClusterBarrier": (0,), "Multicast": (0,),
    "TDMInst": (0,), "TDMSplit": (0,), "TDMIterateMode": (0,), "TDMLoadWaveSync": (0,), "TDMPlusLdsBuf": (0,),
    # MX operands: how the scales are loaded and laid out
    "MXLoadInst": ("Auto",), "MXScaleFormat": ("Auto",), "DirectToVgprMXSA": (0,), "DirectToVgprMXSB": (0,),
    "DirectToLdsMXSA": (0,), "DirectToLdsMXSB": (0,), "Use64bShadowLimitMX": (0,),
    # workgroup order by space-filling curves (packed into the WGM argument the kernels would decode)
    "SpaceFillingAlgo": ((),), "SFCWGM": ((), ((1, 1), (1, 1))),
    # StreamK refinements (StreamK itself is a 2024 key the gate already checks)
    "StreamKFixupTreeReduction": (0,), "StreamKForceDPOnly": (0,), "StreamKWorkStealing": (0,),
    # other ways of computing the product or the reduction
    "UseDualFMAC": (0,), "UseDotInstruction": (0,), "WaveSplitK": (0,), "NumWaveSplitK": (1,),
    # (UseF32XEmulation itself is built: asm/gemm/xf32_split.py; its variants below are not yet)
    "UseDirect32XEmulation": (0,), "UseDot2F32XEmulation": (0,),
    "UseMFMAF32XEmulation": (0,), "EnableF32XEmulationLds": (0,), "UseSubtileImpl": (0,),
    "AdaptiveGemm": (0,), "AdaptiveGemmGSUA": (0,), "AdaptiveGemmNTAB": (0,),
    # LDS layouts and load paths the writer does not lay out
    "LDSSegmentInterleave": (0,), "LDSTrInst": (0,), "HalfPLR": (0,), "UsePLRPack": (0,),
    "CompactLoopStore": (0,), "StoreSwapAddr": (0,), "SwapGlobalReadOrder": (0,), "PrefetchGL2": (0,),
    "UseCustomMainLoopSchedule": (-1, 0),
})

# problem-type key -> the values that leave it unused (MXBlockA/B are typed in ProblemType as well)
NEW_PROBLEM_KEYS: Mapping[str, tuple[object, ...]] = MappingProxyType({
    "MXBlockA": (0,), "MXBlockB": (0,), "SwizzleTensorA": (0,), "SwizzleTensorB": (0,), "isMixMode": (0,),
    "FusedGemmA2A": (0,),
})

# New solution keys that only schedule, hint or size the same work: accepted whatever their value.
SCHEDULING_ONLY: frozenset[str] = frozenset({
    "SwInstructionPrefetch", "TailloopInNll", "ScheduleGROverBarrier", "DtlPlusLdsBuf", "MinGRIncPerMfma",
    "ExtraLatencyForLR", "ExtraMiLatencyLeft", "InitCIterWmma", "MbskPrefetchMethod", "MbskPrefetchOpt",
    "LocalSplitUReuseLDS", "MaxLDS", "ExpertSchedulingMode", "EnableStinkyTofuESM2", "ESMRuntimeGate",
    "TemporalHint", "TemporalHintA", "TemporalHintB", "TemporalHintC", "TemporalHintD", "TemporalHintE",
    "TemporalHintWS", "TemporalHintMetadata", "TemporalHintMXSA", "TemporalHintMXSB", "TemporalHintGate",
    "NonVolatile", "NonVolatileA", "NonVolatileB", "NonVolatileC", "NonVolatileD", "NonVolatileE",
    "NonVolatileWS", "NonVolatileMetadata", "NonVolatileMXSA", "NonVolatileMXSB", "NonVolatileGate",
    "NonTemporalMXSA", "NonTemporalMXSB", "NonTemporalGate", "CUOccupancy", "ForceUnrollSubIter",
    "MfmaInitCVgprs", "DebugPersistentKernelLoopForever",
})


def unused_values(key: str) -> tuple[object, ...] | None:
    """The "off" values of a new solution or problem-type key, None when the key is not in the table."""
    return NEW_SOLUTION_KEYS.get(key, NEW_PROBLEM_KEYS.get(key))


def new_key_reasons(solution_params: Mapping[str, object], problem_params: Mapping[str, object]) -> list[str]:
    """`new key <Key>` for each key of the tables whose value is present and not one of its "off" values."""
    out = []
    for params, table in ((problem_params, NEW_PROBLEM_KEYS), (solution_params, NEW_SOLUTION_KEYS)):
        for key, off in table.items():
            if key in params and params[key] not in off:
                out.append(f"new key {key}")
    return out
