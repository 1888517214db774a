"""A solution as the runtime sees it: rebuilt from its `.dat` entry, not from the logic file.

The hipBLASLt runtime packs kernel arguments and sizes the grid from the `.dat` entry alone
(`problemType`, `sizeMapping`, `internalArgsSupport`). Rebuilding a model `ProblemType` and `Solution`
from exactly those fields lets the verifier drive kernels through the host's packer
(`tensile_lite.host`) while checking what a library really tells the runtime. Only the
runtime-visible fields are meaningful in the result; tuning parameters the entry does not carry keep
their defaults and must not be relied on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs

from tensile_lite.asm.gemm.support import runtime_overrides_read
from tensile_lite.errors import TensileLiteError
from tensile_lite.library.solution_entry import solution_entry
from tensile_lite.model import DataType, Params, ProblemType, Solution
from tensile_lite.verify.errors import DamagedEntry, NotVerifiable

_OPERATION = re.compile(r"^Contraction_([a-z]+)_A([a-z]+)_B([a-z]+)_C([a-z]+)_D([a-z]+)$")
_INDEX_BASE = ord("i")
_BIAS_SOURCES = ("A", "B", "C", "D")  # biasSrcWhiteList numbers them in this order
MULTIPLE_BUFFER = 2  # sizeMapping.globalAccumulation of split-K reduced by the runtime's conversion kernel
MULTIPLE_BUFFER_SINGLE_KERNEL = 3  # ... and of in-kernel split-K


@attrs.frozen(slots=True)
class RuntimeSolution:
    problem_type: ProblemType
    solution: Solution
    internal_support: Mapping[str, Any] = attrs.field(hash=False, eq=False)
    size_mapping: Mapping[str, Any] = attrs.field(hash=False, eq=False)  # as the entry has it
    # the runtime sends a single-kernel split-K call D's and C's own strides (ROCm 7.x, whose entries
    # carry taskPredicate) instead of packed ones (2024)
    own_split_strides: bool = False

    @property
    def global_accumulation(self) -> int:
        return int(self.size_mapping.get("globalAccumulation", 0))

    @property
    def stream_k(self) -> int:
        return int(self.size_mapping.get("streamK", 0))

    @property
    def split_k(self) -> bool:
        """The kernel reduces its split-K slices itself (MultipleBufferSingleKernel): the runtime sends
        it the split-K arguments (dstD, Synchronizer, GSUSync) whatever the GSU."""
        return self.global_accumulation == MULTIPLE_BUFFER_SINGLE_KERNEL and not self.stream_k

    @property
    def multiple_buffer(self) -> bool:
        """A call with GSU > 1 leaves GSU f32 slices in the workspace and the runtime's conversion
        kernel (MultipleBuffer) sums them and runs the epilogue; with GSU 1 the kernel is a plain one."""
        return self.global_accumulation == MULTIPLE_BUFFER and not self.stream_k


def _get(entry: Mapping[str, Any], key: str, field: str) -> Any:
    table = entry.get(key)
    if not isinstance(table, Mapping) or field not in table:
        raise DamagedEntry(f"the .dat entry has no {key}.{field}")
    return table[field]


def _indices(chars: str) -> list[int]:
    return [ord(c) - _INDEX_BASE for c in chars]


def _parse(value: Any, field: str) -> DataType:
    try:
        return DataType.parse(value, field)
    except TensileLiteError:
        raise NotVerifiable(f"problemType.{field} {value!r} is not a data type the verifier knows") from None


def _dtype(entry: Mapping[str, Any], field: str) -> DataType:
    return _parse(_get(entry, "problemType", field), field)


def problem_type(entry: Mapping[str, Any]) -> ProblemType:
    """The entry's problem type as a model ProblemType (index layout from `operationIdentifier`)."""
    op = str(_get(entry, "problemType", "operationIdentifier"))
    m = _OPERATION.match(op)
    if m is None:
        raise NotVerifiable(f"operation {op!r} is not a contraction the verifier understands")
    summ, a, b, c, d = m.groups()
    if c != d:
        raise NotVerifiable(f"operation {op}: C and D index orders differ")
    pt = entry["problemType"]
    activation = str(pt.get("activationType", "None"))
    raw: dict[str, Any] = {
        "OperationType": "GEMM",
        "DataType": _dtype(entry, "computeInputType").value,
        "DataTypeA": _dtype(entry, "aType").value,
        "DataTypeB": _dtype(entry, "bType").value,
        "DestDataType": _dtype(entry, "dType").value,
        "ComputeDataType": _dtype(entry, "computeType").value,
        "HighPrecisionAccumulate": bool(pt.get("highPrecisionAccumulate", False)),
        "TransposeA": bool(pt.get("transA", False)), "TransposeB": bool(pt.get("transB", False)),
        "IndexAssignmentsA": _indices(a), "IndexAssignmentsB": _indices(b), "NumIndicesC": len(c),
        "IndicesSummation": _indices(summ),
        "UseBeta": bool(pt.get("useBeta", True)),
        "UseBias": int(pt.get("useBias", 0)), "UseE": bool(pt.get("useE", False)),
        "Gradient": bool(pt.get("useGradient", False)),
        "UseScaleAB": str(pt.get("useScaleAB", "") or ""), "UseScaleCD": bool(pt.get("useScaleCD", False)),
        "UseScaleAlphaVec": int(pt.get("useScaleAlphaVec", 0)),
        "ActivationType": "none" if activation.lower() == "none" else activation.lower(),
        "UseInitialStridesAB": bool(pt.get("useInitialStridesAB", False)),
        "UseInitialStridesCD": bool(pt.get("useInitialStridesCD", False)),
        "StridedBatched": bool(pt.get("stridedBatched", True)), "GroupedGemm": bool(pt.get("groupedGemm", False)),
        "Sparse": int(pt.get("sparse", 0)), "OutputAmaxD": bool(pt.get("outputAmaxD", False)),
        "SupportUserArgs": bool(pt.get("supportDeviceUserArguments", False)),
    }
    if raw["ActivationType"] != "none":
        raw["Activation"] = True  # the entry's activation is already the effective one
    if "f32XdlMathOp" in pt:
        raw["F32XdlMathOp"] = _dtype(entry, "f32XdlMathOp").value
    for field, key in (("eType", "DataTypeE"), ("activationComputeDataType", "ActivationComputeDataType")):
        if field in pt:
            raw[key] = _dtype(entry, field).value
    if raw["UseBias"]:
        raw["BiasDataTypeList"] = [_parse(t, "biasDataTypeWhiteList").value
                                   for t in pt.get("biasDataTypeWhiteList") or ()]
        sources = pt.get("biasSrcWhiteList") or [3]
        raw["BiasSrc"] = _BIAS_SOURCES[int(sources[0])] if 0 <= int(sources[0]) < len(_BIAS_SOURCES) else "D"
    raw["ActivationNoGuard"] = bool(pt.get("activationNoGuard", False))
    try:
        return ProblemType.from_params(Params.from_mapping(raw))
    except TensileLiteError as exc:
        raise DamagedEntry(f"problem type of the .dat entry is inconsistent: {exc.one_line()}") from None


def _wave_split(mt: tuple[int, int], mi: tuple[int, int], waves: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """A (wave tile, wave group) pair giving macro tile `mt` with `waves` waves. The entry only carries
    the macro tile; any split with the same product packs the same arguments."""
    tiles0, tiles1 = mt[0] // mi[0], mt[1] // mi[1]
    for g0 in range(1, waves + 1):
        g1 = waves // g0
        if g0 * g1 == waves and tiles0 % g0 == 0 and tiles1 % g1 == 0 and mt[0] % mi[0] == 0 \
                and mt[1] % mi[1] == 0:
            return (tiles0 // g0, tiles1 // g1), (g0, g1)
    raise NotVerifiable(f"macro tile {mt[0]}x{mt[1]} does not split into {waves} waves of "
                        f"{mi[0]}x{mi[1]} instructions")


def runtime_solution(entry: Mapping[str, Any], arch: str) -> RuntimeSolution:
    """ProblemType and Solution from a `.dat` solution entry; NotVerifiable when it cannot be rebuilt."""
    pt = problem_type(entry)
    sm = entry.get("sizeMapping")
    if not isinstance(sm, Mapping):
        raise DamagedEntry("the .dat entry has no sizeMapping")
    workgroup = [int(v) for v in _get(entry, "sizeMapping", "workGroup")]
    macro = [int(v) for v in _get(entry, "sizeMapping", "macroTile")][:2]
    waves = int(_get(entry, "sizeMapping", "waveNum"))
    threads = workgroup[0] * workgroup[1] * workgroup[2]
    if waves <= 0 or threads % waves:
        raise DamagedEntry(f"workGroup {workgroup} is not {waves} whole waves")
    depth_u = int(_get(entry, "sizeMapping", "depthU"))
    mi = [int(v) for v in sm.get("matrixInstruction") or []]
    raw: dict[str, Any] = {
        "KernelLanguage": "Source" if sm.get("sourceKernel") else "Assembly",
        "WorkGroup": workgroup, "ThreadTile": [int(v) for v in sm.get("threadTile", (1, 1))],
        "DepthU": depth_u, "WavefrontSize": threads // waves,
        "SolutionIndex": int(entry.get("index", 0)), "SolutionNameMin": str(entry.get("name", "")),
        "GlobalSplitU": int(sm.get("globalSplitU", 1)),
        # the runtime appends the split-K arguments by globalAccumulation alone
        "GlobalSplitUAlgorithm": "MultipleBufferSingleKernel"
        if int(sm.get("globalAccumulation", 0)) == MULTIPLE_BUFFER_SINGLE_KERNEL else "MultipleBuffer",
        "WorkGroupMapping": int(sm.get("workGroupMapping", 1)),
        "WorkGroupMappingXCC": int(sm.get("workGroupMappingXCC", 1)),
        "WorkGroupMappingXCCGroup": int(sm.get("workGroupMappingXCCGroup", -1)),
        "StaggerU": int(sm.get("staggerU", 0)), "StaggerUMapping": int(sm.get("staggerUMapping", 0)),
        # the entry carries the shift the stride gives; this stride gives the same shift back
        "StaggerUStride": depth_u * pt.data_type.num_bytes << int(sm.get("staggerStrideShift", 0)),
        "GlobalSplitUCoalesced": bool(sm.get("globalSplitUCoalesced", False)),
        "GlobalSplitUWorkGroupMappingRoundRobin": bool(sm.get("globalSplitUWorkGroupMappingRoundRobin", False)),
        "MatrixInstruction": mi[:4],
        "ActivationFused": bool(sm.get("activationFused", True)),
    }
    if mi:
        if len(mi) < 4:
            raise DamagedEntry(f"matrixInstruction {mi} has no block count")
        # the .dat has no MIBlock: a multi-block instruction is read with its blocks along M, the one
        # layout the writer builds (asm/gemm/plan.MULTI_BLOCK_ALONG_M); the argument words do not depend on it
        raw["MIWaveTile"], raw["MIWaveGroup"] = _wave_split((macro[0], macro[1]), (mi[0] * mi[3], mi[1]),
                                                            waves // max(workgroup[2], 1))
    try:
        sol = Solution.from_params(pt, Params.from_mapping(raw), arch, int(entry.get("index", 0)))
    except TensileLiteError as exc:
        raise DamagedEntry(f"size mapping of the .dat entry is inconsistent: {exc.one_line()}") from None
    if list(sol.macro_tile) != macro:
        raise DamagedEntry(f"macroTile {macro} does not follow from workGroup {workgroup} and threadTile")
    support = entry.get("internalArgsSupport")
    return RuntimeSolution(pt, sol, dict(support) if isinstance(support, Mapping) else {}, dict(sm),
                           own_split_strides="taskPredicate" in entry)


def from_model(sol: Solution) -> RuntimeSolution:
    """The runtime's view of a model solution, through the `.dat` entry the library would write for it
    (so a test of a single kernel sees exactly what a library would tell the runtime, the overrides the
    built kernel honours included)."""
    entry = solution_entry(sol, index=sol.index, kernel_name=sol.name or "kernel", name=sol.name or "kernel",
                           arch=sol.arch, cu_count=None, honoured=runtime_overrides_read)
    return runtime_solution(entry, sol.arch)
