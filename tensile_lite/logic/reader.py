"""Read one logic file into a frozen `LogicFile`.

Three layouts: the list form (12 elements, or 9 to 11 without the library type), the decision-tree map
(`Library` regions) and ROCm 7.x's compact map, whose keys name the list's elements and whose solutions
list only the keys that differ from its `DefaultSolution` (spec/rocm7_delta.md, addendum item 1).
Only one file's raw YAML is alive at a time; solutions keep canonical `Params`, and equal problem types
are shared between solutions and files.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from tensile_lite.custom.locate import find_folder
from tensile_lite.custom.merge import merge
from tensile_lite.errors import LogicError, Where
from tensile_lite.logic.sidecar import side_table
from tensile_lite.logic.stream import Streamed
from tensile_lite.logic.yamlload import load_yaml
from tensile_lite.model.logicfile import (
    LIBRARY_TYPES,
    RUNTIME_RANKED,
    UNNAMED_LIBRARY_TYPE,
    ExactRow,
    LogicFile,
)
from tensile_lite.model.params import Params
from tensile_lite.model.problem import ProblemType
from tensile_lite.model.solution import Solution

_ARCH_RE = re.compile(r"^(gfx[0-9a-f]{3,4}|fallback)$")

# Content-keyed memo: a build reads hundreds of files over a few dozen problem types.
_PROBLEM_TYPES: dict[Params, ProblemType] = {}


def _problem_type(raw: Any, where: Where) -> ProblemType:
    if not isinstance(raw, Mapping):
        raise LogicError(f"the problem type must be a map, got {type(raw).__name__}",
                         attrs.evolve(where, parameter="ProblemType"))
    params = Params.from_mapping(raw)
    hit = _PROBLEM_TYPES.get(params)
    if hit is None:
        hit = _PROBLEM_TYPES[params] = ProblemType.from_params(params, where)
    return hit


def _arch(raw: Any, where: Where) -> tuple[str, int | None]:
    cu: int | None = None
    if isinstance(raw, Mapping):
        arch, cu = raw.get("Architecture"), raw.get("CUCount")
        if cu is not None and (not isinstance(cu, int) or cu <= 0):
            raise LogicError(f"CUCount must be a positive integer, got {cu!r}", attrs.evolve(where, parameter="CUCount"))
    else:
        arch = raw
    if not isinstance(arch, str) or not _ARCH_RE.match(arch):
        raise LogicError(f"expected an architecture such as gfx942, got {arch!r}",
                         attrs.evolve(where, parameter="Architecture"))
    return arch, cu


def _table(raw: Any, n_solutions: int, where: Where) -> tuple[ExactRow, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise LogicError(f"the exact-logic table must be a list, got {type(raw).__name__}",
                         attrs.evolve(where, parameter="ExactLogic"))
    rows = []
    for i, row in enumerate(raw):
        ok = (isinstance(row, list) and len(row) == 2 and isinstance(row[0], list) and isinstance(row[1], list)
              and len(row[1]) >= 1 and all(isinstance(v, int) and not isinstance(v, bool) for v in row[0])
              and isinstance(row[1][0], int))
        if not ok:
            raise LogicError(f"table row {i} must be [[sizes...], [solution, speed]], got {row!r}",
                             attrs.evolve(where, parameter="ExactLogic"))
        sol = row[1][0]
        if not 0 <= sol < n_solutions:
            raise LogicError(f"table row {i} refers to solution {sol}, but the file has {n_solutions}",
                             attrs.evolve(where, parameter="ExactLogic"))
        speed = float(row[1][1]) if len(row[1]) > 1 and row[1][1] is not None else 0.0
        rows.append(ExactRow(tuple(row[0]), sol, speed))
    return tuple(rows)


@attrs.frozen(slots=True)
class _Converted:
    """Solutions already turned into the model while the parser went through them."""

    solutions: tuple[Solution, ...]
    notes: list[str]


@attrs.frozen(slots=True)
class _Failed:
    """A map-form file's solutions failed to convert before any DefaultSolution was seen: the error
    stands unless a DefaultSolution follows (then the file's key order is the problem)."""

    error: LogicError


def _convert_while_parsing(head: Any, entries: Iterator[Any], where: Where) -> Any:
    """Called when the parser reaches the solutions: each becomes a Solution before the next is parsed."""
    if isinstance(head, list):  # elements 0-4 are complete
        arch_raw, pt_raw = head[2], head[4]
    elif "ArchitectureName" in head and "ProblemType" in head:
        arch_raw, pt_raw = head["ArchitectureName"], head["ProblemType"]
    else:
        return list(entries)  # solutions ahead of the problem type: keep them raw, converted afterwards
    pt, arch = _problem_type(pt_raw, where), _arch(arch_raw, where)[0]
    if isinstance(head, list) or "DefaultSolution" in head:
        return _Converted(*_solutions(entries, pt, arch, where, _defaults(head, where)))
    try:
        return _Converted(*_solutions(entries, pt, arch, where))
    except LogicError as exc:  # perhaps a compact file with its DefaultSolution further on: _map_form decides
        return _Failed(exc)


def _defaults(head: Any, where: Where) -> Mapping[str, Any]:
    """A compact file's DefaultSolution (empty for the other layouts)."""
    if not isinstance(head, Mapping) or "DefaultSolution" not in head:
        return {}
    raw = head["DefaultSolution"]
    if not isinstance(raw, Mapping):
        raise LogicError(f"DefaultSolution must be a map of solution parameters, got {type(raw).__name__}",
                         attrs.evolve(where, parameter="DefaultSolution"))
    if "ProblemType" in raw:
        raise LogicError("DefaultSolution must not carry a ProblemType (the file's ProblemType applies)",
                         attrs.evolve(where, parameter="DefaultSolution"))
    return raw


def _solutions(raw: Any, pt: ProblemType, arch: str, where: Where,
               defaults: Mapping[str, Any] | None = None) -> tuple[tuple[Solution, ...], list[str]]:
    if isinstance(raw, _Converted):
        return raw.solutions, raw.notes
    if isinstance(raw, _Failed):
        raise raw.error
    if not isinstance(raw, (list, Iterator)):
        raise LogicError(f"the solutions must be a list, got {type(raw).__name__}",
                         attrs.evolve(where, parameter="Solutions"))
    sols: list[Solution] = []
    differing = moved_index = other_isa = 0
    isa = _isa_of(arch)
    for pos, entry in enumerate(raw):
        if not isinstance(entry, Mapping):
            raise LogicError(f"solution {pos} must be a map, got {type(entry).__name__}",
                             attrs.evolve(where, solution_index=pos))
        embedded = entry.get("ProblemType")
        # a compact file's solution is its DefaultSolution with the solution's own keys over it
        merged = {**defaults, **entry} if defaults else entry
        params = Params.from_mapping({k: v for k, v in merged.items() if k != "ProblemType"})
        sol_where = attrs.evolve(where, solution_index=params.get("SolutionIndex", pos),
                                 solution_name=params.get("SolutionNameMin") or None)
        try:
            sol = Solution.from_params(pt, params, arch, pos, sol_where)
        except LogicError as exc:
            raise exc.at(**attrs.asdict(sol_where)) from None
        if embedded is not None and _problem_type(embedded, sol_where) != pt:
            differing += 1  # the file's problem type wins, as upstream requires them to agree
        if sol.index != pos:
            moved_index += 1
        if isa is not None and params.get("ISA") not in (None, isa):
            other_isa += 1
        sols.append(sol)
    notes = []
    if differing:
        notes.append(f"{differing} solution(s) embed a problem type that differs from the file's; the file's is used")
    if moved_index:
        notes.append(f"{moved_index} solution(s) have a SolutionIndex other than their position; "
                     "tables refer to positions")
    if other_isa:
        notes.append(f"{other_isa} solution(s) carry the ISA of another architecture; {arch} is used")
    return tuple(sols), notes


def _isa_of(arch: str) -> tuple[int, int, int] | None:
    m = re.match(r"^gfx(\d+)([0-9a-f])([0-9a-f])$", arch)
    return (int(m.group(1)), int(m.group(2), 16), int(m.group(3), 16)) if m else None


# The compact map form's keys, in the list form's element order (spec/rocm7_delta.md §1.1).
_COMPACT_KEYS = ("MinimumRequiredVersion", "ScheduleName", "ArchitectureName", "DeviceNames", "ProblemType",
                 "Solutions", "IndexOrder", "ExactLogic", "RangeLogic", "TileSelectionIndices", "PerfMetric",
                 "LibraryType")


def _list_form(data: list[Any], where: Where, cu_count: Any = None,
               defaults: Mapping[str, Any] | None = None) -> LogicFile:
    if len(data) < 9:
        raise LogicError(f"a list-form logic file has 12 elements (at least 9: element 11, the library type, "
                         f"and the two before it may be left out), this one has {len(data)}",
                         attrs.evolve(where, parameter="root"))
    notes_head = []
    if len(data) < 12:
        data = [*data, *([None] * (12 - len(data)))]
        notes_head.append(f"no library type element: read as a {UNNAMED_LIBRARY_TYPE} Matching table")
        data[11] = UNNAMED_LIBRARY_TYPE
    version = data[0].get("MinimumRequiredVersion", "") if isinstance(data[0], Mapping) else ""
    arch, cu = _arch(data[2], where)
    if cu is None and cu_count is not None:  # the compact form gives the CU count beside the architecture
        cu = _arch({"Architecture": arch, "CUCount": cu_count}, where)[1]
    pt = _problem_type(data[4], where)
    library_type = data[11].strip() if isinstance(data[11], str) else data[11]
    if library_type not in LIBRARY_TYPES - {"DecisionTree"}:
        raise LogicError(f"unknown library type {data[11]!r} (expected one of "
                         f"{', '.join(sorted(LIBRARY_TYPES - {'DecisionTree'}))})",
                         attrs.evolve(where, parameter="LibraryType (element 11)"))
    sols, notes = _solutions(data[5], pt, arch, where, defaults)
    notes = notes_head + notes
    index_order = None
    table: tuple[ExactRow, ...] = ()
    # a GridBased table may live in a side file next to the logic file (7.x; logic/sidecar.py)
    side = side_table(Path(where.file), data[7], library_type, where) if where.file else None
    # FreeSize and the runtime-ranked types list solutions only: elements 6-9 are null or ignored
    if library_type != "FreeSize" and library_type not in RUNTIME_RANKED:
        if not isinstance(data[6], list) or not all(isinstance(v, int) for v in data[6]):
            raise LogicError(f"the index order (element 6) must be a list of integers, got {data[6]!r}",
                             attrs.evolve(where, parameter="IndexOrder"))
        index_order = tuple(data[6])
        try:
            table = _table(data[7] if side is None else side.rows, len(sols), where)
        except LogicError as exc:
            if side is None:
                raise
            raise LogicError(f"ExactLogic side file {side.path}: {exc.message}", exc.where) from None
    devices = tuple(str(d) for d in data[3]) if isinstance(data[3], list) else ()
    return LogicFile(path=where.file or "", arch=arch, cu_count=cu, schedule=str(data[1]), device_names=devices,
                     problem_type=pt, solutions=sols, library_type=library_type,
                     perf_metric=str(data[10] or "DeviceEfficiency"), index_order=index_order, table=table,
                     min_version=str(version), notes=tuple(notes))


def _compact_form(data: Mapping[str, Any], where: Where) -> LogicFile:
    """ROCm 7.x's map with the list's elements by name; its solutions were merged with DefaultSolution."""
    for key in ("ArchitectureName", "ProblemType", "Solutions"):
        if key not in data:
            raise LogicError(f"a compact (LibraryType) logic file needs {key}", attrs.evolve(where, parameter=key))
    defaults = _defaults(data, where)  # only used when the solutions were kept raw (ahead of the head)
    as_list = [data.get(k) for k in _COMPACT_KEYS]
    as_list[0] = {"MinimumRequiredVersion": data.get("MinimumRequiredVersion", "")}
    as_list[3] = data.get("DeviceNames") or []
    return _list_form(as_list, where, cu_count=data.get("CUCount"), defaults=defaults)


def _map_form(data: Mapping[str, Any], where: Where) -> LogicFile:
    if isinstance(data.get("Solutions"), _Failed) and "DefaultSolution" in data:
        raise LogicError("DefaultSolution must come before Solutions (solutions are read as they are parsed)",
                         attrs.evolve(where, parameter="DefaultSolution"))
    if "LibraryType" in data or "DefaultSolution" in data:
        return _compact_form(data, where)
    return _dict_form(data, where)


def _dict_form(data: Mapping[str, Any], where: Where) -> LogicFile:
    for key in ("ArchitectureName", "ProblemType", "Solutions", "Library"):
        if key not in data:
            raise LogicError(f"a map-form (decision tree) logic file needs {key}", attrs.evolve(where, parameter=key))
    arch, _ = _arch(data["ArchitectureName"], where)
    cu = data.get("CUCount")
    pt = _problem_type(data["ProblemType"], where)
    sols, notes = _solutions(data["Solutions"], pt, arch, where)
    library = data["Library"]
    if not isinstance(library, (list, Mapping)):
        raise LogicError("Library must be a list of decision-tree regions", attrs.evolve(where, parameter="Library"))
    devices = data.get("DeviceNames") or []
    return LogicFile(path=where.file or "", arch=arch, cu_count=cu if isinstance(cu, int) else None,
                     schedule=str(data.get("ScheduleName", "")), device_names=tuple(map(str, devices)),
                     problem_type=pt, solutions=sols, library_type="DecisionTree",
                     perf_metric=str(data.get("PerfMetric") or "DeviceEfficiency"), index_order=None, table=(),
                     decision_library=Params.from_mapping({"regions": library}),
                     min_version=str(data.get("MinimumRequiredVersion", "")), notes=tuple(notes))


def read_logic_file(path: str | Path, *, custom_kernels_dir: str | Path | None = None,
                    logic_root: str | Path | None = None) -> LogicFile:
    """Parse and validate one logic file; any problem is a LogicError naming file, solution and parameter.

    Solutions naming a custom kernel get its custom.config merged over them (custom/), the kernel found in
    `custom_kernels_dir`, else $TENSILE_LITE_CUSTOM_KERNELS_DIR, else above `logic_root` (default: the file)."""
    logic = _read(path)
    if not any(sol.is_custom for sol in logic.solutions):
        return logic
    folder = find_folder(custom_kernels_dir, logic_root if logic_root is not None else path)
    where = Where(file=str(path))
    return attrs.evolve(logic, solutions=tuple(merge(sol, folder, where) for sol in logic.solutions))


def _read(path: str | Path) -> LogicFile:
    where = Where(file=str(path))
    data = load_yaml(Path(path), Streamed(lambda head, entries: _convert_while_parsing(head, entries, where),
                                          index=5, key="Solutions"))
    try:
        if isinstance(data, list):
            return _list_form(data, where)
        if isinstance(data, Mapping):
            return _map_form(data, where)
    except LogicError as exc:
        raise exc.at(file=str(path)) from None
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, OverflowError) as exc:
        # A value of a type no check above expected (hostile or corrupted input): still this file's error.
        raise LogicError(f"malformed logic file ({type(exc).__name__}: {exc})", where) from None
    raise LogicError(f"the root must be a 12-element list or a map, got {type(data).__name__}", where)
