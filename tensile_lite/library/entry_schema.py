"""What each runtime generation's solution reader requires of a `.dat` entry beyond the 2024 fields.

The runtime reads every solution with its own list of required keys (`Serialization/ContractionSolution.hpp`);
one missing key fails the whole library's load, while keys it does not read are ignored. So each record
here is the union of what the readers of its generation require, and the values come from the solution
and from the kernel as built (`KernelFacts`). Readers compared (paths below `tensilelite/`):
- 2024: ROCm/hipBLASLt @7d9fb683 (the runtime probe's code): none of the keys below.
- ROCm 7.0-7.2: ROCm/hipBLASLt @013d3956 (sizeMapping CUOccupancy, PrefetchGlobalRead, MathClocksUnrolledLoop,
  synchronizerSizePerWG, nonTemporalA/B; `taskPredicate`), and the hipBLASLt 1.2.0 development reader in
  rocm-libraries (fork Jinp800125/rocm-libraries @74359600: adds customMainLoopScheduling ... LocalSplitU and
  internalArgsSupport.useSFC). Both still read one `computeInputType`.
- rocm-libraries develop (@01942615): adds DirectToLdsA/B and reads `computeInputTypeA`/`computeInputTypeB`.
Predicates (the registries in `Serialization/ContractionPredicates.hpp` and `Serialization/Predicates.hpp`,
ROCm/hipBLASLt @d3e61ba4 and @4d642fa7 for 2025, rocm-libraries @117ce5aa and @003add59 for develop):
- WorkspaceCheck is a task predicate (no index, no value) in every 7.x reader and no longer a problem
  predicate: one left in `problemPredicate` is an unknown type there and fails the load;
- LaunchLimits is a task predicate only from the 1.2 development code on, so the 7.0-7.2 record leaves it
  out (an older reader would not know the type);
- SynchronizerSizeCheck carries six values in 7.x (the GSU last), five in 2024;
- TypesEqual carries five types (A, B, C, D, compute input) up to 7.2 and six (the compute input of A and
  of B) in develop: more than the reader's array fails the load, fewer would leave the last unmatched;
- 7.x's writer adds WorkgroupNumberCheck (index 0, [MT0, MT1, GSU]: at most 2^24 workgroups) for
  non-Stream-K kernels, and to the problem-type predicates (the master's rows and every solution's)
  DataTypeE after UseE and SwizzleTensorA/B last (false: our kernels read unswizzled operands, and without
  them a swizzled problem would match them); `Contractions.py` @012a6dcf.
The 2025 registry (ROCm/hipBLASLt @d3e61ba4) has WorkgroupNumberCheck, DataTypeE and SwizzleTensorA/B.
Selection rows (`Tensile/SolutionLibrary.py` @003add59, the runtime's `ExactLogicLibrary.hpp` @74359600):
develop's writer gives a GridBased row the predicate GridBasedMatching (2024: TruePred; the runtime tells
the row apart by it) and orders rows Equality, Range, Prediction, GridBased, FreeSize, then TruePred; the
2025 registry has no GridBasedMatching, so the 7.0-7.2 record keeps TruePred and the 2024 order (a
predicate type the reader lacks would fail the load). The DecisionTree library type is gone from the 7.x
runtime's library list, so a 7.x build leaves DecisionTree files out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import attrs

from tensile_lite.errors import TensileLiteError
from tensile_lite.interfaces import Interface
from tensile_lite.library import derived
from tensile_lite.library.predicates import Node, conjunction, pred
from tensile_lite.model.solution import Solution


@attrs.frozen(slots=True)
class KernelFacts:
    """What the built kernel itself says, for the fields the 7.x runtime's ranking model reads."""

    occupancy: int     # codeobj/resources.runtime_occupancy of its registers, LDS and threads
    math_clocks: int   # issue slots of one unrolled main-loop iteration; 0 = not known


# sizeMapping keys 7.x readers require, in the order its writer emits them, after the 2024 keys
_SIZE_KEYS_7 = (
    "CUOccupancy", "PrefetchGlobalRead", "MathClocksUnrolledLoop", "synchronizerSizePerWG", "nonTemporalA",
    "nonTemporalB", "customMainLoopScheduling", "NonTemporalD", "WaveSeparateGlobalReadA",
    "WaveSeparateGlobalReadB", "UnrollLoopSwapGlobalReadOrder", "DirectToVgprA", "DirectToVgprB",
    "NumLoadsCoalescedA", "NumLoadsCoalescedB", "WaveGroup", "VectorWidthA", "VectorWidthB", "LocalSplitU",
)
_SIZE_KEYS_DEVELOP = (*_SIZE_KEYS_7, "DirectToLdsA", "DirectToLdsB")

NO_TASK, WORKSPACE_TASK, LAUNCH_TASK = "", "workspace", "workspace+launch"


@attrs.frozen(slots=True)
class EntrySchema:
    """What one generation's readers require beyond the 2024 entry and library nodes."""

    name: str
    use_sfc: bool = False                  # internalArgsSupport.useSFC
    task_predicate: str = NO_TASK          # which task predicates `taskPredicate` may hold ("" = no key)
    size_keys: tuple[str, ...] = ()        # extra sizeMapping keys
    # problemType.computeInputTypeA/B beside computeInputType, and TypesEqual with one type for each
    compute_input_ab: bool = False
    workspace_in_problem: bool = True      # WorkspaceCheck among the problem predicates (2024)
    synchronizer_gsu: bool = False         # SynchronizerSizeCheck's value ends with the GSU
    new_problem_checks: bool = False       # WorkgroupNumberCheck, DataTypeE and SwizzleTensorA/B
    grid_based_row: str = "TruePred"       # the predicate of a GridBased selection row
    row_rank: tuple[str, ...] = ()         # selection rows in this order of predicate types ((): by name)
    decision_trees: bool = True            # the runtime has a DecisionTree library


SCHEMA_2024 = EntrySchema("2024")
_7X = EntrySchema("7.x", use_sfc=True, workspace_in_problem=False, synchronizer_gsu=True, new_problem_checks=True,
                  decision_trees=False)
SCHEMA_7_2 = attrs.evolve(_7X, name="7.2", task_predicate=WORKSPACE_TASK, size_keys=_SIZE_KEYS_7)
SCHEMA_DEVELOP = attrs.evolve(_7X, name="develop", task_predicate=LAUNCH_TASK, size_keys=_SIZE_KEYS_DEVELOP,
                              compute_input_ab=True, grid_based_row="GridBasedMatching",
                              row_rank=("EqualityMatching", "RangeMatching", "PredictionMatching",
                                        "GridBasedMatching", "FreeSizeMatching"))

SCHEMAS: Mapping[str, EntrySchema] = MappingProxyType(
    {s.name: s for s in (SCHEMA_2024, SCHEMA_7_2, SCHEMA_DEVELOP)})


def schema_of(interface: Interface) -> EntrySchema:
    found = SCHEMAS.get(interface.solution_schema)
    if found is None:  # a registry mistake, not user input
        raise TensileLiteError(f"interface {interface.name}: no solution schema {interface.solution_schema!r}")
    return found


def task_predicate(sol: Solution, schema: EntrySchema) -> Node:
    """WorkspaceCheck where the kernel needs a workspace (bytes per C element > 0), LaunchLimits (the grid
    fits 32 bits) for non-Stream-K kernels where the reader knows it; TruePred when neither applies."""
    parts = []
    if derived.workspace_bytes_per_element(sol)[0] > 0:
        parts.append(pred("WorkspaceCheck"))
    if schema.task_predicate == LAUNCH_TASK and derived.stream_k(sol) == 0:
        parts.append(pred("LaunchLimits"))
    return conjunction(parts)


def synchronizer_slots(sol: Solution) -> int:
    """Synchronizer slots (int32) one workgroup of a single-kernel split-K may use, as the 7.x runtime
    bounds its automatic GSU by: accumulator tiles per wave x stores per element batch x waves. This is
    the larger of upstream's two formulas (a value too large only turns automatic GSU off, one too small
    could let a kernel overrun the buffer)."""
    tiles = sol.mi_wave_tile[0] * sol.mi_wave_tile[1] if sol.matrix_instruction else \
        sol.thread_tile[0] * sol.thread_tile[1]
    per_thread = int(sol.tuning("NumElementsPerThread") or 1)
    per_store = int(sol.tuning("NumElementsPerBatchStore") or 0)
    batches = math.ceil(per_thread / per_store) if per_store else per_thread
    return tiles * batches * math.ceil(sol.num_threads / sol.wavefront_size)


def _int(sol: Solution, key: str, default: int = 0) -> int:
    value = sol.tuning(key)
    return default if value is None else int(value)


def size_fields(sol: Solution, facts: KernelFacts | None, schema: EntrySchema) -> dict[str, Any]:
    """The schema's extra sizeMapping fields. Without facts (a library written before its kernels are
    built, or a custom kernel we did not read) occupancy and clocks are 0: the runtime counts that as
    'unknown' (it clamps occupancy to 1)."""
    if not schema.size_keys:
        return {}
    values: Mapping[str, Any] = {
        "CUOccupancy": facts.occupancy if facts else 0,
        "PrefetchGlobalRead": int(sol.prefetch_global_read),
        "MathClocksUnrolledLoop": facts.math_clocks if facts else 0,
        "synchronizerSizePerWG": synchronizer_slots(sol),
        "nonTemporalA": _int(sol, "NonTemporalA"),
        "nonTemporalB": _int(sol, "NonTemporalB"),
        "customMainLoopScheduling": max(0, _int(sol, "UseCustomMainLoopSchedule")),
        "NonTemporalD": _int(sol, "NonTemporalD"),
        "WaveSeparateGlobalReadA": _int(sol, "WaveSeparateGlobalReadA"),
        "WaveSeparateGlobalReadB": _int(sol, "WaveSeparateGlobalReadB"),
        "UnrollLoopSwapGlobalReadOrder": _int(sol, "UnrollLoopSwapGlobalReadOrder"),
        "DirectToVgprA": bool(sol.tuning("DirectToVgprA")),
        "DirectToVgprB": bool(sol.tuning("DirectToVgprB")),
        "NumLoadsCoalescedA": _int(sol, "NumLoadsCoalescedA", 1),
        "NumLoadsCoalescedB": _int(sol, "NumLoadsCoalescedB", 1),
        "WaveGroup": list(sol.mi_wave_group),
        "VectorWidthA": sol.vector_width_a,
        "VectorWidthB": sol.vector_width_b,
        "LocalSplitU": _int(sol, "LocalSplitU", 1),
        "DirectToLdsA": bool(sol.params.get("DirectToLdsA", sol.tuning("DirectToLds"))),
        "DirectToLdsB": bool(sol.params.get("DirectToLdsB", sol.tuning("DirectToLds"))),
    }
    return {k: values[k] for k in schema.size_keys}
