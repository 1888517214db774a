"""Our `.dat` trees against upstream's for the same logic files (shared/reference), architecture by architecture.

Compared exactly (values and msgpack value types): the master's hardware / operation / metric / problem-type
structure and its placeholder names, every placeholder's solutions (matched to upstream's through the match
table: logic file + position) with their problemType, sizeMapping, problemPredicate, hardwarePredicate,
debugKernel, libraryLogicIndex, ideals and linearModel, the number of distinct kernels per placeholder, and
every selection row (predicate, Matching properties and distance, table keys with speeds and the solution
each selects, FreeSize lists).

`internalArgsSupport` is the one the build writes (what each built kernel reads from the argument header:
every MultipleBuffer kernel takes the runtime's GSU, as upstream's do). Differences we keep
(tensile_lite/library/__init__.py explains them): solution indices, kernel and solution
names; the order of master rows whose placeholder names have equal length (upstream: merge order, ours: by
name; their predicates exclude each other) and of Matching rows with equal keys. Custom kernels' solutions
are compared like the others: their `internalArgsSupport` comes from the kernel's own custom.config, merged
as upstream merges it (tensile_lite/custom). gfx1200's reference comes from a
run over only one of its two logic files, so our extra placeholder for the other file is expected.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import attrs
import pytest

from tensile_lite.asm.gemm import runtime_overrides_read, unsupported_reasons
from tensile_lite.library import LibraryPlan, decode, encode, master_document, placeholder_document
from tensile_lite.model import Solution, kernel_key
from tensile_lite.model.kernel_key import splits_into_workspace
from tests.shared import shared_dir

ARCHS = ["gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx1100", "gfx1101", "gfx1102", "gfx1200", "gfx1201"]
# Placeholders upstream could not build (see shared/reference/README.md): ours only.
NOT_IN_REFERENCE = {
    "TensileLibrary_F8F8_B8F8_HA_Bias_SAB_SCD_SAV_UA_Type_F8B8_HPA_Contraction_l_Alik_Bljk_Cijk_Dijk_gfx1200",
}
SOLUTION_FIELDS_COMPARED = ("problemType", "sizeMapping", "problemPredicate", "hardwarePredicate", "debugKernel",
                            "libraryLogicIndex", "ideals", "linearModel", "internalArgsSupport")


def _honoured(sol: Solution) -> dict[str, bool]:
    return runtime_overrides_read(sol) if not unsupported_reasons(sol) else {}


def strict_equal(a: Any, b: Any) -> bool:
    """Equal values of equal types (True is not 1: the runtime's msgpack reader converts strictly)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _roundtrip(doc: dict[str, Any]) -> Any:
    """What a reader of our msgpack bytes sees."""
    return decode(encode(doc, "msgpack"))


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def reference() -> Path:
    return shared_dir("reference")


@pytest.fixture(scope="module")
def logic_root() -> Path:
    return shared_dir("logic")


def _master_rows(doc: dict[str, Any]) -> dict[str, Any]:
    """hardware predicate -> operation -> [(metric predicate, [(type predicate, placeholder)])]."""
    out = {}
    for hw_row in doc["library"]["rows"]:
        assert hw_row["library"]["type"] == "ProblemMap"
        assert hw_row["library"]["property"] == {"type": "OperationIdentifier"}
        ops = {}
        for op, node in hw_row["library"]["map"].items():
            assert node["type"] == "Problem"
            ops[op] = [(json.dumps(r["predicate"], sort_keys=True),
                        [(json.dumps(t["predicate"], sort_keys=True), t["library"]["type"], t["library"]["value"])
                         for t in r["library"]["rows"]]) for r in node["rows"]]
        out[json.dumps(hw_row["predicate"], sort_keys=True)] = ops
    return out


@pytest.mark.parametrize("arch", ARCHS)
def test_master_library_matches_upstream(arch, dev_plan: LibraryPlan, reference: Path):
    ref = _load(reference / "dat" / arch / f"TensileLibrary_lazy_{arch}.dat.json")
    ours = _roundtrip(master_document(dev_plan.arch(arch)))
    assert ours["solutions"] == [] and ref["solutions"] == []
    assert ours["library"]["type"] == ref["library"]["type"] == "Hardware"
    # Hardware rows in the same order (higher CU count first).
    assert [r["predicate"] for r in ours["library"]["rows"]] == [r["predicate"] for r in ref["library"]["rows"]]
    ref_rows, our_rows = _master_rows(ref), _master_rows(ours)
    for hw, ref_ops in ref_rows.items():
        only_ours = {op for op, perf in our_rows[hw].items()
                     if all(t[2] in NOT_IN_REFERENCE for _, types in perf for t in types)}
        assert set(our_rows[hw]) - only_ours == set(ref_ops)
        for op, ref_perf in ref_ops.items():
            our_perf = our_rows[hw][op]
            assert [p for p, _ in our_perf] == [p for p, _ in ref_perf]
            for (_, ref_types), (_, our_types) in zip(ref_perf, our_perf, strict=True):
                extra = [t for t in our_types if t[2] in NOT_IN_REFERENCE]
                assert sorted(t for t in our_types if t not in extra) == sorted(ref_types)
                # Upstream orders by placeholder-name length; only equal lengths may be ordered differently.
                lengths = [len(t[2]) for t in our_types]
                assert lengths == sorted(lengths)
                assert [len(t[2]) for t in ref_types] == sorted(len(t[2]) for t in ref_types)


@pytest.mark.parametrize("arch", ARCHS)
def test_placeholder_names_match_upstream(arch, dev_plan: LibraryPlan, reference: Path):
    ref = {p.name.removesuffix(".dat.json") for p in (reference / "dat" / arch).glob("*.dat.json")}
    ref.discard(f"TensileLibrary_lazy_{arch}")
    ours = {p.name for p in dev_plan.arch(arch).placeholders}
    assert ours - NOT_IN_REFERENCE == ref
    assert all(n.startswith("TensileLibrary_") and n.endswith(f"_{arch}") for n in ours)


def _where(logic_root: Path, source: str, position: int) -> tuple[str, int]:
    return os.path.relpath(source, logic_root).replace(os.sep, "/"), position


@pytest.mark.parametrize("arch", ARCHS)
def test_placeholder_libraries_match_upstream(arch, dev_plan: LibraryPlan, reference: Path, logic_root: Path):
    match = {m["solution_index"]: (m["logic_file"], m["index_in_logic_file"])
             for m in _load(reference / "match_table" / f"{arch}.json")}
    compared = customs = plain_total = 0
    for ph in dev_plan.arch(arch).placeholders:
        if ph.name in NOT_IN_REFERENCE:
            continue
        ref = _load(reference / "dat" / arch / f"{ph.name}.dat.json")
        # internalArgsSupport as the build declares it: what the built kernels read (gsu, wgm, staggerU);
        # solutions the writer does not build are left out of a real library, so they keep the file's flags
        ours = _roundtrip(placeholder_document(ph, _honoured))
        assert len(ours["solutions"]) == len(ref["solutions"]), ph.name
        # Kernels per code object: upstream's count of distinct kernel names, plus one for each kernel
        # shared by a MultipleBuffer solution that splits K and one that does not (ours are two).
        halves: dict[str, set[bool]] = {}
        for placed in ph.solutions:
            sol = placed.solution
            plain = attrs.evolve(sol, runtime=attrs.evolve(sol.runtime, global_split_u=1))
            halves.setdefault(kernel_key(plain), set()).add(splits_into_workspace(sol))
        pairs = sum(len(v) == 2 for v in halves.values())
        assert len({s["kernelName"] for s in ours["solutions"]}) == \
            len({s["kernelName"] for s in ref["solutions"]}) + pairs, ph.name
        ours_at = {_where(logic_root, p.source, p.position): s for p, s in zip(ph.solutions, ours["solutions"],
                                                                                strict=True)}
        ref_at = {match[s["index"]]: s for s in ref["solutions"]}
        plain = {_where(logic_root, p.source, p.position) for p in ph.solutions
                 if not p.solution.is_custom and not unsupported_reasons(p.solution)
                 and not runtime_overrides_read(p.solution)["gsu"]}
        plain_total += len(plain)
        assert set(ours_at) == set(ref_at), ph.name
        for loc, ref_sol in ref_at.items():
            our_sol = ours_at[loc]
            assert set(our_sol) == set(ref_sol)
            for field in SOLUTION_FIELDS_COMPARED:
                mine = our_sol[field]
                if field == "internalArgsSupport" and loc in plain:
                    # a GSU-1 MultipleBuffer kernel the conversion kernels cannot serve stays plain: the one
                    # difference is gsu false where upstream's kernel takes the runtime's GSU
                    assert mine["gsu"] is False and ref_sol[field]["gsu"] is True, (ph.name, loc)
                    mine = {**mine, "gsu": True}
                assert strict_equal(mine, ref_sol[field]), (ph.name, loc, field)
            if ref_sol["sizeMapping"]["CustomKernelName"]:
                assert our_sol["kernelName"] == ref_sol["kernelName"], (ph.name, loc)
                customs += 1
            compared += 1
        _compare_selection(ph.name, ref, ours, {i: match[i] for i in match},
                           {p.index: _where(logic_root, p.source, p.position) for p in ph.solutions})
    assert compared > 0
    assert customs == (8 if arch == "gfx942" else 0)  # the dev set's custom-kernel solutions
    # every gfx942 and gfx90a f16/bf16 kernel takes the runtime's GSU; the plain ones are of problem types
    # the conversion kernels do not serve (int8 to bf16, fp8 with AmaxD, BGRADB, f64, MAC kernels)
    assert plain_total <= {"gfx942": 0, "gfx90a": 10}.get(arch, compared)


def _compare_selection(name: str, ref: dict, ours: dict, ref_loc: dict, our_loc: dict) -> None:
    ref_rows, our_rows = ref["library"]["rows"], ours["library"]["rows"]
    assert ours["library"]["type"] == ref["library"]["type"] == "Problem"
    assert [r["predicate"] for r in our_rows] == [r["predicate"] for r in ref_rows], name
    for ref_row, our_row in zip(ref_rows, our_rows, strict=True):
        ref_lib, our_lib = ref_row["library"], our_row["library"]
        assert set(our_lib) == set(ref_lib)
        for key in ref_lib:
            if key != "table":
                assert strict_equal(our_lib[key], ref_lib[key]), (name, key)

        def entries(lib: dict, loc: dict) -> list[tuple]:
            return [(tuple(e.get("key", ())), loc[e["index"]], e.get("speed"), tuple(sorted(e))) for e in lib["table"]]

        ref_entries, our_entries = entries(ref_lib, ref_loc), entries(our_lib, our_loc)
        assert Counter(our_entries) == Counter(ref_entries), name
        # Same key order; entries with equal keys may come in another order.
        assert [e[0] for e in our_entries] == [e[0] for e in ref_entries], name
        if ref_lib["type"] == "FreeSize":
            assert our_entries == ref_entries, name


@pytest.mark.parametrize("arch", ARCHS)
def test_every_index_is_unique_and_resolvable(arch, dev_plan: LibraryPlan):
    ap = dev_plan.arch(arch)
    seen: set[int] = set()
    for ph in ap.placeholders:
        doc = placeholder_document(ph)
        indices = [s["index"] for s in doc["solutions"]]
        assert not seen & set(indices)
        seen |= set(indices)
        for row in doc["library"]["rows"]:
            for entry in row["library"].get("table", ()):
                assert entry["index"] in indices
    assert seen == set(range(ap.solution_count))
