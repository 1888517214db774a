"""The library plan: grouping, indices, kernels, the `supported` filter, merging rules and odd inputs."""

from __future__ import annotations

import attrs
import pytest

from tensile_lite.errors import LogicError
from tensile_lite.library import (
    LibraryPlan,
    build_plan,
    kernel_name_for,
    master_document,
    placeholder_document,
)
from tensile_lite.library.naming import is_symbol
from tensile_lite.model import LogicFile, Params, kernel_key


def _by_name(files: list[LogicFile], fragment: str) -> LogicFile:
    (hit,) = [lf for lf in files if fragment in lf.path]
    return hit


def _table_indices(doc: dict) -> set[int]:
    return {e["index"] for row in doc["library"]["rows"] for e in row["library"].get("table", ())}


def test_kernel_names_are_symbols_and_one_to_one_with_keys(dev_plan: LibraryPlan):
    for ap in dev_plan.archs:
        keys = {}
        for ph in ap.placeholders:
            for s in ph.solutions:
                assert is_symbol(s.kernel_name)
                assert s.kernel_key == kernel_key(s.solution)
                assert keys.setdefault(s.kernel_name, s.kernel_key) == s.kernel_key
                assert ap.kernels[s.kernel_name].key == s.kernel_key
                assert ph.name in ap.kernels[s.kernel_name].placeholders
            assert set(ph.kernel_names) == {s.kernel_name for s in ph.solutions}
        assert len(set(keys.values())) == len(keys) == len(ap.kernels)


def test_custom_kernels_keep_their_symbol(dev_plan: LibraryPlan):
    customs = [s for ap in dev_plan.archs for ph in ap.placeholders for s in ph.solutions
               if s.solution.custom_kernel_name]
    assert customs
    assert all(s.kernel_name == s.solution.custom_kernel_name for s in customs)


def test_kernel_entry_points_at_its_lowest_indexed_solution(dev_plan: LibraryPlan):
    ap = dev_plan.arch("gfx942")
    for name, entry in ap.kernels.items():
        users = [s for ph in ap.placeholders for s in ph.solutions if s.kernel_name == name]
        assert entry.solution is min(users, key=lambda s: s.index).solution


def test_supported_filter_removes_solutions_everywhere(dev_files: list[LogicFile]):
    gfx942 = [lf for lf in dev_files if lf.arch == "gfx942"]
    full = build_plan(gfx942).arch("gfx942")

    def supported(sol):
        return True if sol.depth_u != 64 else "DepthU 64 not generated yet"

    plan = build_plan(gfx942, supported=supported)
    ap = plan.arch("gfx942")
    dropped = sum(1 for ph in full.placeholders for s in ph.solutions if s.solution.depth_u == 64)
    assert dropped and len(plan.excluded) == dropped
    assert {e.reason for e in plan.excluded} == {"DepthU 64 not generated yet"}
    assert ap.solution_count == full.solution_count - dropped
    for ph in ap.placeholders:
        doc = placeholder_document(ph)
        assert all(s.solution.depth_u != 64 for s in ph.solutions)
        assert _table_indices(doc) <= {s["index"] for s in doc["solutions"]}
    # A kernel stays exactly when some kept solution uses it.
    kept_keys = {kernel_key(s.solution) for ph in ap.placeholders for s in ph.solutions}
    assert {k.key for k in ap.kernels.values()} == kept_keys
    assert [s.index for ph in ap.placeholders for s in ph.solutions] == list(range(ap.solution_count))


def test_restricted_accumulates_exclusions(dev_files: list[LogicFile]):
    files = [lf for lf in dev_files if lf.arch == "gfx90a"]
    plan = build_plan(files, supported=lambda s: s.depth_u != 32)
    again = plan.restricted(lambda s: s.macro_tile[0] != 128 or "no MT0 128")
    both = build_plan(files, supported=lambda s: s.depth_u != 32 and s.macro_tile[0] != 128)
    assert {(e.source, e.position) for e in again.excluded} == {(e.source, e.position) for e in both.excluded}
    assert again.arch("gfx90a") == both.arch("gfx90a")


def test_everything_excluded_leaves_no_library(dev_files: list[LogicFile]):
    files = [lf for lf in dev_files if lf.arch == "gfx908"]
    plan = build_plan(files, supported=lambda s: False)
    assert plan.arch("gfx908").placeholders == ()
    assert master_document(plan.arch("gfx908"))["library"]["rows"] == []
    assert {e.reason for e in plan.excluded} == {"not supported"}


def test_architecture_filter_accepts_target_features(dev_files: list[LogicFile]):
    plan = build_plan(dev_files, archs=["gfx90a:xnack+", "gfx1201"])
    assert [a.arch for a in plan.archs] == ["gfx1201", "gfx90a"]


def test_files_of_one_problem_type_share_a_placeholder(dev_files: list[LogicFile]):
    lf = _by_name(dev_files, "navi31_Cijk_Alik_Bljk_SB_Bias")
    twin = attrs.evolve(lf, path=lf.path.replace(".yaml", "_twin.yaml"))
    ap = build_plan([twin, lf]).arch("gfx1100")
    (ph,) = ap.placeholders
    assert [f.path for f in ph.files] == sorted([lf.path, twin.path])
    doc = placeholder_document(ph)
    (row,) = doc["library"]["rows"]
    table = row["library"]["table"]
    assert len(table) == 2 * len(lf.table)
    assert [e["key"] for e in table] == sorted(e["key"] for e in table)
    assert len(doc["solutions"]) == 2 * len(lf.solutions)


def test_rows_that_cannot_merge_are_an_error(dev_files: list[LogicFile]):
    lf = _by_name(dev_files, "navi31_Cijk_Alik_Bljk_SB_Bias")
    other = attrs.evolve(lf, path=lf.path.replace(".yaml", "_euclid.yaml"), library_type="Euclidean")
    with pytest.raises(LogicError, match="cannot share placeholder library"):
        build_plan([lf, other])


def test_equality_and_freesize_rows_come_before_truepred(dev_files: list[LogicFile]):
    lf = _by_name(dev_files, "navi31_Cijk_Alik_Bljk_SB_Bias")  # GridBased
    eq = attrs.evolve(lf, path=lf.path.replace(".yaml", "_eq.yaml"), library_type="Equality")
    free = attrs.evolve(lf, path=lf.path.replace(".yaml", "_free.yaml"), library_type="FreeSize",
                        index_order=None, table=())
    (ph,) = build_plan([lf, eq, free]).arch("gfx1100").placeholders
    rows = placeholder_document(ph)["library"]["rows"]
    assert [r["predicate"]["type"] for r in rows] == ["EqualityMatching", "FreeSizeMatching", "TruePred"]
    assert [r["library"].get("distance") for r in rows] == ["Equality", None, "GridBased"]
    assert "speed" in rows[0]["library"]["table"][0] and "speed" not in rows[2]["library"]["table"][0]


def test_cu_specific_hardware_rows_come_first(dev_plan: LibraryPlan):
    rows = master_document(dev_plan.arch("gfx942"))["library"]["rows"]
    cus = [next((p["value"] for p in r["predicate"]["value"].get("value", []) if isinstance(p, dict)
                 and p.get("type") == "CUCount"), 0) for r in rows]
    assert cus == [80, 20, 0]


def test_fallback_files_serve_every_architecture(dev_files: list[LogicFile]):
    base = [lf for lf in dev_files if lf.arch in ("gfx908", "gfx1100")]
    donor = _by_name(dev_files, "arcturus_Cijk_Ailk_Bljk_HSS")
    fallback = attrs.evolve(donor, arch="fallback", path="fallback/fallback_HSS.yaml")
    plan = build_plan([*base, fallback])
    for ap in plan.archs:
        names = [p.name for p in ap.placeholders if p.is_fallback]
        assert len(names) == 1 and names[0].endswith(f"_fallback_{ap.arch}")
        assert all(s.solution.arch == ap.arch for p in ap.placeholders for s in p.solutions)
        rows = master_document(ap)["library"]["rows"]
        assert rows[-1]["predicate"] == {"type": "TruePred"}
    # Only an all-architecture build takes fallback files, as upstream.
    assert not any(p.is_fallback for p in build_plan([*base, fallback], archs=["gfx908"]).arch("gfx908").placeholders)


def _decision_tree_file(lf: LogicFile) -> LogicFile:
    region = {
        "fallback": 0,
        "features": [{"type": "FreeSizeA", "index": 0}, {"type": "BoundSize", "index": 0}],
        "region": [{"type": "SizeInRange", "index": 0, "value": {"min": 1, "max": 4096}}],
        "trees": [{"solution": 1, "tree": [{"featureIdx": 0, "threshold": 512.0, "nextIdxLTE": -1,
                                            "nextIdxGT": -2}]}],
    }
    return attrs.evolve(lf, path=lf.path.replace(".yaml", "_dtree.yaml"), library_type="DecisionTree",
                        index_order=None, table=(), decision_library=Params.from_mapping({"regions": [region]}))


def test_decision_tree_library(dev_files: list[LogicFile]):
    lf = _decision_tree_file(_by_name(dev_files, "arcturus_Cijk_Ailk_Bljk_HSS"))
    (ph,) = build_plan([lf]).arch("gfx908").placeholders
    doc = placeholder_document(ph)
    (row,) = doc["library"]["rows"]
    assert row["predicate"] == {"type": "SizeInRange", "index": 0, "value": {"max": 4096, "min": 1}}
    tree = row["library"]
    index = {s.position: s.index for s in ph.solutions}
    assert tree["type"] == "DecisionTree"
    assert tree["features"] == [{"index": 0, "type": "FreeSizeA"}, {"index": 0, "type": "BoundSize"}]
    assert tree["trees"] == [{"tree": [{"featureIdx": 0, "nextIdxGT": -2, "nextIdxLTE": -1, "threshold": 512.0}],
                              "value": {"type": "Single", "index": index[1]}}]
    assert tree["nullValue"] == {"type": "Single", "index": index[0]}
    # Without its fallback solution a region cannot answer: it is left out.
    (ph,) = build_plan([lf], supported=lambda s: s is not lf.solutions[0]).arch("gfx908").placeholders
    assert placeholder_document(ph)["library"]["rows"] == []


def test_decision_tree_region_without_fallback_is_an_error(dev_files: list[LogicFile]):
    lf = _decision_tree_file(_by_name(dev_files, "arcturus_Cijk_Ailk_Bljk_HSS"))
    regions = [dict(r) for r in lf.decision_library["regions"]]
    del regions[0]["fallback"]
    broken = attrs.evolve(lf, decision_library=Params.from_mapping({"regions": regions}))
    (ph,) = build_plan([broken]).arch("gfx908").placeholders
    with pytest.raises(LogicError, match="fallback"):
        placeholder_document(ph)


def test_kernel_name_depends_on_the_key_only(dev_files: list[LogicFile]):
    lf = _by_name(dev_files, "aquavanjaram_Cijk_Ailk_Bjlk_S_MX_B_Bias_GG")  # grouped GEMM
    sol = lf.solutions[0]
    ungrouped = attrs.evolve(sol, problem_type=attrs.evolve(sol.problem_type, grouped_gemm=False))
    assert kernel_key(ungrouped) == kernel_key(sol)
    assert kernel_name_for(ungrouped) == kernel_name_for(sol)
    assert "_GG" not in kernel_name_for(sol)


def test_a_file_given_twice_counts_once(dev_files: list[LogicFile]):
    lf = _by_name(dev_files, "navi31_Cijk_Alik_Bljk_SB_Bias")
    assert build_plan([lf, lf]).arch("gfx1100") == build_plan([lf]).arch("gfx1100")
    changed = attrs.evolve(lf, solutions=lf.solutions[:1])
    with pytest.raises(LogicError, match="given twice with different contents"):
        build_plan([lf, changed])
