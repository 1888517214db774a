"""The streaming code-object build: kernels in, one linked `.co` per library out (compressed into an
offload bundle right after linking when the build asks for it, finish.py).

Upstream writes every `.s`, `.o` (and a useless per-kernel `.co`) into build_tmp and links at the
very end (tcl_anatomy.md §3.5, §3.7), so temporary disk grows with the library. Here workers
assemble kernels from stdin, the parent links a library the moment its last kernel is ready and
deletes each object as soon as no unlinked library needs it. Temporary disk is bounded by the
objects of libraries still open; memory by `jobs`, since the parent never holds assembly text.

Kernels are consumed in the order given; yielding them library by library (as the library files
are planned) keeps the temporary disk to about one library's objects.

Outputs are independent of `jobs` and completion order: a library's objects are linked sorted
by kernel name, and every `.co` appears atomically (`link` writes a temporary and renames it).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from multiprocessing.context import SpawnContext
from pathlib import Path
from typing import Any, TextIO

import attrs

from tensile_lite.codeobj.assemble import CODE_OBJECT_VERSIONS, LINK_BATCH, link
from tensile_lite.codeobj.cache import KernelCache
from tensile_lite.codeobj.elf import CodeObjectInfo, check_kernels, read_code_object
from tensile_lite.codeobj.finish import CodeObjectFinish, finish_code_object
from tensile_lite.codeobj.proc import DEFAULT_TOOL_TIMEOUT
from tensile_lite.codeobj.progress import Progress
from tensile_lite.codeobj.resources import KernelResources, kernel_resources
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.codeobj.trivial import METADATA_VERSION
from tensile_lite.codeobj.worker import (
    AssembleResult,
    AssembleTask,
    KernelSource,
    init_worker,
    run_pooled_task,
    run_task,
)
from tensile_lite.errors import BuildError, DiskFull, ToolFailure
from tensile_lite.targets import bare_gfx, get_target
from tensile_lite.workdirs import private_dir

__all__ = ["BuildOptions", "BuildReport", "KernelSource", "LibraryPlan", "available_cores",
           "build_code_objects", "usable_jobs"]

# Tasks queued per worker: enough that a worker never waits for the parent while it links,
# few enough that nothing piles up.
_QUEUE_PER_JOB = 2
_SLOT_WAIT = 30.0  # seconds; far longer than any single assembler run
_KernelKey = tuple[str, str]  # (arch, kernel name): names need only be unique per architecture
# What one job costs at its peak: a worker (~60 MB) and the clang it runs (~60-80 MB), with headroom.
JOB_MEMORY = 192 * 2**20
_WORKER_STOP_WAIT = 5.0  # seconds a stopped worker gets to kill its assembler and exit before SIGKILL


def available_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def available_memory() -> int | None:
    """Bytes this process tree may still use: MemAvailable, or less under a cgroup (v2) memory limit."""
    avail = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        avail = None
    limit = _read_int("/sys/fs/cgroup/memory.max")
    used = _read_int("/sys/fs/cgroup/memory.current")
    if limit is not None and used is not None:
        room = max(limit - used, 0)
        avail = room if avail is None else min(avail, room)
    return avail


def usable_jobs(requested: int | None) -> tuple[int, str | None]:
    """`requested` (None: every core) capped to the usable cores and to memory, with a note when lowered."""
    cores = available_cores()
    memory = available_memory()
    by_memory = max(1, memory // JOB_MEMORY) if memory is not None else cores
    jobs = max(1, min(requested or cores, cores, by_memory))
    mem_text = f"{memory // 2**20} MiB available memory (~{JOB_MEMORY // 2**20} MiB per job)" if memory else ""
    if requested is None:
        if jobs < cores:
            return jobs, f"note: using {jobs} job(s), not one per core ({cores}): only {mem_text}"
        return jobs, None
    if jobs >= requested:
        return jobs, None
    why = [f"{cores} usable core(s)"] + ([mem_text] if by_memory < requested and mem_text else [])
    return jobs, f"note: --jobs {requested} lowered to {jobs} ({' and '.join(why)})"


def _name_tuple(names: Iterable[str]) -> tuple[str, ...]:
    # A typed converter: the attrs plugin cannot see through a bare `tuple` converter.
    return tuple(names)


@attrs.frozen(slots=True)
class LibraryPlan:
    """One code object to produce: `<out>/library/<name>.co` holding `kernel_names` for `arch`."""

    name: str
    arch: str = attrs.field(converter=bare_gfx)
    kernel_names: tuple[str, ...] = attrs.field(converter=_name_tuple)


@attrs.frozen(slots=True)
class BuildOptions:
    jobs: int | None = None  # None: every available core
    code_object_version: int = 4
    keep_build_tmp: bool = False  # keep `.s` and `.o` in `<out>/build_tmp` for debugging
    tmp_parent: Path | None = None  # where the private temporary folder goes; default: the output folder
    progress: str = "auto"  # auto, tty, plain, off
    progress_every: float = 10.0  # seconds between plain progress lines
    verify: bool = True  # read each `.co` back and check every kernel is complete
    link_batch: int = LINK_BATCH
    tool_timeout: float | None = DEFAULT_TOOL_TIMEOUT  # seconds per assembler/linker call; None: no limit
    failed_dir: Path | None = None  # where a failing kernel's text is kept; default: `<out>/failed-kernels`
    finish: CodeObjectFinish = attrs.field(factory=CodeObjectFinish)  # how a linked `.co` is published
    cache: KernelCache | None = None  # the kernel cache (cache.py): objects looked up first, stored after assembling
    assemble_missing: bool = True  # False: every object must come from the cache (a merge of shards)
    link: bool = True  # False: objects only (a shard build fills its store), no `.co` written


@attrs.frozen(slots=True)
class BuildReport:
    kernels_assembled: int
    libraries_linked: int
    wall_seconds: float
    peak_tmp_bytes: int
    output_bytes: int
    jobs: int
    libraries: tuple[Path, ...]
    kernels_unused: tuple[str, ...] = ()  # supplied but in no library, so not assembled
    build_tmp: Path | None = None  # set when keep_build_tmp kept it
    kernels_cached: int = 0  # of kernels_assembled, taken from the kernel cache (no assembler run)
    cache_notes: tuple[str, ...] = ()  # corrupt entries found and rebuilt, a cache that could not be written
    # (arch, kernel) -> what it occupies, read back from the linked code objects (resources.py)
    resources: Mapping[tuple[str, str], KernelResources] = attrs.field(factory=dict, repr=False)
    # (arch, kernel) -> what its text said of it (KernelSource.text_facts), for sources that say anything
    facts: Mapping[tuple[str, str], Mapping[str, int]] = attrs.field(factory=dict, repr=False)

    @property
    def kernels_per_second(self) -> float:
        return self.kernels_assembled / self.wall_seconds if self.wall_seconds > 0 else 0.0

    def summary(self) -> str:
        kept = f"; build files kept in {self.build_tmp}" if self.build_tmp else ""
        unused = f"; {len(self.kernels_unused)} kernel(s) in no library skipped" if self.kernels_unused else ""
        cached = (f" ({self.kernels_cached} taken from the kernel cache, {self.kernels_assembled - self.kernels_cached} "
                  "by the assembler)" if self.kernels_cached else "")
        return (f"code objects: {self.kernels_assembled} kernels assembled{cached}, {self.libraries_linked} "
                f"libraries linked ({_mib(self.output_bytes)}) in {self.wall_seconds:.1f} s "
                f"({self.kernels_per_second:.1f} kernels/s, jobs {self.jobs}); peak temporary disk "
                f"{_mib(self.peak_tmp_bytes)}{unused}{kept}")


def _mib(n: int) -> str:
    return f"{n / 2**20:.2f} MiB"


def _mp_context() -> SpawnContext:
    # spawn: workers start clean (no inherited parent state, no fork-with-threads hazards) and are the
    # parent's own children, so `time` and wait4 account their CPU (a forkserver's would be lost).
    return get_context("spawn")


class _Ledger:
    """The parent's bookkeeping of one build: which library waits for what, who still needs an object."""

    def __init__(self, libraries: Sequence[LibraryPlan], solutions_of: Mapping[str, Sequence[str]]) -> None:
        self.libraries = libraries
        self.solutions_of = solutions_of
        self.users: dict[_KernelKey, list[LibraryPlan]] = {}
        self.pending: dict[str, int] = {}
        seen_names: set[str] = set()
        for lib in libraries:
            if lib.name in seen_names:
                raise BuildError(f"library {lib.name} is planned twice")
            seen_names.add(lib.name)
            if not lib.name or "/" in lib.name or lib.name.startswith("."):
                raise BuildError(f"library name {lib.name!r} cannot be a file name under library/")
            kernels = sorted(set(lib.kernel_names))
            if not kernels:
                raise BuildError(f"library {lib.name} has no kernels; it needs no code object")
            self.pending[lib.name] = len(kernels)
            for k in kernels:
                self.users.setdefault((lib.arch, k), []).append(lib)
        self.refs = {key: len(libs) for key, libs in self.users.items()}
        self.objects: dict[_KernelKey, tuple[Path, int]] = {}
        self.submitted: set[_KernelKey] = set()
        self.unused: list[str] = []
        self.cached = 0
        self.cache_notes: list[str] = []
        self.tmp_bytes = 0
        self.peak_tmp_bytes = 0

    @property
    def total(self) -> int:
        return len(self.users)

    def accept(self, source: KernelSource) -> bool:
        """Whether this kernel must be assembled (needed by a library and not already sent)."""
        key = (bare_gfx(source.arch), source.name)
        if key not in self.users:
            self.unused.append(f"{source.name} ({key[0]})")
            return False
        if key in self.submitted:
            return False
        self.submitted.add(key)
        return True

    def add_tmp(self, n: int) -> None:
        self.tmp_bytes += n
        self.peak_tmp_bytes = max(self.peak_tmp_bytes, self.tmp_bytes)

    def describe_kernel(self, arch: str, name: str) -> str:
        libs = ", ".join(lib.name for lib in self.users.get((arch, name), ()))
        sols = list(self.solutions_of.get(name, ()))
        shown = ", ".join(sols[:5]) + (f" and {len(sols) - 5} more" if len(sols) > 5 else "")
        used = f"; used by solution(s) {shown}" if sols else ""
        return f"kernel {name} ({arch}){used}; in library {libs}"

    def missing(self) -> list[str]:
        out = []
        for lib in self.libraries:
            if self.pending[lib.name] > 0:
                absent = [k for k in sorted(set(lib.kernel_names)) if (lib.arch, k) not in self.objects]
                out.append(f"{lib.name} lacks {', '.join(absent[:3])}"
                           + (f" and {len(absent) - 3} more" if len(absent) > 3 else ""))
        return out


class _Builder:
    def __init__(self, toolchain: Toolchain, libraries: Sequence[LibraryPlan], out_dir: Path,
                 options: BuildOptions, solutions_of: Mapping[str, Sequence[str]],
                 stream: TextIO | None) -> None:
        self.toolchain = toolchain
        self.options = options
        self.out_dir = out_dir
        self.lib_dir = out_dir / "library"
        self.failed_dir = options.failed_dir or out_dir / "failed-kernels"
        self.ledger = _Ledger(libraries, solutions_of)
        self.progress = Progress(self.ledger.total, stream, options.progress,
                                 plain_every=options.progress_every)
        self.linked: list[Path] = []
        self.resources: dict[tuple[str, str], KernelResources] = {}
        self.facts: dict[tuple[str, str], Mapping[str, int]] = {}
        self.output_bytes = 0
        self.tmp: Path | None = None
        self.tool_slots: Any = None

    def task(self, source: KernelSource) -> AssembleTask:
        assert self.tmp is not None
        obj_dir = self.tmp / bare_gfx(source.arch)
        obj_dir.mkdir(exist_ok=True)
        return AssembleTask(source, self.toolchain, obj_dir, self.failed_dir,
                            self.options.code_object_version, self.options.keep_build_tmp,
                            self.options.tool_timeout, self.options.cache, self.options.assemble_missing)

    def handle(self, result: AssembleResult) -> None:
        arch = bare_gfx(result.arch)
        if result.cache_note:
            self.ledger.cache_notes.append(f"{result.name} ({arch}): {result.cache_note}")
        if result.error is not None or result.object_path is None:
            where = f"\n  its assembly text is in {result.failed_text}" if result.failed_text else ""
            error = {"tool": ToolFailure, "disk": DiskFull}.get(result.failure, BuildError)
            raise error(f"{self.ledger.describe_kernel(arch, result.name)}: {result.error}{where}")
        key = (arch, result.name)
        if result.facts:
            self.facts[key] = dict(result.facts)
        self.ledger.objects[key] = (result.object_path, result.object_bytes)
        self.ledger.add_tmp(result.object_bytes + result.text_bytes_kept)
        self.ledger.cached += result.cached
        self.progress.advance()
        for lib in self.ledger.users[key]:
            self.ledger.pending[lib.name] -= 1
            if self.ledger.pending[lib.name] == 0:
                if self.options.link:
                    self.link_library(lib)
                else:
                    self.release_objects(lib.arch, sorted(set(lib.kernel_names)))

    def link_library(self, lib: LibraryPlan) -> None:
        names = sorted(set(lib.kernel_names))
        objects = [self.ledger.objects[(lib.arch, n)][0] for n in names]
        dest = self.lib_dir / f"{lib.name}.co"
        assert self.tmp is not None
        finish = self.options.finish
        linked = finish.link_target(dest, self.tmp)
        with self.tool_slot():
            link(self.toolchain, objects, linked, batch=self.options.link_batch,
                 timeout=self.options.tool_timeout)
            # Linked: objects no other library needs go before the raw `.co` is compressed, so the two never
            # add up on the temporary disk.
            self.release_objects(lib.arch, names)
            raw_bytes = linked.stat().st_size if linked != dest else 0
            self.ledger.add_tmp(raw_bytes)
            try:
                finish_code_object(linked, dest, lib.arch, finish, timeout=self.options.tool_timeout)
            finally:
                self.ledger.add_tmp(-raw_bytes)
        try:
            info = read_code_object(dest)
            if self.options.verify:
                self.verify(lib, dest, info, names)
        except BuildError:
            dest.unlink(missing_ok=True)
            raise
        target = get_target(bare_gfx(lib.arch))
        wanted = set(names)
        self.resources.update(((lib.arch, n), r) for n, r in kernel_resources(info, target).items() if n in wanted)
        self.linked.append(dest)
        self.output_bytes += dest.stat().st_size

    def release_objects(self, arch: str, names: Sequence[str]) -> None:
        """One library fewer needs each of these objects; delete those no library needs any more."""
        for n in names:
            key = (arch, n)
            self.ledger.refs[key] -= 1
            if self.ledger.refs[key] == 0 and not self.options.keep_build_tmp:
                path, size = self.ledger.objects[key]
                path.unlink(missing_ok=True)
                self.ledger.add_tmp(-size)

    @contextlib.contextmanager
    def tool_slot(self) -> Iterator[None]:
        """Hold one of the `jobs` LLVM process slots while linking. A worker that died holding one never
        gives it back; the pool reports that death, so after a while we link without a slot instead of
        hanging before we get to see it."""
        got = self.tool_slots is not None and self.tool_slots.acquire(timeout=_SLOT_WAIT)
        try:
            yield
        finally:
            if got:
                self.tool_slots.release()

    def verify(self, lib: LibraryPlan, dest: Path, info: CodeObjectInfo, names: Sequence[str]) -> None:
        check_kernels(info, names)
        want = f"amdgcn-amd-amdhsa--{lib.arch}"
        if info.target and info.target != want:
            raise BuildError(f"{dest} targets {info.target}, not {want}")
        cov = self.options.code_object_version
        if info.code_object_version != cov:
            raise BuildError(f"{dest} is code object v{info.code_object_version}, not v{cov}")
        # clang accepts any amdhsa.version; the runtime reads the metadata by it, so it must match.
        want_meta = (METADATA_VERSION[cov],)
        if info.metadata_versions != want_meta:
            got = ", ".join(".".join(map(str, v)) for v in info.metadata_versions) or "none"
            raise BuildError(f"{dest}: amdhsa.version {got} in its metadata does not match code object "
                             f"v{cov} (needs {'.'.join(map(str, want_meta[0]))}); the kernel writer "
                             f"emitted the wrong version")

    @staticmethod
    def result_of(future: Future[AssembleResult], src: KernelSource) -> AssembleResult:
        """The worker's result; an exception outside run_task's own handling (a source that cannot be
        pickled, a full disk) still becomes an error naming the kernel."""
        try:
            return future.result()
        except BrokenProcessPool:
            raise
        except Exception as exc:
            return AssembleResult(src.name, src.arch, None, error=f"worker failed: {type(exc).__name__}: {exc}")

    def run_serial(self, sources: Iterator[KernelSource]) -> None:
        for src in sources:
            if self.ledger.accept(src):
                self.handle(run_task(self.task(src)))

    def run_parallel(self, sources: Iterator[KernelSource], jobs: int) -> None:
        ctx = _mp_context()
        # At most `jobs` LLVM processes at once, the parent's links included: clang and ld.lld are
        # ~60-80 MB each, the bulk of the tree's RSS.
        self.tool_slots = ctx.BoundedSemaphore(jobs)
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=init_worker,
                                   initargs=(self.tool_slots, os.getpid()))
        in_flight: dict[Future[AssembleResult], KernelSource] = {}
        finished = False
        try:
            exhausted = False
            while True:
                while not exhausted and len(in_flight) < jobs * _QUEUE_PER_JOB:
                    src = next(sources, None)
                    if src is None:
                        exhausted = True
                    elif self.ledger.accept(src):
                        in_flight[pool.submit(run_pooled_task, self.task(src))] = src
                if not in_flight:
                    break
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                results = [self.result_of(f, in_flight.pop(f)) for f in done]
                # Same-batch results in name order, so which failure is reported first is stable.
                for result in sorted(results, key=lambda r: (r.arch, r.name)):
                    self.handle(result)
            finished = True
        except BrokenProcessPool as exc:
            raise BuildError(f"a worker process died ({exc}); the build was stopped") from exc
        finally:
            if not finished:  # an error or a signal: running assembler calls are not waited for
                _stop_workers(pool)
            # Wait for the workers so none writes into the folder we are about to remove.
            pool.shutdown(wait=True, cancel_futures=True)

    def _tmp_dir(self) -> contextlib.AbstractContextManager[Path]:
        """`<out>/build_tmp` when kept, else a private, locked folder removed afterwards (see workdirs)."""
        if self.options.keep_build_tmp:
            kept = self.out_dir / "build_tmp"
            kept.mkdir(parents=True, exist_ok=True)
            return contextlib.nullcontext(kept)
        parent = self.options.tmp_parent or self.out_dir
        parent.mkdir(parents=True, exist_ok=True)
        return private_dir(parent, "tmp")

    def build(self, kernels: Iterable[KernelSource], jobs: int) -> BuildReport:
        start = time.monotonic()
        self.lib_dir.mkdir(parents=True, exist_ok=True)
        keep = self.options.keep_build_tmp
        with self._tmp_dir() as tmp:
            self.tmp = tmp
            self._run(kernels, jobs)
        report = BuildReport(
            kernels_assembled=len(self.ledger.objects), libraries_linked=len(self.linked),
            wall_seconds=time.monotonic() - start, peak_tmp_bytes=self.ledger.peak_tmp_bytes,
            output_bytes=self.output_bytes, jobs=jobs, libraries=tuple(sorted(self.linked)),
            kernels_unused=tuple(self.ledger.unused), build_tmp=self.tmp if keep else None,
            kernels_cached=self.ledger.cached, cache_notes=tuple(self.ledger.cache_notes),
            resources=dict(self.resources), facts=dict(self.facts))
        self.progress.message(report.summary())
        return report

    def _run(self, kernels: Iterable[KernelSource], jobs: int) -> None:
        try:
            sources = iter(kernels)
            if jobs == 1:
                self.run_serial(sources)
            else:
                self.run_parallel(sources, jobs)
            missing = self.ledger.missing()
            if missing:
                raise BuildError("kernels were never supplied for: " + "; ".join(missing[:5])
                                 + (f" (and {len(missing) - 5} more libraries)" if len(missing) > 5 else ""))
        finally:
            self.progress.close()


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Stop every worker now: SIGTERM makes each kill its assembler and exit (worker._stop); one that does
    not within a few seconds is killed. The executor has no public way to reach its processes before
    Python 3.14 (`terminate_workers`), hence the private attribute, read defensively."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for proc in processes:
        with contextlib.suppress(Exception):
            proc.terminate()
    deadline = time.monotonic() + _WORKER_STOP_WAIT
    for proc in processes:
        with contextlib.suppress(Exception):
            proc.join(max(deadline - time.monotonic(), 0.0))
            if proc.is_alive():
                proc.kill()
                proc.join(1.0)


def build_code_objects(
    toolchain: Toolchain,
    kernels: Iterable[KernelSource],
    libraries: Sequence[LibraryPlan],
    out_dir: Path,
    options: BuildOptions | None = None,
    *,
    solutions_of: Mapping[str, Sequence[str]] | None = None,
    stream: TextIO | None = sys.stderr,
) -> BuildReport:
    """Assemble `kernels` and link them into `<out_dir>/library/<plan.name>.co`, one per plan.

    `kernels` is consumed lazily; a kernel named by several plans is assembled once. `solutions_of`
    (kernel name -> solution names) is only used to name solutions in error messages. On any error
    or interrupt the temporaries are removed and no partial `.co` is left; a kernel that fails to
    assemble has its text written to `<out_dir>/failed-kernels/`, whose path the BuildError shows.
    """
    options = options or BuildOptions()
    if options.code_object_version not in CODE_OBJECT_VERSIONS:
        raise BuildError(f"code object version {options.code_object_version} is not supported; use 4 or 5")
    if options.jobs is not None and options.jobs < 1:
        raise BuildError(f"--jobs must be at least 1, not {options.jobs}")
    jobs, _note = usable_jobs(options.jobs)  # the driver reports the note; here the cap alone matters
    # Fail before any work on a target this LLVM cannot build (the driver runs the full probe once,
    # `probe.require_targets`; this is the cheap table check).
    for arch in sorted({lib.arch for lib in libraries}):
        toolchain.check_target(arch)
    builder = _Builder(toolchain, libraries, Path(out_dir), options, solutions_of or {}, stream)
    return builder.build(kernels, jobs)
