"""Every solution entry carries what the runtime it is written for requires (entry_schema.py).

The key lists below are the `mapRequired` keys of each generation's solution reader
(`tensilelite/include/Tensile/Serialization/ContractionSolution.hpp`), and the predicate names and array
lengths its predicate registries accept (`Serialization/ContractionPredicates.hpp`, `Predicates.hpp`): a
missing key, an unknown predicate type or an array longer than the reader's fails the whole library's load
on a 7.x machine, which no test here can run. Readers: ROCm/hipBLASLt @013d3956 (7.0-era), the hipBLASLt
1.2.0 development reader (Jinp800125/rocm-libraries @74359600), rocm-libraries develop @01942615.
Metadata only: the dev set and the 7.x sample planned and written for each interface, no kernels.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tensile_lite.interfaces import HIPBLASLT_2024, INTERFACES, ROCM_7_2, ROCM_DEVELOP
from tensile_lite.library import build_plan, read_dat, write_library
from tensile_lite.library.entry_schema import (
    SCHEMA_7_2,
    KernelFacts,
    schema_of,
    size_fields,
    synchronizer_slots,
)
from tensile_lite.logic import read_logic_file
from tensile_lite.model import LogicFile
from tests.shared import dev_logic_files, logic7_files

_SIZE_2024 = {
    "waveNum", "workGroup", "threadTile", "macroTile", "matrixInstruction", "grvwA", "grvwB", "gwvwC", "gwvwD",
    "staggerU", "staggerUMapping", "depthU", "globalSplitUPGR", "globalSplitU", "staggerStrideShift",
    "workGroupMapping", "sourceKernel", "globalAccumulation", "workspaceSizePerElemC", "workspaceSizePerElemBias",
    "workGroupMappingXCC", "workGroupMappingXCCGroup", "globalSplitUCoalesced",
    "globalSplitUWorkGroupMappingRoundRobin",
}
_SIZE_7_0 = _SIZE_2024 | {"CUOccupancy", "PrefetchGlobalRead", "MathClocksUnrolledLoop", "synchronizerSizePerWG",
                          "nonTemporalA", "nonTemporalB"}
_SIZE_1_2 = _SIZE_7_0 | {"customMainLoopScheduling", "NonTemporalD", "WaveSeparateGlobalReadA",
                         "WaveSeparateGlobalReadB", "UnrollLoopSwapGlobalReadOrder", "DirectToVgprA",
                         "DirectToVgprB", "NumLoadsCoalescedA", "NumLoadsCoalescedB", "WaveGroup",
                         "VectorWidthA", "VectorWidthB", "LocalSplitU"}
_SIZE_DEVELOP = _SIZE_1_2 | {"DirectToLdsA", "DirectToLdsB"}
_ENTRY_7 = {"name", "kernelName", "index", "hardwarePredicate", "problemPredicate", "taskPredicate", "debugKernel",
            "sizeMapping", "internalArgsSupport", "problemType"}
_SUPPORT_7 = {"version", "gsu", "wgm", "staggerU", "useUniversalArgs", "useSFC"}
_PROBLEM_7 = {"operationIdentifier", "transA", "transB", "aType", "bType", "cType", "dType", "computeType",
              "useBeta", "highPrecisionAccumulate"}
# interface -> (entry keys, sizeMapping keys, internalArgsSupport keys, problemType keys) its readers require
REQUIRED = {
    ROCM_7_2: (_ENTRY_7, _SIZE_1_2, _SUPPORT_7, _PROBLEM_7 | {"computeInputType"}),
    ROCM_DEVELOP: (_ENTRY_7, _SIZE_DEVELOP, _SUPPORT_7, _PROBLEM_7 | {"computeInputTypeA", "computeInputTypeB"}),
}
# the readers' value types where bool and int differ (the msgpack reader converts strictly)
_BOOL_KEYS = {"DirectToVgprA", "DirectToVgprB", "DirectToLdsA", "DirectToLdsB"}
# problem predicates 7.x's registry knows, of those a writer emits for ordinary solutions
_PROBLEM_PREDICATES_7 = {
    "Free0SizeMultiple", "Free1SizeMultiple", "BatchSizeEqual", "BoundSizeMultiple",
    "LeadingFree0SizesGreaterOrEqual", "LeadingFree1SizesGreaterOrEqual", "AIGreaterThanEqual", "AILessThanEqual",
    "OperationIdentifierEqual", "BiasDataTypeWhiteList", "BiasSrcWhiteList", "ActivationEnumWhiteList",
    "HighPrecisionAccumulate", "DeterministicMode", "KernelLanguageCompatible", "Activation",
    "ActivationComputeType", "ActivationNoGuard", "UseGradient", "UseBias", "UseE", "StridedBatched", "GroupedGemm",
    "UseScaleAB", "UseScaleCD", "UseScaleAlphaVec", "Sparse", "F32XdlMathOp", "SupportDeviceUserArguments",
    "BufferLoadOffsetLimitCheck", "BufferLoadOffsetLimitCheck_Beta", "BufferStoreOffsetLimitCheck",
    "GlobalSplitUCheckMinK", "WorkgroupMappingXCCCheck", "BetaZero", "CDStridesEqual", "AmaxDCheck",
    "SynchronizerSizeCheck", "TypesEqual", "WorkgroupNumberCheck", "SwizzleTensorA", "SwizzleTensorB",
    "DataTypeE", "TruePred", "And",
}
_TASK_PREDICATES = {ROCM_7_2: {"WorkspaceCheck", "TruePred", "And"},
                    ROCM_DEVELOP: {"WorkspaceCheck", "LaunchLimits", "TruePred", "And"}}
# predicate -> length of the reader's fixed array (None: any list)
_ARRAY = {ROCM_7_2: {"TypesEqual": 5, "SynchronizerSizeCheck": 6, "GlobalSplitUCheckMinK": 2,
                     "WorkgroupMappingXCCCheck": 2, "WorkgroupNumberCheck": 3},
          ROCM_DEVELOP: {"TypesEqual": 6, "SynchronizerSizeCheck": 6, "GlobalSplitUCheckMinK": 2,
                         "WorkgroupMappingXCCCheck": 2, "WorkgroupNumberCheck": 3}}


@pytest.fixture(scope="module")
def logic() -> list[LogicFile]:
    """The dev set's gfx942 and gfx90a files (split-K, single-kernel split-K, custom kernels) and the 7.x
    sample's files of those architectures."""
    files = [read_logic_file(p) for p in dev_logic_files() + logic7_files()]
    return [lf for lf in files if lf.arch in ("gfx90a", "gfx942")]


def _entries(logic: list[LogicFile], name: str, tmp: Path) -> list[dict[str, Any]]:
    interface = INTERFACES[name]
    plan = build_plan(logic, archs=["gfx90a", "gfx942"], interface=interface)
    library = tmp / name
    write_library(plan, library, "msgpack")
    out = []
    for path in sorted(library.rglob("*.dat")):
        if "Mapping" not in path.name:
            out += read_dat(path).get("solutions", [])
    assert len(out) > 1000
    return out


def _leaves(node: dict[str, Any]) -> list[dict[str, Any]]:
    if node["type"] == "And":
        return [leaf for child in node["value"] for leaf in _leaves(child)]
    return [node]


@pytest.mark.parametrize("name", [ROCM_7_2, ROCM_DEVELOP])
def test_entries_carry_every_key_the_readers_require(logic: list[LogicFile], name: str, tmp_path: Path) -> None:
    entry_keys, size_keys, support_keys, problem_keys = REQUIRED[name]
    for e in _entries(logic, name, tmp_path):
        where = e["name"]
        assert entry_keys <= set(e), (where, entry_keys - set(e))
        assert size_keys <= set(e["sizeMapping"]), (where, size_keys - set(e["sizeMapping"]))
        assert support_keys <= set(e["internalArgsSupport"]), where
        assert problem_keys <= set(e["problemType"]), (where, problem_keys - set(e["problemType"]))
        sm = e["sizeMapping"]
        for key in size_keys - _SIZE_2024:
            want = bool if key in _BOOL_KEYS else (list if key == "WaveGroup" else int)
            assert type(sm[key]) is want, (where, key, sm[key])
        assert len(sm["WaveGroup"]) == 2
        assert sm["PrefetchGlobalRead"] in (0, 1, 2) and sm["synchronizerSizePerWG"] >= 1


@pytest.mark.parametrize("name", [ROCM_7_2, ROCM_DEVELOP])
def test_predicates_are_ones_the_7x_registries_know_in_their_shapes(logic: list[LogicFile], name: str,
                                                                     tmp_path: Path) -> None:
    workspace = 0
    for e in _entries(logic, name, tmp_path):
        problem = _leaves(e["problemPredicate"])
        assert {p["type"] for p in problem} <= _PROBLEM_PREDICATES_7, e["name"]
        for p in problem:
            length = _ARRAY[name].get(p["type"])
            if length is not None:
                assert len(p["value"]) == length, (e["name"], p)
        task = _leaves(e["taskPredicate"])
        assert {p["type"] for p in task} <= _TASK_PREDICATES[name]
        assert all(set(p) == {"type"} for p in task)  # no index, no value
        # the workspace is checked where the kernel has one, as a task predicate
        has_check = any(p["type"] == "WorkspaceCheck" for p in task)
        assert has_check == (e["sizeMapping"]["workspaceSizePerElemC"] > 0)
        workspace += has_check
        if name == ROCM_DEVELOP:
            assert any(p["type"] == "LaunchLimits" for p in task) == (e["sizeMapping"]["streamK"] == 0)
            types = next(p["value"] for p in problem if p["type"] == "TypesEqual")
            assert types[4:] == [e["problemType"]["computeInputTypeA"], e["problemType"]["computeInputTypeB"]]
    assert workspace > 0


def test_the_2024_entries_are_as_before(logic: list[LogicFile], tmp_path: Path) -> None:
    for e in _entries(logic, HIPBLASLT_2024, tmp_path):
        assert "taskPredicate" not in e
        assert set(e["sizeMapping"]) <= _SIZE_2024 | {"packBatchDims", "magicDivAlg", "streamK", "streamKAtomic",
                                                      "activationFused", "CustomKernelName"}
        assert "useSFC" not in e["internalArgsSupport"]
        leaves = _leaves(e["problemPredicate"])
        assert not {"WorkgroupNumberCheck", "SwizzleTensorA", "SwizzleTensorB"} & {p["type"] for p in leaves}
        sync = [p for p in leaves if p["type"] == "SynchronizerSizeCheck"]
        assert all(len(p["value"]) == 5 for p in sync)


def test_interfaces_name_their_schemas() -> None:
    assert schema_of(INTERFACES[ROCM_7_2]) is SCHEMA_7_2
    assert {schema_of(i).name for i in INTERFACES.values()} == {"2024", "7.2", "develop"}


def test_post_build_fields_come_from_the_kernel_facts(logic: list[LogicFile]) -> None:
    sol = next(s for lf in logic for s in lf.solutions if s.matrix_instruction and not s.is_custom)
    built = size_fields(sol, KernelFacts(occupancy=3, math_clocks=120), SCHEMA_7_2)
    assert (built["CUOccupancy"], built["MathClocksUnrolledLoop"]) == (3, 120)
    unknown = size_fields(sol, None, SCHEMA_7_2)
    assert (unknown["CUOccupancy"], unknown["MathClocksUnrolledLoop"]) == (0, 0)
    assert list(built) == list(SCHEMA_7_2.size_keys)


def test_synchronizer_slots_count_tiles_batches_and_waves(logic: list[LogicFile]) -> None:
    import attrs

    sol = next(s for lf in logic for s in lf.solutions if s.matrix_instruction and s.num_waves == 4)
    tiles = sol.mi_wave_tile[0] * sol.mi_wave_tile[1]
    one_batch = attrs.evolve(sol, params={**sol.params, "NumElementsPerThread": 8, "NumElementsPerBatchStore": 8})
    assert synchronizer_slots(one_batch) == tiles * 4
    batched = attrs.evolve(sol, params={**sol.params, "NumElementsPerThread": 8, "NumElementsPerBatchStore": 3})
    assert synchronizer_slots(batched) == tiles * 3 * 4
    unbatched = attrs.evolve(sol, params={**sol.params, "NumElementsPerThread": 8, "NumElementsPerBatchStore": 0})
    assert synchronizer_slots(unbatched) == tiles * 8 * 4


def _documents(logic: list[LogicFile], name: str, tmp: Path) -> list[tuple[str, dict[str, Any]]]:
    plan = build_plan(logic, archs=["gfx90a", "gfx942"], interface=INTERFACES[name])
    library = tmp / f"docs-{name}"
    write_library(plan, library, "msgpack")
    return [(p.name, read_dat(p)) for p in sorted(library.rglob("*.dat")) if "Mapping" not in p.name]


@pytest.mark.parametrize("name, grid_row", [(HIPBLASLT_2024, "TruePred"), (ROCM_7_2, "TruePred"),
                                            (ROCM_DEVELOP, "GridBasedMatching")])
def test_selection_rows_as_each_reader_orders_and_tells_them_apart(logic: list[LogicFile], name: str,
                                                                   grid_row: str, tmp_path: Path) -> None:
    """develop tells a GridBased row by GridBasedMatching and orders rows by kind; 7.0-7.2's registry has
    no such predicate, so its rows stay as in 2024."""
    rank = ["EqualityMatching", "RangeMatching", "PredictionMatching", "GridBasedMatching", "FreeSizeMatching",
            "TruePred"]
    grid = 0
    for _, doc in _documents(logic, name, tmp_path):
        if not doc["solutions"]:
            continue  # a master
        rows = doc["library"]["rows"]
        for row in rows:
            if row["library"].get("distance") == "GridBased":
                assert row["predicate"] == {"type": grid_row}
                grid += 1
        kinds = [row["predicate"]["type"] for row in rows]
        if name == ROCM_DEVELOP:
            assert kinds == sorted(kinds, key=rank.index)
    assert grid > 0


@pytest.mark.parametrize("name", sorted(INTERFACES))
def test_master_rows_carry_the_problem_type_checks_of_their_reader(logic: list[LogicFile], name: str,
                                                                   tmp_path: Path) -> None:
    """7.x's problem-type predicates add DataTypeE and SwizzleTensorA/B (without them a swizzled problem
    would match our unswizzled kernels); the 2024 registry does not know them."""
    masters = [doc for file, doc in _documents(logic, name, tmp_path) if file.startswith("TensileLibrary_lazy_")]
    assert masters
    for doc in masters:
        for hw in doc["library"]["rows"]:
            for op in hw["library"]["map"].values():
                for perf in op["rows"]:
                    for row in perf["library"]["rows"]:
                        kinds = [p["type"] for p in _leaves(row["predicate"])]
                        new = [k for k in kinds if k in ("DataTypeE", "SwizzleTensorA", "SwizzleTensorB")]
                        if name == HIPBLASLT_2024:
                            assert new == []
                        else:
                            assert new == ["DataTypeE", "SwizzleTensorA", "SwizzleTensorB"]
                            assert kinds.index("DataTypeE") == kinds.index("UseE") + 1
