"""The library plan: which placeholder library every solution lands in, its index and its kernel.

`build_plan` is pure and deterministic: the same logic files in any order give the same plan. Per
architecture, logic files are grouped into placeholder libraries by upstream's naming rule (all files of
one problem type, operation, CU count and architecture share one), solutions are numbered in the order
(placeholder name, file path, position in file), and each solution gets the kernel of its content key.
A `supported` filter decides which solutions are kept; excluded ones vanish from the libraries and from
the kernel lists alike, and are listed with their reason.

The interface served (interfaces.py) fixes the names (type spelling, fallback suffix) and where each
architecture's numbers start (`first_index`): so each placeholder's indices are always one contiguous
range, and with `contiguous_indices` the ranges of all architectures follow each other (7.x's order:
architectures sorted, placeholders by name, then source file and position; Run.py
`generateLogicDataAndSolutions` @00ee1f9d), which the mapping file's range table needs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from tensile_lite.errors import BuildError, LogicError, Where
from tensile_lite.interfaces import HIPBLASLT_2024, INTERFACES, Interface
from tensile_lite.library.entry_schema import SCHEMA_2024, EntrySchema, schema_of
from tensile_lite.library.naming import (
    DEFAULT_PERF_METRIC,
    is_symbol,
    kernel_name_for,
    placeholder_name,
    solution_name_for,
)
from tensile_lite.library.predicates import Node, hardware, sort_key
from tensile_lite.library.problem_view import ProblemView, file_view
from tensile_lite.library.selection import selection_signature
from tensile_lite.library.spelling import SPELLING_2024, TypeSpelling, spelling_of
from tensile_lite.model.kernel_key import kernel_key
from tensile_lite.model.logicfile import LogicFile
from tensile_lite.model.solution import Solution
from tensile_lite.targets import bare_gfx

# Returns True to keep a solution; False or a reason (str) to leave it out.
Supported = Callable[[Solution], "bool | str"]
KernelNamer = Callable[[Solution, str], str]


@attrs.frozen(slots=True)
class PlannedSolution:
    solution: Solution = attrs.field(repr=False)
    source: str  # logic file path
    position: int  # position in that file (what its tables refer to)
    index: int  # unique per architecture (7.x: per build) across all of its libraries
    kernel_key: str
    kernel_name: str

    @property
    def name(self) -> str:
        """The solution's name in the library: its kernel's name and its runtime arguments."""
        return solution_name_for(self.solution, self.kernel_name)


@attrs.frozen(slots=True)
class Excluded:
    arch: str
    source: str
    position: int
    solution_name: str
    reason: str


@attrs.frozen(slots=True)
class PlaceholderPlan:
    """One placeholder library: a `<name>.dat` (and, for the full build, a `<name>.co`)."""

    name: str
    arch: str
    cu_count: int | None
    operation: str
    perf_metric: str
    views: tuple[ProblemView, ...]  # distinct problem types of the master's rows pointing here
    files: tuple[LogicFile, ...] = attrs.field(repr=False)  # sorted by path
    solutions: tuple[PlannedSolution, ...] = attrs.field(repr=False)  # sorted by index
    by_position: Mapping[tuple[str, int], PlannedSolution] = attrs.field(repr=False, eq=False)
    spelling: TypeSpelling = SPELLING_2024  # how its `.dat` spells data types (the interface's)
    schema: EntrySchema = SCHEMA_2024  # the keys its entries carry for the runtime served (entry_schema.py)

    @property
    def hardware_predicate(self) -> Node:
        """The master library's hardware row for this library (fallback libraries match any device)."""
        return hardware("fallback" if self.is_fallback else self.arch, self.cu_count)

    @property
    def is_fallback(self) -> bool:
        return self.files[0].arch == "fallback"

    @property
    def kernel_names(self) -> tuple[str, ...]:
        """Every kernel this library's code object must hold, sorted."""
        return tuple(sorted({s.kernel_name for s in self.solutions}))


@attrs.frozen(slots=True)
class KernelEntry:
    name: str
    key: str
    solution: Solution = attrs.field(repr=False)  # the lowest-indexed solution using it
    placeholders: tuple[str, ...]  # libraries whose code object holds it, sorted


@attrs.frozen(slots=True)
class ArchPlan:
    arch: str
    placeholders: tuple[PlaceholderPlan, ...]  # sorted by name
    kernels: Mapping[str, KernelEntry] = attrs.field(repr=False, eq=False)  # by kernel name, sorted
    interface: Interface = attrs.field(default=INTERFACES[HIPBLASLT_2024], repr=False)
    # lazy: a master naming placeholder libraries (.dat + .co each); else one master holding every
    # solution and one code object for the architecture (the interface's `eager_master`)
    lazy: bool = True

    @property
    def spelling(self) -> TypeSpelling:
        return spelling_of(self.interface)

    @property
    def schema(self) -> EntrySchema:
        return schema_of(self.interface)

    @property
    def master_name(self) -> str:
        if self.lazy:
            return f"TensileLibrary_lazy_{self.arch}"
        return self.interface.eager_master.format(gfx=bare_gfx(self.arch))

    @property
    def solution_count(self) -> int:
        return sum(len(p.solutions) for p in self.placeholders)

    @property
    def code_objects(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """(name, kernels sorted) of every code object the library needs besides the helpers: one per
        placeholder when lazy, else one for the whole architecture named like its master, each kernel once."""
        if self.lazy:
            return tuple((p.name, p.kernel_names) for p in self.placeholders if p.solutions)
        return ((self.master_name, tuple(self.kernels)),) if self.kernels else ()

    def placeholder(self, name: str) -> PlaceholderPlan:
        for p in self.placeholders:
            if p.name == name:
                return p
        raise KeyError(name)


@attrs.frozen(slots=True)
class LibraryPlan:
    archs: tuple[ArchPlan, ...]  # sorted by architecture
    excluded: tuple[Excluded, ...]
    files: tuple[LogicFile, ...] = attrs.field(repr=False)
    arch_filter: tuple[str, ...] | None = None
    interface: Interface = attrs.field(default=INTERFACES[HIPBLASLT_2024], repr=False)
    lazy: bool = True  # ArchPlan.lazy of every architecture

    def arch(self, gfx: str) -> ArchPlan:
        for a in self.archs:
            if a.arch == gfx:
                return a
        raise KeyError(gfx)

    def restricted(self, supported: Supported, kernel_name: KernelNamer | None = None) -> LibraryPlan:
        """The same plan with more solutions left out (e.g. those whose kernel failed to build)."""
        previous = {(e.arch, e.source, e.position): e.reason for e in self.excluded}

        def combined(sol: Solution, src: str, pos: int) -> bool | str:
            return previous.get((sol.arch, src, pos)) or supported(sol)

        return _plan(self.files, self.arch_filter, combined, kernel_name or kernel_name_for, self.interface,
                     self.lazy)


def _select_archs(files: Iterable[LogicFile], archs: Iterable[str] | None) -> list[LogicFile]:
    wanted = None if archs is None else {bare_gfx(a) for a in archs}
    chosen = []
    for lf in files:
        # Fallback files serve every architecture, but only in an all-architecture build, as upstream.
        if lf.arch == "fallback" and wanted is not None:
            continue
        if wanted is None or lf.arch in wanted:
            chosen.append(lf)
    return chosen


def _dedupe_sorted(files: Iterable[LogicFile]) -> tuple[LogicFile, ...]:
    """Files by path; a file given twice counts once (two different contents under one path is an error)."""
    by_path: dict[str, LogicFile] = {}
    for lf in files:
        if by_path.setdefault(lf.path, lf) is not lf and by_path[lf.path] != lf:
            raise LogicError("given twice with different contents", Where(file=lf.path))
    return tuple(by_path[p] for p in sorted(by_path))


def _retarget(lf: LogicFile, arch: str) -> LogicFile:
    # A fallback file's solutions are built for each architecture it is merged into.
    return attrs.evolve(lf, solutions=tuple(attrs.evolve(s, arch=arch) for s in lf.solutions))


def _verdict(result: Any) -> str | None:
    """None to keep; otherwise the reason to leave the solution out."""
    if result is True:
        return None
    if isinstance(result, str) and result:
        return result
    return "not supported"


def _check_mergeable(name: str, files: tuple[LogicFile, ...]) -> None:
    """Rows of different files that upstream would merge must be mergeable (same table layout)."""
    seen: dict[Any, tuple[Any, str]] = {}
    for lf in files:
        for predicate, signature in selection_signature(lf):
            key = sort_key(predicate)
            if key not in seen:
                seen[key] = (signature, lf.path)
                continue
            other, other_path = seen[key]
            if signature[0] == "DecisionTree" or other != signature:
                raise LogicError(f"cannot share placeholder library {name} with {other_path}: its selection "
                                 f"({signature[0]} {signature[1:]}) and that file's ({other[0]} {other[1:]}) "
                                 "have the same predicate but cannot be merged", Where(file=lf.path))


def build_plan(files: Iterable[LogicFile], *, archs: Iterable[str] | None = None,
               supported: Supported | None = None, kernel_name: KernelNamer | None = None,
               interface: Interface = INTERFACES[HIPBLASLT_2024], lazy: bool = True) -> LibraryPlan:
    """Plan the libraries of every architecture present in `files` (optionally only `archs`).

    `supported(solution)` returns True to keep a solution, False or a reason to leave it out.
    `kernel_name(solution, key)` names kernels (default `kernel_name_for`); it must depend only on the key.
    `interface` is the hipBLASLt generation the libraries are for (names and numbering); `lazy` False
    plans the layout of a runtime built without lazy loading (the interface must have one: `eager_master`).
    """
    if not lazy and not interface.eager_master:
        raise BuildError(f"interface {interface.name} has no layout without lazy loading")
    check = (lambda sol, _src, _pos: supported(sol)) if supported else (lambda sol, _src, _pos: True)
    arch_filter = None if archs is None else tuple(sorted(archs))
    return _plan(tuple(files), arch_filter, check, kernel_name or kernel_name_for, interface, lazy)


def first_index(interface: Interface, numbered_before: int) -> int:
    """The first solution index of an architecture after `numbered_before` solutions of earlier ones:
    from 0 for each (2024: indices need only be unique in their master) or continuing (7.x: one mapping
    file may cover every architecture, so every index of the build names one placeholder)."""
    return numbered_before if interface.contiguous_indices else 0


def _plan(files: tuple[LogicFile, ...], arch_filter: tuple[str, ...] | None,
          check: Callable[[Solution, str, int], Any], namer: KernelNamer, interface: Interface,
          lazy: bool = True) -> LibraryPlan:
    chosen = _dedupe_sorted(_select_archs(files, arch_filter))
    targets = sorted({lf.arch for lf in chosen if lf.arch != "fallback"})
    fallbacks = [lf for lf in chosen if lf.arch == "fallback"]
    if fallbacks and len(targets) > 1 and not interface.fallback_per_arch:
        # a bare `_fallback` library would be one file holding a different index range per architecture
        raise BuildError(f"interface {interface.name} names fallback libraries without the architecture, so "
                         f"they cannot serve {len(targets)} architectures in one build; give one architecture",
                         Where(file=fallbacks[0].path))
    names = spelling_of(interface)
    arch_plans = []
    excluded: list[Excluded] = []
    numbered = 0
    for arch in targets:
        members = [lf for lf in chosen if lf.arch == arch] + [_retarget(lf, arch) for lf in fallbacks]
        groups: dict[str, list[LogicFile]] = {}
        for lf in members:
            view = file_view(lf.problem_type)
            name = placeholder_name(view, arch, lf.cu_count, lf.perf_metric or DEFAULT_PERF_METRIC,
                                    fallback=lf.arch != arch, fallback_per_arch=interface.fallback_per_arch,
                                    names=names)
            groups.setdefault(name, []).append(lf)
        start = first_index(interface, numbered)
        ap = _arch_plan(arch, groups, check, namer, excluded, start, interface)
        numbered = start + ap.solution_count
        arch_plans.append(attrs.evolve(ap, lazy=lazy))
    return LibraryPlan(archs=tuple(arch_plans), excluded=tuple(excluded), files=files, arch_filter=arch_filter,
                       interface=interface, lazy=lazy)


def _arch_plan(arch: str, groups: dict[str, list[LogicFile]], check: Callable[[Solution, str, int], Any],
               namer: KernelNamer, excluded: list[Excluded], start: int, interface: Interface) -> ArchPlan:
    next_index = start
    placeholders = []
    key_of_name: dict[str, str] = {}
    name_of_key: dict[str, str] = {}
    users: dict[str, list[tuple[int, Solution, str]]] = {}
    for name in sorted(groups):
        group = tuple(sorted(groups[name], key=lambda lf: lf.path))
        _check_mergeable(name, group)
        planned: list[PlannedSolution] = []
        schema = schema_of(interface)
        for lf in group:
            for pos, sol in enumerate(lf.solutions):
                reason = _verdict(check(sol, lf.path, pos))
                if reason is None and lf.library_type == "DecisionTree" and not schema.decision_trees:
                    reason = f"the {interface.name} runtime has no DecisionTree library"
                if reason is not None:
                    excluded.append(Excluded(arch, lf.path, pos, sol.name, reason))
                    continue
                key = kernel_key(sol)
                kname = namer(sol, key)
                if not is_symbol(kname):
                    raise BuildError(f"kernel name {kname!r} is not a valid symbol",
                                     Where(file=lf.path, solution_index=pos, solution_name=sol.name or None))
                if key_of_name.setdefault(kname, key) != key or name_of_key.setdefault(key, kname) != kname:
                    raise BuildError(f"kernel {kname} (key {key}) clashes with kernel {name_of_key[key]} "
                                     f"(key {key_of_name[kname]}): kernel names must map one to one to "
                                     "kernel keys", Where(file=lf.path, solution_index=pos,
                                                          solution_name=sol.name or None))
                planned.append(PlannedSolution(sol, lf.path, pos, next_index, key, kname))
                users.setdefault(kname, []).append((next_index, sol, name))
                next_index += 1
        if not planned:
            continue
        views = tuple(dict.fromkeys(file_view(lf.problem_type) for lf in group))
        first = group[0]
        placeholders.append(PlaceholderPlan(
            name=name, arch=arch, cu_count=first.cu_count, operation=first.problem_type.operation_identifier,
            perf_metric=first.perf_metric or DEFAULT_PERF_METRIC, views=views, files=group,
            solutions=tuple(planned), by_position={(s.source, s.position): s for s in planned},
            spelling=spelling_of(interface), schema=schema_of(interface)))
    kernels = {}
    for kname in sorted(users):
        uses = users[kname]
        kernels[kname] = KernelEntry(name=kname, key=key_of_name[kname], solution=min(uses, key=lambda u: u[0])[1],
                                     placeholders=tuple(sorted({u[2] for u in uses})))
    return ArchPlan(arch=arch, placeholders=tuple(placeholders), kernels=kernels, interface=interface)
