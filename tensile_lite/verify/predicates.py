"""Does a problem satisfy a solution's `problemPredicate`? Only problems the runtime could send a kernel
are fair tests of it.

Size predicates are evaluated as the runtime does (free sizes M, N; batch; bound size K). Predicates
that only steer selection or depend on the device and the call's workspace (types, arithmetic
intensity, buffer-offset limits that only huge problems reach, CU efficiency, ...) cannot make a
kernel compute wrong results on our small problems and count as true. A predicate type not listed here
is reported back by name, so the caller can say it was not evaluated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from tensile_lite.host import GemmProblem
from tensile_lite.model import ProblemType


@attrs.frozen(slots=True)
class Call:
    """What the predicates look at: one problem and its scalars."""

    problem_type: ProblemType
    problem: GemmProblem
    beta: float
    gsu: int = 1
    # the CU count of the device the verifier stands for (the runtime's for a WGMXCCG of -1)
    cu_count: int = 0

    @property
    def sizes(self) -> tuple[int, ...]:
        """problemSizes() order: free indices, batch, then the bound index."""
        p = self.problem
        free = (p.m, p.n, p.batch) if self.problem_type.num_indices_c == 3 else (p.m, p.n)
        return (*free, p.k)


def _value(node: Mapping[str, Any]) -> Any:
    return node.get("value")


def _multiple(size: int, node: Mapping[str, Any]) -> bool:
    value = int(_value(node))
    return value <= 0 or size % value == 0


def _gsu_min_k(c: Call, node: Mapping[str, Any]) -> bool:
    min_k, gsu = (int(v) for v in _value(node))
    gsu = c.gsu or gsu
    return c.problem.k >= (0 if gsu == 1 else gsu * min_k)


def _xcc(c: Call, node: Mapping[str, Any]) -> bool:
    """WorkgroupMappingXCCCheck [WGMXCC, WGMXCCG]: WGMXCC a power of two dividing WGMXCCG (the device's
    CU count when -1; hipBLASLt's ContractionProblemPredicates.hpp). A solution that fails it is never
    selected: its kernel would deal the workgroups out to the XCDs with a remap that is no bijection."""
    xcc, group = (int(v) for v in _value(node))
    if group == -1:
        group = c.cu_count
    return xcc > 0 and xcc & (xcc - 1) == 0 and group % xcc == 0


_SIZE: dict[str, Callable[[Call, Mapping[str, Any]], bool]] = {
    "Free0SizeMultiple": lambda c, n: _multiple(c.problem.m, n),
    "Free1SizeMultiple": lambda c, n: _multiple(c.problem.n, n),
    "BatchSizeMultiple": lambda c, n: _multiple(c.problem.batch, n),
    "BatchSizeEqual": lambda c, n: c.problem.batch == int(_value(n)),
    "BoundSizeMultiple": lambda c, n: _multiple(c.problem.k, n),
    "ProblemSizeEqual": lambda c, n: c.sizes[int(n.get("index", 0))] == int(_value(n)),
    "MaxProblemSizeGreaterThan": lambda c, n: max(c.sizes) > int(_value(n)),
    "LeadingFree0SizesGreaterOrEqual": lambda c, n: c.problem.m >= int(_value(n)),
    "LeadingFree1SizesGreaterOrEqual": lambda c, n: c.problem.n >= int(_value(n)),
    "GlobalSplitUCheckMinK": _gsu_min_k,
    "BetaZero": lambda c, n: c.beta == 0.0,
    "CDStridesEqual": lambda c, n: c.problem.tensor_strides(c.problem_type, "C")
    == c.problem.tensor_strides(c.problem_type, "D"),
    "WorkgroupMappingXCCCheck": _xcc,
}

# Selection, device or workspace predicates: never a reason for wrong results on a small problem.
SELECTION_ONLY: frozenset[str] = frozenset({
    "TruePred", "OperationIdentifierEqual", "TypesEqual", "HighPrecisionAccumulate", "Activation",
    "ActivationComputeType", "ActivationNoGuard", "ActivationEnumWhiteList", "UseGradient", "UseBias", "UseE",
    "StridedBatched", "GroupedGemm", "UseScaleAB", "UseScaleCD", "UseScaleAlphaVec", "Sparse", "F32XdlMathOp",
    "SupportDeviceUserArguments", "BiasDataTypeWhiteList", "BiasSrcWhiteList", "AmaxDCheck",
    "KernelLanguageCompatible", "DeterministicMode", "WorkspaceCheck", "BufferLoadOffsetLimitCheck",
    "BufferLoadOffsetLimitCheck_Beta", "BufferStoreOffsetLimitCheck",
    "SynchronizerSizeCheck", "AIGreaterThanEqual", "AILessThanEqual", "CUEfficiency", "Experimental",
    "EqualityMatching", "FreeSizeMatching", "PersistentKernelCheck", "AMDGPU", "Processor", "CUCount",
    # ROCm 7.x's additions: type and layout checks our problems pass, a workgroup-count limit only huge
    # problems reach, the task predicates, and row tags
    "DataTypeE", "SwizzleTensorA", "SwizzleTensorB", "WorkgroupNumberCheck", "LaunchLimits",
    "GridBasedMatching", "RangeMatching", "PredictionMatching",
})


def evaluate(node: Any, call: Call, unknown: set[str]) -> bool:
    """The predicate tree's value for `call`; names of predicate types it could not judge go to `unknown`."""
    if not isinstance(node, Mapping):
        return True
    kind = str(node.get("type"))
    if kind == "And":
        return all([evaluate(v, call, unknown) for v in _value(node) or ()])
    if kind == "Or":
        return any([evaluate(v, call, unknown) for v in _value(node) or ()])
    if kind == "Not":
        return not evaluate(_value(node), call, unknown)
    check = _SIZE.get(kind)
    if check is not None:
        return bool(check(call, node))
    if kind not in SELECTION_ONLY:
        unknown.add(kind)
    return True


def failing(node: Any, call: Call) -> list[str]:
    """Names of the size predicates (directly under the top-level And) that `call` does not satisfy."""
    parts = _value(node) if isinstance(node, Mapping) and node.get("type") == "And" else [node]
    return [str(p.get("type")) for p in parts or () if isinstance(p, Mapping) and not evaluate(p, call, set())]


def _top(node: Any, kind: str) -> Mapping[str, Any] | None:
    parts = _value(node) if isinstance(node, Mapping) and node.get("type") == "And" else [node]
    return next((p for p in parts or () if isinstance(p, Mapping) and p.get("type") == kind), None)


def value_of(node: Any, kind: str) -> Any:
    """The value of the first top-level predicate of type `kind` (None when absent)."""
    found = _top(node, kind)
    return None if found is None else _value(found)


def present(node: Any, kind: str) -> bool:
    """Whether a top-level predicate of type `kind` exists (for those without a value)."""
    return _top(node, kind) is not None
