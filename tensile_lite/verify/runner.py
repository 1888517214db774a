"""Verify every kernel of a built library on the emulator: the orchestration behind `verify-library`."""

from __future__ import annotations

import collections
import time
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from tensile_lite.emu import CodeObjectError, Emulator, EmulatorError
from tensile_lite.errors import Where
from tensile_lite.library.formats import DatError
from tensile_lite.verify import contract, conversion, grouped, library, runtime_args
from tensile_lite.verify.errors import DamagedEntry, NotVerifiable, VerifyError
from tensile_lite.verify.integrity import DAMAGE, check_code_object
from tensile_lite.verify.launch import run_case
from tensile_lite.verify.mapping import TileOrder
from tensile_lite.verify.predicates import Call, evaluate
from tensile_lite.verify.problems import Case, cases, device_cu_count
from tensile_lite.verify.reference import check_types
from tensile_lite.verify.report import FAILED, PASSED, SKIPPED, Failure, KernelOutcome, Report
from tensile_lite.verify.runtime_view import RuntimeSolution, runtime_solution

Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def select(outdir: str | Path, arch: str | None = None, limit: int | None = None) -> list[library.LibraryKernel]:
    """The kernels to verify: every architecture (or `arch`), sorted by architecture and name, the first
    `limit` of them when given. Every file they need is checked first (`check_integrity`)."""
    lib = library.library_dir(outdir)
    archs = [arch] if arch else sorted(library.masters(lib))
    found = [k for a in archs for k in library.kernels(lib, a)]
    chosen = found[:limit] if limit is not None else found
    check_integrity(lib, chosen)
    return chosen


def _placeholder_dat(k: library.LibraryKernel) -> Path:
    return next((p for p in k.code_object.parent.glob(f"{k.placeholder}.*") if p.suffix != ".co"), k.code_object)


def check_integrity(lib: Path, todo: list[library.LibraryKernel]) -> None:
    """Damage is an error naming the file, before any kernel runs: each entry must describe a kernel a build
    could have written, each code object present must open as an AMDGPU code object, and the helper code object
    of each architecture (Kernels.so-000-<gfx>.hsaco), when present, must open even if no kernel needs it."""
    by_code_object: dict[Path, list[str]] = collections.defaultdict(list)  # code object -> its kernels
    for k in todo:
        try:
            runtime_solution(k.entry, k.arch)
        except DamagedEntry as exc:
            raise VerifyError(f"damaged entry for kernel {k.name}: {exc.reason}",
                              Where(file=str(_placeholder_dat(k)))) from None
        except NotVerifiable:
            pass  # not damage: the kernel is reported as skipped with this reason
        except DAMAGE as exc:
            raise VerifyError(f"damaged entry for kernel {k.name} ({type(exc).__name__}: {exc})",
                              Where(file=str(_placeholder_dat(k)))) from None
        by_code_object[k.code_object].append(k.name)
    try:
        for arch in sorted({k.arch for k in todo}):
            helper = conversion.helper_code_object(lib, arch)
            if helper.exists():  # a missing one fails the split-K kernels that need it, each by name
                check_code_object(helper, (), arch)
        for path in sorted(by_code_object):
            if path.exists():  # a missing one, or a kernel missing from it, fails its kernels each by name
                check_code_object(path, (), next(k.arch for k in todo if k.code_object == path))
    except DatError as exc:
        raise VerifyError(exc.message, exc.where) from None


def case_rng(seed: int, kernel: str, case: str) -> np.random.Generator:
    """Inputs depend only on the seed, the kernel and the case, not on which other kernels or cases run."""
    return np.random.default_rng([seed, zlib.crc32(kernel.encode()), zlib.crc32(case.encode())])


class _Emulators:
    """One Emulator per code object, so a code object is disassembled once for all its kernels.

    Memory stays bounded: each kernel's compiled image is released once it is verified (`done`), and
    when the kernels still to verify are known (`pending`), a code object's emulator, disassembly
    included, is dropped after its last one. Helper code objects (conversion kernels shared by many
    GEMM kernels) are kept."""

    def __init__(self, pending: Iterable[library.LibraryKernel] = ()) -> None:
        self._by_path: dict[Path, Emulator] = {}
        self._pending = collections.Counter(k.code_object for k in pending)

    def get(self, path: Path) -> Emulator:
        emu = self._by_path.get(path)
        if emu is None:
            emu = self._by_path[path] = Emulator(path)
        return emu

    def done(self, k: library.LibraryKernel) -> None:
        """`k` is verified: release its compiled image, and its code object after the last pending kernel."""
        emu = self._by_path.get(k.code_object)
        if emu is not None:
            emu.release(k.name)
        if self._pending[k.code_object] > 0:
            self._pending[k.code_object] -= 1
            if self._pending[k.code_object] == 0:
                self._by_path.pop(k.code_object, None)

    def loaded(self) -> int:
        """How many code objects are held (for tests of the bound)."""
        return len(self._by_path)


def verify_kernel(k: library.LibraryKernel, emulators: _Emulators, seed: int = 0,
                  progress: Progress = _quiet) -> KernelOutcome:
    """Verify one kernel (the library's view of it in `k`), then release its compiled image."""
    try:
        return _verify_kernel(k, emulators, seed, progress)
    finally:
        emulators.done(k)


def _verify_kernel(k: library.LibraryKernel, emulators: _Emulators, seed: int, progress: Progress) -> KernelOutcome:
    start = time.perf_counter()

    def outcome(status: str, **fields) -> KernelOutcome:
        return KernelOutcome(k.arch, k.name, status, seconds=time.perf_counter() - start, **fields)

    try:
        rs = runtime_solution(k.entry, k.arch)
        contract.check_launchable(rs)
        check_types(rs.problem_type, k.arch)
    except NotVerifiable as exc:
        return outcome(SKIPPED, reason=exc.reason)
    if not k.code_object.is_file():
        return outcome(FAILED, failures=(Failure("code object", f"{k.code_object.name} is missing"),))
    try:
        emu = emulators.get(k.code_object)
        if k.name not in emu.kernel_names():
            return outcome(FAILED, failures=(Failure("code object", f"{k.code_object.name} has no kernel "
                                                     f"{k.name}"),))
        image = emu.kernel(k.name)
        unsupported = emu.problems(k.name)
    except CodeObjectError as exc:
        if "not emulated" in exc.message:
            return outcome(SKIPPED, reason=exc.message)
        return outcome(FAILED, failures=(Failure("code object", exc.message),))
    if unsupported:
        listed = ", ".join(f"{m} ({why})" for m, why in sorted(unsupported.items()))
        return outcome(SKIPPED, reason=f"instructions the emulator does not implement: {listed}")
    for check in (contract.argument_mismatch, contract.workgroup_mismatch):
        problem = check(rs, image.metadata)
        if problem:
            return outcome(FAILED, failures=(Failure("launch contract", problem),))
    predicate = k.entry.get("problemPredicate")
    todo, notes = cases(rs, predicate)
    unknown: set[str] = set()
    for c in todo:
        evaluate(predicate, Call(rs.problem_type, c.problem, c.beta, c.launch_gsu, device_cu_count(rs)),
                 unknown)
    if unknown:
        notes.append("predicates not evaluated (assumed true): " + ", ".join(sorted(unknown)))
    if not todo:
        return outcome(SKIPPED, reason="no problem satisfies the solution's predicates", notes=tuple(notes))
    if rs.problem_type.grouped_gemm:
        return _verify_grouped(k, emu, rs, todo, notes, seed, progress, outcome)
    helper = None
    if any(conversion.needed(rs, runtime_args.launch_gsu(rs, c.gsu)) for c in todo):
        path = conversion.helper_code_object(k.code_object.parent, k.arch)
        if not path.is_file():
            return outcome(FAILED, failures=(Failure("code object", f"{path.name}, where the runtime finds the "
                                                     "MultipleBuffer conversion kernels, is missing"),))
        try:
            helper = emulators.get(path)
        except CodeObjectError as exc:
            return outcome(FAILED, failures=(Failure("code object", f"{path.name}: {exc.message}"),))
    failures: list[Failure] = []
    problems = workgroups = instructions = 0
    for c in todo:
        try:
            result = run_case(emu, k.name, rs, c, case_rng(seed, k.name, c.name), helper)
        except NotVerifiable as exc:
            if failures:  # a failure already seen stays a failure
                notes.append(f"case {c.name} and later ones not run: {exc.reason}")
                break
            return outcome(SKIPPED, reason=exc.reason, notes=tuple(notes))
        except EmulatorError as exc:  # raised outside a launch: the kernel cannot be run at all
            failures.append(Failure(c.describe(), f"{type(exc).__name__}: {exc.message}"))
            break
        problems += 1
        workgroups += result.workgroups
        instructions += result.instructions
        ran = _ran(result.workgroups, result.grid, result.order)
        if result.conversion_workgroups:
            ran += f", then {result.conversion_workgroups} conversion workgroups"
        progress(f"  {c.describe()}: {'ok' if result.error is None else 'FAILED'} ({ran}, {result.seconds:.1f} s)")
        if result.error is not None:
            failures.append(Failure(c.describe(), result.error))
        notes += result.notes
    custom = (k.entry.get("sizeMapping") or {}).get("CustomKernelName")
    if failures and custom and all(f.error.startswith("HazardError") for f in failures):
        # upstream's hand-written kernel, assembled unchanged: a wait-state rule it breaks is a finding about
        # that kernel (reported with the rule), not a defect of what we generate
        return outcome(SKIPPED, reason=f"custom kernel {custom} (hipBLASLt's own assembly, built unchanged) breaks "
                       f"a wait-state rule of the strict emulator: {failures[0].error}", notes=tuple(notes))
    return outcome(FAILED if failures else PASSED, failures=tuple(failures), notes=tuple(notes), problems=problems,
                   workgroups=workgroups, instructions=instructions)


def _ran(workgroups: int, grid: int, order: TileOrder | None) -> str:
    """What a launch ran, for the progress line: its workgroups and the order its tiles took."""
    ran = f"{workgroups} of {grid} workgroups" if workgroups != grid else f"{grid} workgroups"
    return ran if order is None else f"{ran}, tiles in {order.name} order"


def _verify_grouped(k: library.LibraryKernel, emu: Emulator, rs: RuntimeSolution, todo: list[Case],
                    notes: list[str], seed: int, progress: Progress,
                    outcome: Callable[..., KernelOutcome]) -> KernelOutcome:
    """A grouped kernel: its cases as the GEMMs of one launch per argument kind the runtime may use."""
    if len(todo) < grouped.MIN_GROUP:
        notes.append(f"only {len(todo)} GEMMs satisfy the predicates: the group is smaller than "
                     f"{grouped.MIN_GROUP}")
    failures: list[Failure] = []
    problems = workgroups = instructions = 0
    for arg_type in grouped.arg_types(rs):
        try:
            result = grouped.run_group(emu, k.name, rs, todo, arg_type, lambda c: case_rng(seed, k.name, c.name))
        except NotVerifiable as exc:
            if failures:
                notes.append(f"{grouped.ARG_TYPE_NAMES[arg_type]} not run: {exc.reason}")
                break
            return outcome(SKIPPED, reason=exc.reason, notes=tuple(notes))
        except EmulatorError as exc:
            failures.append(Failure(_failure_name(arg_type, None), f"{type(exc).__name__}: {exc.message}"))
            break
        problems += len(result.cases)
        workgroups += result.workgroups
        instructions += result.instructions
        ran = _ran(result.workgroups, result.grid, result.order)
        progress(f"  {result.describe()}: {'ok' if not result.errors else 'FAILED'} ({ran}, "
                 f"{result.seconds:.1f} s)")
        failures += [Failure(_failure_name(arg_type, e), e.error) for e in result.errors]
        notes += result.notes
    notes += grouped.notes(rs)
    return outcome(FAILED if failures else PASSED, failures=tuple(failures), notes=tuple(notes), problems=problems,
                   workgroups=workgroups, instructions=instructions)


def _failure_name(arg_type: int, error: grouped.GemmError | None) -> str:
    """The `problem` of a grouped failure: the argument kind, then the GEMM (none: the whole launch)."""
    kind = grouped.ARG_TYPE_NAMES[arg_type]
    if error is None or error.index < 0:
        return f"{kind}, whole launch"
    return f"{kind}, GEMM {error.index} {error.case.describe()}"


def verify_library(outdir: str | Path, *, arch: str | None = None, limit: int | None = None, seed: int = 0,
                   progress: Progress = _quiet) -> Report:
    """Verify the first `limit` kernels (all when None) of the library in `outdir` (see `select`)."""
    start = time.perf_counter()
    todo = select(outdir, arch, limit)
    if not todo:
        raise VerifyError(f"the library in {outdir} has no kernels")
    emulators = _Emulators(todo)
    outcomes = []
    for n, k in enumerate(todo, 1):
        progress(f"[{n}/{len(todo)}] {k.arch} {k.name}")
        result = verify_kernel(k, emulators, seed, progress)
        detail = result.reason if result.status == SKIPPED else \
            f"{result.problems} problems, {result.workgroups} workgroups, {result.seconds:.1f} s"
        progress(f"[{n}/{len(todo)}] {result.status}: {detail}")
        outcomes.append(result)
    return Report(tuple(outcomes), time.perf_counter() - start)
