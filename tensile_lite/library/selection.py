"""How a placeholder library picks a solution for a problem: Matching tables, FreeSize lists, decision trees,
and ROCm 7.x's Prediction pools (the runtime ranks them with its analytical model; docs/rocm7_library_types.md).

Each logic file contributes one row (a decision-tree file one row per region) to its placeholder's
`Problem` library. Rows of different files with the same predicate are merged into one, as upstream does:
Matching tables are concatenated and re-sorted by key, FreeSize lists and Prediction pools are concatenated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tensile_lite.errors import LogicError, Where
from tensile_lite.library.entry_schema import SCHEMA_2024, EntrySchema
from tensile_lite.library.predicates import Node, conjunction, pred, sort_key
from tensile_lite.model.logicfile import LogicFile
from tensile_lite.model.params import plain

# Index-order codes of a logic file and the problem property each stands for; batch size is a key only
# for the distances that compare exactly.
_PROPERTY_OF_CODE = {2: "FreeSizeA", 3: "FreeSizeB", 1: "BoundSize"}
_EXACT_DISTANCES = ("Equality", "GridBased")

# Solution index of (file path, position), or None when that solution was left out.
IndexOf = Callable[[str, int], "int | None"]


def matching_layout(lf: LogicFile) -> tuple[list[str], list[int]]:
    """(property names, positions in a table row's sizes) of a Matching file's keys."""
    codes = dict(_PROPERTY_OF_CODE)
    if lf.library_type in _EXACT_DISTANCES:
        codes[0] = "BatchSize"
    order = lf.index_order or ()
    return [codes[c] for c in order if c in codes], [i for i, c in enumerate(order) if c in codes]


# Library types that list solutions only, the row predicate that keeps their row apart from the others
# (a FreeSize and a Prediction file may share a placeholder) and the `.dat` node type of the row.
_SOLUTION_LISTS = {"FreeSize": "FreeSizeMatching", "Prediction": "PredictionMatching"}


def _row_predicate(lf: LogicFile, schema: EntrySchema = SCHEMA_2024) -> Node:
    if lf.library_type in _SOLUTION_LISTS:
        return pred(_SOLUTION_LISTS[lf.library_type])
    return pred("EqualityMatching") if lf.library_type == "Equality" else pred(schema.grid_based_row)


def _row_order(predicate: Node, schema: EntrySchema) -> tuple[Any, ...]:
    """Where a row goes: in the reader's order of row types where it has one, else upstream's 2024 order
    (everything before TruePred, then by type, index and value)."""
    rank = schema.row_rank
    kind = predicate["type"]
    if not rank:
        return sort_key(predicate)
    place = rank.index(kind) if kind in rank else len(rank) + (kind == "TruePred")
    return (place, sort_key(predicate))


def _regions(lf: LogicFile) -> Sequence[Mapping[str, Any]]:
    library = lf.decision_library
    regions = (library.get("regions") if library is not None else None) or ()
    if not isinstance(regions, Sequence) or not all(isinstance(r, Mapping) for r in regions):
        raise LogicError("Library must be a list of decision-tree regions", Where(file=lf.path, parameter="Library"))
    return regions


def _region_predicate(lf: LogicFile, region: Mapping[str, Any]) -> Node:
    preds = []
    for p in region.get("region") or ():
        if not isinstance(p, Mapping) or "type" not in p:
            raise LogicError(f"a region predicate must be a map with a type, got {plain(p)!r}",
                             Where(file=lf.path, parameter="region"))
        preds.append(pred(str(p["type"]), plain(p.get("value")), p.get("index")))
    return conjunction(preds)


def selection_signature(lf: LogicFile) -> list[tuple[Node, tuple[Any, ...]]]:
    """(row predicate, what must agree for rows to merge) of each row the file contributes."""
    if lf.library_type == "DecisionTree":
        return [(_region_predicate(lf, r), ("DecisionTree",)) for r in _regions(lf)]
    if lf.library_type in _SOLUTION_LISTS:
        return [(_row_predicate(lf), (lf.library_type,))]
    props, _ = matching_layout(lf)
    return [(_row_predicate(lf), ("Matching", lf.library_type, tuple(props)))]


def _matching_entries(lf: LogicFile, index_of: IndexOf) -> list[dict[str, Any]]:
    _, positions = matching_layout(lf)
    entries = []
    for n, row in enumerate(lf.table):
        index = index_of(lf.path, row.solution)
        if index is None:
            continue
        if positions and max(positions) >= len(row.sizes):
            raise LogicError(f"table row {n} has {len(row.sizes)} sizes but the index order needs "
                             f"{max(positions) + 1}", Where(file=lf.path, parameter="ExactLogic"))
        entry: dict[str, Any] = {"key": [row.sizes[i] for i in positions], "index": index}
        if lf.library_type != "GridBased":
            entry["speed"] = float(row.speed)
        entries.append(entry)
    return entries


def _position(lf: LogicFile, value: Any, what: str) -> int:
    if not isinstance(value, int) or not 0 <= value < len(lf.solutions):
        raise LogicError(f"{what} refers to solution {value!r}, but the file has {len(lf.solutions)}",
                         Where(file=lf.path, parameter=what))
    return value


def _tree_library(lf: LogicFile, region: Mapping[str, Any], index_of: IndexOf) -> dict[str, Any] | None:
    if "fallback" not in region:
        raise LogicError("a decision-tree region needs a fallback solution", Where(file=lf.path, parameter="fallback"))
    null_index = index_of(lf.path, _position(lf, region["fallback"], "fallback"))
    if null_index is None:
        return None  # the region cannot answer without its fallback: leave it out
    trees = []
    for tree in region.get("trees") or ():
        index = index_of(lf.path, _position(lf, tree.get("solution"), "trees.solution"))
        if index is not None:
            trees.append({"tree": plain(tree.get("tree")), "value": {"type": "Single", "index": index}})
    return {"type": "DecisionTree", "features": plain(region.get("features") or ()), "trees": trees,
            "nullValue": {"type": "Single", "index": null_index}}


def selection_library(files: Sequence[LogicFile], index_of: IndexOf,
                      schema: EntrySchema = SCHEMA_2024) -> dict[str, Any]:
    """The placeholder's `Problem` library over its files (sorted by path), rows merged and ordered as the
    runtime served (`schema`) expects."""
    rows: dict[Any, dict[str, Any]] = {}
    for lf in files:
        if lf.library_type == "DecisionTree":
            for region in _regions(lf):
                library = _tree_library(lf, region, index_of)
                if library is not None:
                    predicate = _region_predicate(lf, region)
                    rows[_row_order(predicate, schema)] = {"predicate": predicate, "library": library}
            continue
        predicate = _row_predicate(lf, schema)
        key = _row_order(predicate, schema)
        kept = [i for pos in range(len(lf.solutions)) if (i := index_of(lf.path, pos)) is not None]
        if lf.library_type == "FreeSize":
            library = {"type": "FreeSize", "table": [{"index": i} for i in kept]}
        elif lf.library_type == "Prediction":
            library = {"type": "Prediction", "table": kept}  # the runtime reads a plain list of indices
        elif not lf.is_matching:  # the build leaves such files out before planning
            raise LogicError(lf.library_writer_gap or f"library type {lf.library_type} has no .dat node",
                             Where(file=lf.path, parameter="LibraryType"))
        else:
            props, _ = matching_layout(lf)
            library = {"type": "Matching", "properties": [pred(p, index=0) for p in props],
                       "table": _matching_entries(lf, index_of), "distance": lf.library_type}
        if key in rows:
            rows[key]["library"]["table"].extend(library["table"])
        else:
            rows[key] = {"predicate": predicate, "library": library}
    for row in rows.values():
        library = row["library"]
        if library["type"] == "Matching":
            library["table"].sort(key=lambda e: e["key"])  # stable: ties keep file order
    filled = [rows[k] for k in sorted(rows) if rows[k]["library"].get("table") or rows[k]["library"].get("trees")
              or rows[k]["library"].get("nullValue")]
    return {"type": "Problem", "rows": filled}
