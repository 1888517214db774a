"""The build behind TensileCreateLibrary, as one function over frozen inputs and a staging folder."""

from __future__ import annotations

import collections
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

import attrs

from tensile_lite import shard as sharding
from tensile_lite.asm.gemm import Decision, GemmKernel, decide, runtime_overrides_read
from tensile_lite.asm.gemm.abi import splits_for_conversion
from tensile_lite.asm.gemm.loop_clocks import MATH_CLOCKS
from tensile_lite.asm.gemm.postgsu import ConversionKernel
from tensile_lite.codeobj.assemble import assemble, link
from tensile_lite.codeobj.cache import KernelCache, assembler_identity
from tensile_lite.codeobj.finish import finish_for
from tensile_lite.codeobj.pipeline import (
    BuildOptions,
    BuildReport,
    KernelSource,
    build_code_objects,
    usable_jobs,
)
from tensile_lite.codeobj.pipeline import LibraryPlan as CodeObjectPlan
from tensile_lite.codeobj.resources import KernelResources, runtime_occupancy
from tensile_lite.codeobj.toolchain import Toolchain, find_toolchain_for
from tensile_lite.codeobj.trivial import TrivialKernel
from tensile_lite.custom import CustomBuild, CustomKernel
from tensile_lite.errors import BuildError, LogicError, TensileLiteError
from tensile_lite.host.conversion import conversion_kernels
from tensile_lite.interfaces import INTERFACES, Interface, get_interface
from tensile_lite.library.documents import FactsOf
from tensile_lite.library.entry_schema import KernelFacts
from tensile_lite.library.formats import FORMATS, INDEXED_FORMATS, file_name
from tensile_lite.library.layout import arch_folder, helper_code_object, in_folder, mapping_names
from tensile_lite.library.plan import ArchPlan, LibraryPlan, build_plan
from tensile_lite.library.writer import code_object_names, library_stems, write_arch, write_mappings
from tensile_lite.logic import Read, Unreadable, scan_logic
from tensile_lite.model import LogicFile, Solution
from tensile_lite.targets import get_target
from tensile_lite.tcl_args import TclRequest
from tensile_lite.workdirs import move_file, private_dir

Log = Callable[[int, str], None]
HELPER_KERNEL = "tensile_lite_no_helper_kernels"


@attrs.frozen(slots=True)
class BuildSummary:
    files: tuple[str, ...]  # paths relative to library/, in manifest order
    solutions: int
    supported: int
    kernels: int
    architectures: tuple[str, ...]
    folders: tuple[str, ...] = ()  # folders below library/ that exist even when empty (one per architecture)
    # the files a runtime opens first (masters, mappings): published last, so they never name a missing file
    roots: tuple[str, ...] = ()

    def describe(self) -> str:
        return (f"built {len(self.architectures)} architecture(s) ({', '.join(self.architectures) or 'none'}): "
                f"{self.supported} of {self.solutions} solutions, {self.kernels} kernels, {len(self.files)} files")


def read_selected(req: TclRequest, log: Log) -> list[LogicFile]:
    """Every logic file under LogicPath that --logic-filter, --experimental and --architecture select, sorted.

    Files of other architectures are never parsed beyond their head. Every selected file that cannot be
    read is reported (one line each, at --verbose 1) before the build fails naming the first, so one
    run shows them all; files our writer cannot describe yet are left out with a warning."""
    found = 0
    out: list[LogicFile] = []
    bad: list[Unreadable] = []
    for item in scan_logic([req.logic_path], req.logic_filter, experimental=req.experimental,
                           architectures=req.architectures, known_targets=True,
                           custom_kernels_dir=req.custom_kernels_dir):
        found += 1
        if isinstance(item, Unreadable):
            bad.append(item)
        elif isinstance(item, Read):
            if item.logic.library_writer_gap:  # a .dat node we cannot write yet: out, with the reason
                log(1, f"warning: {item.path} left out: {item.logic.library_writer_gap}")
            else:
                out.append(item.logic)
    if not found:
        raise BuildError(f"no logic files matching {req.logic_filter}.yaml under {req.logic_path}")
    if len(bad) == 1:
        raise bad[0].error
    if bad:
        for item in bad:
            log(1, f"  unreadable [{item.arch_label}] {item.error.one_line()}")
        raise LogicError(f"{len(bad)} logic files of the requested architectures cannot be read (each listed "
                         f"above); first: {bad[0].error.one_line()}")
    log(1, f"read {len(out)} logic file(s) of {found} found, {sum(len(lf.solutions) for lf in out)} solutions")
    return out


def report_unsupported(logic: list[LogicFile], unsupported: Callable[[Solution], tuple[str, ...]],
                       strict: bool, log: Log) -> dict[tuple[str, int], tuple[str, ...]]:
    """(file, position) -> reasons for every solution we cannot build; summarised, or fatal with --strict."""
    missing: dict[tuple[str, int], tuple[str, ...]] = {}
    by_reason: collections.Counter[str] = collections.Counter()
    for lf in logic:
        for pos, sol in enumerate(lf.solutions):
            reasons = unsupported(sol)
            if reasons:
                missing[(lf.path, pos)] = reasons
                by_reason.update(reasons)
    if missing:
        ranked = ", ".join(f"{r} ({n})" for r, n in by_reason.most_common(8))
        msg = f"{len(missing)} solution(s) need features tensile-lite does not generate yet: {ranked}"
        if strict:
            first = next(iter(missing))
            raise BuildError(f"{msg}; first: {first[0]} solution position {first[1]} "
                             f"({', '.join(missing[first])}); drop --strict to build the rest")
        log(1, f"warning: {msg}; they are left out of the library (use --strict to fail instead; "
               "--verbose 2 names each)")
        # One line per solution, so a packager can tell exactly which tuned sizes lose their kernel.
        for lf in logic:
            for pos, sol in enumerate(lf.solutions):
                if (lf.path, pos) in missing:
                    log(2, f"left out: {lf.path} solution position {pos} "
                           f"(SolutionIndex {sol.index}, {sol.name or 'unnamed'}): {', '.join(missing[(lf.path, pos)])}")
    return missing


def converts(sol: Solution, decision: Decision | None = None) -> bool:
    """The kernel built for `sol` may leave split-K slices for the conversion kernels: a MultipleBuffer
    one that takes the runtime's GSU (`decision`: the gate's verdict, decided here when not given)."""
    return splits_for_conversion(sol) and runtime_overrides_read(sol, decision)["gsu"]


def helper_kernels(ap: ArchPlan, cov: int,
                   splits: Callable[[Solution], bool] = converts) -> list[KernelSource]:
    """The helper code object's kernels: the split-K conversion kernels (postgsu.py) of every problem
    type with an included kernel that may split into the workspace (`splits`), by name, after a no-op
    kernel that keeps the code object valid when nothing needs a helper."""
    by_name: dict[str, ConversionKernel] = {}
    for entry in ap.kernels.values():  # sorted by name: the first of equal names is always the same
        if splits(entry.solution):
            pt = entry.solution.problem_type
            for v in conversion_kernels(pt):
                by_name.setdefault(v.name, ConversionKernel(pt, v.bias_type, v.gsu_bucket, v.vw, v.name, ap.arch, cov))
    return [TrivialKernel(HELPER_KERNEL, ap.arch, cov), *(by_name[name] for name in sorted(by_name))]


def write_helper_code_object(toolchain: Toolchain, ap: ArchPlan, dest: Path, options: BuildOptions,
                             splits: Callable[[Solution], bool] = converts) -> BuildReport | None:
    """Kernels.so-000-<gfx>.hsaco, where hipBLASLt looks up the helper kernels by name; the report of
    building its kernels (None for the lone no-op kernel, assembled without the cache).

    Objects go to the temporary folder (TMPDIR); the code object is linked next to `dest`, in the
    output's filesystem, and moved from wherever it is, so TMPDIR may live on another filesystem."""
    cov = options.code_object_version
    kernels = helper_kernels(ap, cov, splits)
    tmp_parent = options.tmp_parent or Path(tempfile.gettempdir())
    if len(kernels) == 1:
        with private_dir(tmp_parent, "helpers") as tmp:
            obj = assemble(toolchain, kernels[0].assembly_text(), ap.arch, tmp / "helpers.o",
                           code_object_version=cov, timeout=options.tool_timeout)
            link(toolchain, [obj], dest, timeout=options.tool_timeout)
        return None
    with private_dir(dest.parent, "helpers") as linked:
        plan = CodeObjectPlan(dest.stem, ap.arch, [k.name for k in kernels])
        report = build_code_objects(toolchain, iter(kernels), [plan], linked, attrs.evolve(options, progress="off"))
        move_file(linked / "library" / f"{dest.stem}.co", dest)
    return report


def _sources_by_library(ap: ArchPlan, kernel_source: Callable[..., KernelSource],
                        verdict: Callable[[Solution], Decision], cov: int) -> Iterator[KernelSource]:
    """Kernels library by library, so each `.co` links (and its objects go) as early as possible. Each
    carries the gate's verdict on its solution, so the workers render it without deciding (or planning)
    again."""
    seen: set[str] = set()
    for _, names in ap.code_objects:
        for name in names:
            if name not in seen:
                seen.add(name)
                sol = ap.kernels[name].solution
                yield kernel_source(sol, name, code_object_version=cov, decision=verdict(sol))


def kernel_source_of(sol: Solution, name: str, *, code_object_version: int = 4,
                     decision: Decision | None = None) -> KernelSource:
    """The kernel the build assembles for `sol`: a custom kernel's own file (the gate's `CustomBuild`),
    else the GEMM writer's kernel."""
    decision = decide(sol) if decision is None else decision
    if isinstance(decision, CustomBuild):
        return CustomKernel(name, sol.arch, decision.source, code_object_version)
    return GemmKernel.of(sol, name, code_object_version=code_object_version, decision=decision)


def build_library(req: TclRequest, staging: Path, log: Log,
                  gate: Callable[[Solution], Decision] = decide,
                  kernel_source: Callable[..., KernelSource] = kernel_source_of,
                  failed_dir: Path | None = None) -> BuildSummary:
    """Write the complete library for `req` into `staging/library`; return what was written.

    `gate` (whose verdicts have `reasons`, empty when the solution is built) and `kernel_source` (given
    the verdict as `decision`) default to the GEMM writer's; tests substitute stand-ins to check the
    plumbing alone. The gate decides each solution once, here; the verdicts travel with the kernels.
    A kernel that fails to assemble has its text kept in `failed_dir` (default:
    `staging/failed-kernels`, which goes with the staging: the driver passes a folder that stays)."""
    interface = get_interface(req.interface)
    check_request(req, interface)
    logic = read_selected(req, log)
    # Each solution is decided once. By id: the library plan hands back the very objects it was given,
    # except a fallback file's, retargeted per architecture, which are decided when first seen; each
    # entry holds its solution, so no id is reused while the build runs.
    verdicts: dict[int, tuple[Solution, Decision]] = {
        id(sol): (sol, gate(sol)) for lf in logic for sol in lf.solutions}

    def verdict(sol: Solution) -> Decision:
        entry = verdicts.get(id(sol))
        if entry is None:
            entry = verdicts[id(sol)] = (sol, gate(sol))
        return entry[1]

    report_unsupported(logic, lambda sol: verdict(sol).reasons, req.strict, log)

    def supported(sol: Solution) -> bool | str:
        return ", ".join(verdict(sol).reasons) or True

    plan = build_plan(logic, archs=req.architectures or None, supported=supported, interface=interface,
                      lazy=req.lazy_loading)
    library = staging / "library"
    library.mkdir(parents=True, exist_ok=True)
    folders = arch_folders(interface, req.architectures or tuple(ap.arch for ap in plan.archs))
    for folder in folders:
        (library / folder).mkdir(parents=True, exist_ok=True)
    files: list[str] = []
    if req.manifest_only:
        for ap in plan.archs:
            folder = arch_folder(interface, ap.arch)
            files += [in_folder(folder, file_name(stem, req.library_format)) for stem in library_stems(ap)]
            files += [in_folder(folder, name) for name in code_object_names(ap)]
        files += mapping_names(interface, plan.archs, req.library_format)
        return _summary(files, logic, plan, 0, folders, req.library_format)

    toolchains = {ap.arch: find_toolchain_for(ap.arch, req.assembler, req.linker) for ap in plan.archs}
    # plain or compressed `.co` (codeobj/finish.py); the bundler is found and checked before any kernel is built
    finishes = {tc: finish_for(req.compress, req.interface, req.offload_bundler, tc)
                for tc in dict.fromkeys(toolchains.values())}
    for arch, tc in toolchains.items():
        log(2, f"toolchain for {arch}: {tc.describe()}")
    sharded = req.shard is not None or bool(req.merge_from)
    identities = ({tc: assembler_identity(tc) for tc in dict.fromkeys(toolchains.values())}
                  if req.cache_dir or sharded else {})
    caches = {tc: KernelCache(req.cache_dir, ident, req.cache_max_size) for tc, ident in identities.items()
              if req.cache_dir}
    jobs, note = usable_jobs(req.jobs)
    if note:
        log(1, note)
    tmp_parent = Path(tempfile.gettempdir())
    kernels_of = {ap.arch: [name for _, names in ap.code_objects for name in names] for ap in plan.archs}
    main_caches: dict[Toolchain, KernelCache | None] = dict(caches)
    if sharded:
        inputs = sharding.inputs_digest(req, logic)
        assemblers = {arch: identities[tc] for arch, tc in toolchains.items()}
        every = [(ap.arch, name) for ap in plan.archs for name in dict.fromkeys(kernels_of[ap.arch])]
        if req.shard is not None:
            return _build_shard(req, plan, every, inputs, assemblers, toolchains, caches, jobs, tmp_parent,
                                staging, kernel_source, verdict, failed_dir, log, files, folders, logic)
        shards = sharding.read_shards([Path(f) for f in req.merge_from])
        sharding.check_merge(shards, inputs, assemblers, every)
        # the shards' objects are this build's only source of kernel objects: nothing is assembled or stored
        main_caches = {tc: KernelCache(shards[0].objects, ident, None, [s.objects for s in shards[1:]],
                                       writable=False) for tc, ident in identities.items()}
    kernels_total = 0
    stats = _CacheTally()
    resources: dict[tuple[str, str], KernelResources] = {}
    text_facts: dict[tuple[str, str], Mapping[str, int]] = {}
    for ap in plan.archs:
        co_plans = [CodeObjectPlan(name, ap.arch, names) for name, names in ap.code_objects]
        toolchain = toolchains[ap.arch]
        if co_plans:
            sources = _sources_by_library(ap, kernel_source, verdict, req.code_object_version)
            options = BuildOptions(jobs=jobs, code_object_version=req.code_object_version,
                                   keep_build_tmp=req.keep_build_tmp, tmp_parent=tmp_parent,
                                   progress="auto" if req.verbose >= 1 else "off", tool_timeout=req.tool_timeout,
                                   failed_dir=failed_dir, finish=finishes[toolchain],
                                   cache=main_caches.get(toolchain), assemble_missing=not req.merge_from)
            report = build_code_objects(toolchain, sources, co_plans, staging, options)
            stats.add(report, log)
            resources.update(report.resources)
            text_facts.update(report.facts)
            place_code_objects(library, interface, ap)
            kernels_total += len(ap.kernels)
        helper_options = BuildOptions(jobs=jobs, code_object_version=req.code_object_version,
                                      tmp_parent=tmp_parent, progress="off", tool_timeout=req.tool_timeout,
                                      failed_dir=failed_dir, cache=caches.get(toolchain))
        folder = arch_folder(interface, ap.arch)
        helpers = write_helper_code_object(toolchain, ap, library / in_folder(folder, helper_code_object(ap.arch)),
                                           helper_options, splits=lambda sol: converts(sol, verdict(sol)))
        if helpers is not None:
            stats.add(helpers, log, helper=True)
        written = write_arch(ap, library, req.library_format,
                             honoured=lambda sol: runtime_overrides_read(sol, verdict(sol)),
                             facts=_facts_of(ap.arch, resources, text_facts))
        files += [p.relative_to(library).as_posix() for p in written]
        files += [in_folder(folder, name) for name in code_object_names(ap)]
    # after every architecture: a 7.0-7.2 mapping covers them all
    files += [p.relative_to(library).as_posix() for p in write_mappings(plan, library, req.library_format)]
    stats.finish(caches.values(), log)
    if req.merge_from:
        log(1, f"merge: {stats.cached} of {stats.objects} kernel objects from {len(req.merge_from)} shard(s), "
               f"{stats.objects - stats.cached} assembled")
    return _summary(files, logic, plan, kernels_total, folders, req.library_format)


def _facts_of(arch: str, resources: Mapping[tuple[str, str], KernelResources],
              text_facts: Mapping[tuple[str, str], Mapping[str, int]]) -> FactsOf:
    """What each built kernel of `arch` says of itself, for the 7.x entries' post-build fields: its
    occupancy from its code object, its loop's issue slots from its text (0 where the text says nothing:
    custom kernels)."""
    target = get_target(arch)

    def facts(kernel: str) -> KernelFacts | None:
        res = resources.get((arch, kernel))
        if res is None:
            return None
        clocks = text_facts.get((arch, kernel), {}).get(MATH_CLOCKS, 0)
        return KernelFacts(runtime_occupancy(res, target), clocks)

    return facts


class _CacheTally:
    """What the kernel cache did over a build's code objects, logged at its end."""

    def __init__(self) -> None:
        self.objects = 0
        self.cached = 0
        # the helper code objects' kernels (conversion kernels), counted apart: shards do not carry them
        self.helper_objects = 0
        self.helper_cached = 0

    def add(self, report: BuildReport, log: Log, helper: bool = False) -> None:
        if helper:
            self.helper_objects += report.kernels_assembled
            self.helper_cached += report.kernels_cached
        else:
            self.objects += report.kernels_assembled
            self.cached += report.kernels_cached
        for note in report.cache_notes:
            log(2, f"kernel cache: {note}")
        if report.cache_notes:
            log(1, f"kernel cache: {len(report.cache_notes)} problem(s) met and worked around (--verbose 2 names them)")

    def finish(self, caches: Iterable[KernelCache], log: Log) -> None:
        """Evict each cache folder down to its limit (once per folder) and say what the cache did."""
        done: set[Path] = set()
        for cache in caches:
            if cache.root in done or cache.max_size is None:
                continue
            done.add(cache.root)
            try:
                removed, removed_bytes, held = cache.evict()
            except OSError as exc:  # a cache we cannot trim costs disk, not the build
                log(1, f"warning: kernel cache {cache.root}: eviction failed: {exc.strerror or exc}")
                continue
            log(1, f"kernel cache {cache.root}: {self.cached} of {self.objects} kernel objects from the cache, "
                   f"{self.objects - self.cached} assembled; {self.helper_cached} of {self.helper_objects} helper "
                   f"objects from the cache; {removed} entries evicted "
                   f"({removed_bytes / 2**20:.2f} MiB), {held / 2**20:.2f} MiB held (limit "
                   f"{cache.max_size / 2**20:.0f} MiB)")


def _build_shard(req: TclRequest, plan: LibraryPlan, every: list[sharding.KernelId], inputs: str,
                 assemblers: dict[str, str], toolchains: dict[str, Toolchain], caches: dict[Toolchain, KernelCache],
                 jobs: int, tmp_parent: Path, staging: Path, kernel_source: Callable[..., KernelSource],
                 verdict: Callable[[Solution], Decision], failed_dir: Path | None, log: Log, files: list[str],
                 folders: tuple[str, ...], logic: list[LogicFile]) -> BuildSummary:
    """Shard i of N: this shard's kernels assembled (or taken from the kernel cache) into
    `OutputPath/objects`, then the manifest; no library."""
    assert req.shard is not None
    index, count = req.shard
    entries = {ap.arch: ap.kernels for ap in plan.archs}
    owner = sharding.assign([(kid, sharding.kernel_cost(entries[kid[0]][kid[1]].solution)) for kid in every], count)
    mine = [kid for kid in every if owner[kid] == index]
    folder = Path(req.output_path)
    (folder / sharding.MANIFEST).unlink(missing_ok=True)  # an older shard's manifest must not outlive its objects
    shutil.rmtree(folder / sharding.OBJECTS, ignore_errors=True)
    stats = _CacheTally()
    for ap in plan.archs:
        names = [name for arch, name in mine if arch == ap.arch]
        if not names:
            continue
        toolchain = toolchains[ap.arch]
        user = caches.get(toolchain)
        store = KernelCache(folder / sharding.OBJECTS, assemblers[ap.arch], None, [user.root] if user else [])
        sources = (kernel_source(ap.kernels[n].solution, n, code_object_version=req.code_object_version,
                                 decision=verdict(ap.kernels[n].solution)) for n in names)
        options = BuildOptions(jobs=jobs, code_object_version=req.code_object_version, tmp_parent=tmp_parent,
                               progress="auto" if req.verbose >= 1 else "off", tool_timeout=req.tool_timeout,
                               failed_dir=failed_dir, cache=store, link=False)
        stats.add(build_code_objects(toolchain, sources, [CodeObjectPlan(f"shard-{ap.arch}", ap.arch, names)],
                                     staging, options), log)
    sharding.write_manifest(folder, req, inputs, assemblers, mine)
    log(1, f"shard {index}/{count}: {len(mine)} of {len(every)} kernels in {folder / sharding.OBJECTS} "
           f"({stats.cached} from the kernel cache)")
    return _summary(files, logic, plan, len(mine), folders, req.library_format)


def _summary(files: list[str], logic: list[LogicFile], plan: LibraryPlan, kernels: int,
             folders: tuple[str, ...], fmt: str) -> BuildSummary:
    roots = [in_folder(arch_folder(plan.interface, ap.arch), file_name(ap.master_name, fmt)) for ap in plan.archs]
    roots += mapping_names(plan.interface, plan.archs, fmt)
    return BuildSummary(tuple(files), sum(len(lf.solutions) for lf in logic),
                        sum(ap.solution_count for ap in plan.archs), kernels, tuple(a.arch for a in plan.archs),
                        folders, tuple(roots))


def arch_folders(interface: Interface, archs: tuple[str, ...]) -> tuple[str, ...]:
    """The per-architecture folders a build makes, one per requested architecture even when it gets no
    library (develop's Run.py creates them before writing anything), or none for a flat layout."""
    return tuple(sorted({f for f in (arch_folder(interface, a) for a in archs) if f}))


def place_code_objects(library: Path, interface: Interface, ap: ArchPlan) -> None:
    """Where a finished `.co` is published in the staging library: the linker writes it to `library/`, and
    it moves into the architecture's folder when the interface has one. The one hook for code objects."""
    folder = arch_folder(interface, ap.arch)
    if not folder:
        return
    for name, _ in ap.code_objects:
        move_file(library / f"{name}.co", library / folder / f"{name}.co")


def check_request(req: TclRequest, interface: Interface) -> None:
    """Refuse at once, before any work, what the writer cannot produce for `interface` yet."""
    if not req.lazy_loading and not interface.eager_master:
        eager = ", ".join(i.name for i in INTERFACES.values() if i.eager_master)
        raise TensileLiteError(f"--no-lazy-library-loading: no layout without lazy loading is written for the "
                               f"{interface.name} runtime (only for {eager}); drop the flag")
    if req.shard is not None and (req.manifest_only or req.merge_from):
        raise TensileLiteError("--shard builds objects only: it goes with neither --generate-manifest-and-exit "
                               "nor a merge")
    if req.library_format not in FORMATS:
        raise TensileLiteError(f"--library-format {req.library_format} is not supported yet; use one of "
                               f"{', '.join(FORMATS)} (default for {interface.name}: "
                               f"{interface.default_library_format})")
    if req.library_format in INDEXED_FORMATS and not interface.reads_indexed:
        readers = ", ".join(i.name for i in INTERFACES.values() if i.reads_indexed)
        raise TensileLiteError(f"--library-format {req.library_format}: the {interface.name} runtime cannot read "
                               f"indexed .dat files (format_version 2); only {readers} does. Use "
                               f"{interface.default_library_format}, or --interface {readers}")
