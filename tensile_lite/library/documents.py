"""The `.dat` documents of a planned architecture, as plain dicts and lists ready to encode.

Master (`TensileLibrary_lazy_<gfx>`): Hardware -> ProblemMap (operation) -> Problem (performance metric)
-> Problem (problem-type predicates) -> Placeholder. Each placeholder document holds its solutions and
its selection library. Without lazy loading (`TensileLibrary_<gfx>`, 7.x) the selection library takes the
Placeholder node's place and the master holds every solution. Key order is fixed here, so encoded bytes
are stable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensile_lite.library.entry_schema import KernelFacts
from tensile_lite.library.plan import ArchPlan, PlaceholderPlan
from tensile_lite.library.predicates import Node, conjunction, hardware_sort_key, pred, sort_key, true_pred
from tensile_lite.library.selection import selection_library
from tensile_lite.library.solution_entry import Honoured, solution_entry, type_predicates

# kernel name -> what the built kernel says of itself (None: not built, or not read)
FactsOf = Callable[[str], KernelFacts | None]


def _entries(ph: PlaceholderPlan, honoured: Honoured | None, facts: FactsOf | None) -> list[dict[str, Any]]:
    return [solution_entry(s.solution, index=s.index, kernel_name=s.kernel_name, name=s.name, arch=ph.arch,
                           cu_count=ph.cu_count, honoured=honoured, names=ph.spelling, schema=ph.schema,
                           facts=facts(s.kernel_name) if facts else None)
            for s in ph.solutions]


def _selection(ph: PlaceholderPlan) -> dict[str, Any]:
    def index_of(path: str, position: int) -> int | None:
        hit = ph.by_position.get((path, position))
        return None if hit is None else hit.index

    return selection_library(ph.files, index_of, ph.schema)


def placeholder_document(ph: PlaceholderPlan, honoured: Honoured | None = None,
                         facts: FactsOf | None = None) -> dict[str, Any]:
    return {"solutions": _entries(ph, honoured, facts), "library": _selection(ph)}


def _perf_predicate(metric: str) -> Node:
    return true_pred() if metric == "DeviceEfficiency" else pred(metric)


def master_document(ap: ArchPlan, honoured: Honoured | None = None,
                    facts: FactsOf | None = None) -> dict[str, Any]:
    """Lazy: each problem-type row names its placeholder library and the master has no solutions.
    Otherwise (a runtime built without lazy loading) each row holds its placeholder's selection library
    and the master every solution of the architecture, by index; `honoured` and `facts` as for
    placeholder_document."""
    # hardware row -> operation -> perf metric -> [(type predicate, placeholder name)]
    tree: dict[Any, dict[str, Any]] = {}
    hw_nodes: dict[Any, Node] = {}
    for ph in ap.placeholders:
        hw = ph.hardware_predicate
        hw_key = hardware_sort_key(hw)
        hw_nodes.setdefault(hw_key, hw)
        perf = _perf_predicate(ph.perf_metric)
        by_perf = tree.setdefault(hw_key, {}).setdefault(ph.operation, {})
        rows = by_perf.setdefault(sort_key(perf), (perf, {}))[1]
        for view in ph.views:
            predicate = conjunction(type_predicates(view, ap.spelling, ap.schema))
            rows.setdefault(sort_key(predicate), (predicate, ph.name))
    if ap.lazy:
        below = {ph.name: {"type": "Placeholder", "value": ph.name} for ph in ap.placeholders}
        solutions: list[dict[str, Any]] = []
    else:
        below = {ph.name: _selection(ph) for ph in ap.placeholders}
        solutions = sorted((e for ph in ap.placeholders for e in _entries(ph, honoured, facts)), key=lambda e: e["index"])
    hw_rows = []
    for hw_key in sorted(tree):
        operations = {}
        for operation in sorted(tree[hw_key]):
            perf_rows = []
            for perf_key in sorted(tree[hw_key][operation]):
                perf, type_rows = tree[hw_key][operation][perf_key]
                # Upstream orders these rows by placeholder-name length ("pure GEMM first"); the name and
                # predicate break ties so the order never depends on merge order.
                ordered = sorted(type_rows.items(), key=lambda kv: (len(kv[1][1]), kv[1][1], kv[0]))
                perf_rows.append({"predicate": perf, "library": {"type": "Problem", "rows": [
                    {"predicate": p, "library": below[name]} for _, (p, name) in ordered]}})
            operations[operation] = {"type": "Problem", "rows": perf_rows}
        hw_rows.append({"predicate": hw_nodes[hw_key], "library": {
            "type": "ProblemMap", "property": {"type": "OperationIdentifier"}, "map": operations}})
    return {"solutions": solutions, "library": {"type": "Hardware", "rows": hw_rows}}
