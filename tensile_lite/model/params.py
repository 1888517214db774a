"""The frozen parameter mapping and the vocabulary of solution parameters.

Logic files spell the same value several ways (`true`, `1`; lists and tuples); `normalize` folds them into
one canonical, hashable form so equal solutions compare and hash equal whatever the spelling.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from typing import Any

# Upstream's tuning parameters ("validParameters"): the keys that shape a kernel, with the value assumed
# when a file omits one. Facts from tensilelite's defaults; values in our canonical form (bools as 0/1).
TUNING_DEFAULTS: dict[str, Any] = {
    "WaveSeparateGlobalReadA": 0, "WaveSeparateGlobalReadB": 0, "UnrollLoopSwapGlobalReadOrder": 0,
    "PrefetchGlobalRead": 1, "PrefetchLocalRead": 1, "ClusterLocalRead": 1, "1LDSBuffer": 0,
    "GlobalSplitU": 1, "GlobalSplitUAlgorithm": "MultipleBuffer", "SuppressNoLoadLoop": 0,
    "ExpandPointerSwap": 1, "ScheduleGlobalRead": 1, "ScheduleLocalWrite": 1, "ScheduleIterAlg": 3,
    "GlobalReadPerMfma": 1, "LocalWritePerMfma": -1, "InterleaveAlpha": 0, "OptNoLoadLoop": 1,
    "BufferLoad": 1, "BufferStore": 1, "DirectToVgprA": 0, "DirectToVgprB": 0,
    "DirectToVgprSparseMetadata": 0, "DirectToLds": 0, "UseInstOffsetForGRO": 0, "UseSgprForGRO": -1,
    "Use64bShadowLimit": 1, "AssertSummationElementMultiple": 1, "AssertFree0ElementMultiple": 1,
    "AssertFree1ElementMultiple": 1, "AssertAIGreaterThanEqual": -1, "AssertAILessThanEqual": -1,
    "StaggerU": 32, "StaggerUStride": 256, "StaggerUMapping": 0, "GlobalSplitUCoalesced": 0,
    "GlobalSplitUWorkGroupMappingRoundRobin": 0, "MagicDivAlg": 2, "WorkGroupMapping": 8,
    "WorkGroupMappingXCC": 1, "WorkGroupMappingXCCGroup": -1, "MaxOccupancy": 40,
    "WorkGroup": (16, 16, 1), "ThreadTile": (4, 4), "MacroTile": None, "WavefrontSize": 64,
    "MatrixInstruction": (), "StoreRemapVectorWidth": 0, "SourceSwap": 0, "StorePriorityOpt": 0,
    "NumElementsPerBatchStore": 0, "StoreSyncOpt": 0, "GroupLoadStore": 0, "MIArchVgpr": 0,
    "StreamK": 0, "StreamKAtomic": 0, "StreamKXCCMapping": 0, "DebugStreamK": 0,
    "GlobalReadVectorWidthA": -1, "GlobalReadVectorWidthB": -1, "LocalReadVectorWidth": -1,
    "VectorWidthA": -1, "VectorWidthB": -1, "VectorStore": -1, "StoreVectorWidth": -1,
    "NumLoadsCoalescedA": 1, "NumLoadsCoalescedB": 1, "DepthU": 16, "LdsPadA": -1, "LdsPadB": -1,
    "LdsPadMetadata": 0, "LdsBlockSizePerPadA": -1, "LdsBlockSizePerPadB": -1,
    "LdsBlockSizePerPadMetadata": 0, "TransposeLDS": -1, "NonTemporalE": 0, "NonTemporalD": 0,
    "NonTemporalC": 0, "NonTemporalA": 0, "NonTemporalB": 0, "NonTemporalWS": 0, "NonTemporalMetadata": 0,
    "NonTemporal": -1, "InnerUnroll": 1, "PreloadKernArgs": 1, "KernelLanguage": "Assembly", "ISA": None,
    "CustomKernelName": "", "NoReject": 0, "MinVgprNumber": 0, "MaxVgprNumber": 256,
    "TotalVgprNumber": 512, "ActivationFused": 1, "ActivationFuncCall": 1, "ActivationAlt": 0,
    "WorkGroupReduction": 0, "Sparse": 0, "ConvertAfterDS": 0, "ForceDisableShadowInit": 0,
}

# Tuning keys the runtime passes as kernel arguments: they never change code, so kernels that differ only
# in them are one kernel (upstream masks them the same way before deduplicating).
RUNTIME_ARG_KEYS: frozenset[str] = frozenset({
    "GlobalSplitU", "WorkGroupMapping", "WorkGroupMappingXCC", "WorkGroupMappingXCCGroup", "StaggerU",
    "StaggerUStride", "StaggerUMapping", "GlobalSplitUCoalesced", "GlobalSplitUWorkGroupMappingRoundRobin",
})

# Bookkeeping keys: names, indices and flags about the file itself, not the kernel.
BOOKKEEPING_KEYS: frozenset[str] = frozenset({
    "SolutionIndex", "SolutionNameMin", "KernelNameMin", "CUCount", "Valid", "AssignedDerivedParameters",
    "AssignedProblemIndependentDerivedParameters", "Kernel", "CodeObjectVersion", "NoReject", "ProblemType",
    "ISA",
})


# Content-keyed memo of key sets: the thousands of solutions of a file share a handful of key sets, so
# they share one key tuple and one lookup dict instead of carrying their own (most of the model's memory).
_SCHEMAS: dict[tuple[str, ...], tuple[tuple[str, ...], dict[str, int]]] = {}


def _schema(keys: tuple[str, ...]) -> tuple[tuple[str, ...], dict[str, int]]:
    hit = _SCHEMAS.get(keys)
    if hit is None:
        keys = tuple(sys.intern(k) for k in keys)
        hit = _SCHEMAS[keys] = (keys, {k: i for i, k in enumerate(keys)})
    return hit


def normalize(value: Any) -> Any:
    """Canonical hashable form: bools -> 0/1, lists -> tuples, dicts -> Params (sorted keys)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (list, tuple)):
        return tuple(normalize(v) for v in value)
    if isinstance(value, Mapping):
        return Params.from_mapping(value)
    if isinstance(value, str):
        return sys.intern(value.strip())
    return value


def plain(value: Any) -> Any:
    """Back to plain Python containers (lists and dicts), e.g. for YAML/JSON/msgpack."""
    if isinstance(value, Params):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [plain(v) for v in value]
    return value


class Params(Mapping[str, Any]):
    """An immutable, hashable mapping with sorted keys; equal content means equal and same hash."""

    __slots__ = ("_hash", "_index", "_keys", "_values")

    _keys: tuple[str, ...]
    _values: tuple[Any, ...]
    _index: dict[str, int]
    _hash: int

    def __init__(self, items: Mapping[str, Any] | None = None) -> None:
        keys, index = _schema(tuple(sorted(items)) if items else ())
        object.__setattr__(self, "_keys", keys)
        object.__setattr__(self, "_values", tuple(items[k] for k in keys) if items else ())
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_hash", hash((self._keys, self._values)))

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any]) -> Params:
        return cls({str(k): normalize(v) for k, v in raw.items()})

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Params is immutable; build a new one with .replace()")

    def __getitem__(self, key: str) -> Any:
        return self._values[self._index[key]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Params):
            return self._hash == other._hash and self._keys == other._keys and self._values == other._values
        return NotImplemented

    def __repr__(self) -> str:
        return f"Params({dict(zip(self._keys, self._values, strict=False))!r})"

    def __reduce__(self) -> tuple[type[Params], tuple[dict[str, Any]]]:
        return (Params, (dict(zip(self._keys, self._values, strict=False)),))

    def replace(self, **changes: Any) -> Params:
        merged = dict(zip(self._keys, self._values, strict=False))
        merged.update({k: normalize(v) for k, v in changes.items()})
        return Params(merged)

    def without(self, *keys: str) -> Params:
        return Params({k: v for k, v in zip(self._keys, self._values, strict=False) if k not in keys})
