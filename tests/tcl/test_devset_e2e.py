"""TensileCreateLibrary on the dev logic set, end to end, called exactly as hipBLASLt's CMake calls it.

One build of gfx90a, gfx942, gfx1100 and gfx1200 (plus gfx908, whose few solutions the writer cannot
build) is shared by the module: the manifest must list exactly
the library, every `.dat` must load, every placeholder's kernels must be in its `.co`, solutions the
writer cannot build must be named and left out (and nothing else), an architecture with nothing buildable
must still get a coherent library, the built kernels must pass `verify-library`, and the bytes must not
depend on `--jobs` or on the order the logic files were created in.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
from elftools.elf.elffile import ELFFile

from tensile_lite.asm.gemm import unsupported_reasons
from tensile_lite.build import HELPER_KERNEL, converts
from tensile_lite.cli import main as cli_main
from tensile_lite.codeobj.elf import missing_kernels, read_code_object
from tensile_lite.emu.arch import gfx_from_e_flags
from tensile_lite.host.conversion import conversion_kernels
from tensile_lite.library.formats import read_dat
from tensile_lite.library.naming import DEFAULT_PERF_METRIC, placeholder_name
from tensile_lite.library.problem_view import file_view
from tensile_lite.logic import read_logic_file
from tensile_lite.model import LogicFile, Solution
from tensile_lite.verify import select, verify_kernel
from tensile_lite.verify.runner import _Emulators
from tests.shared import dev_logic_files, shared_dir

ARCHS = ("gfx90a", "gfx942", "gfx1100", "gfx1200", "gfx908")
# The list form hipBLASLt's CMake makes of AMDGPU_TARGETS: features kept, ';' turned into '_'.
CMAKE_ARCHS = "gfx90a:xnack+_gfx90a:xnack-_gfx942_gfx1100_gfx1200_gfx908"
CMAKE_GFX90A = "gfx90a:xnack+_gfx90a:xnack-"
VERIFIED = ("gfx90a", "gfx942", "gfx1100", "gfx1200")  # the architectures verify-library runs
MANIFEST = "TensileManifest.txt"
# EF_AMDGPU_FEATURE_XNACK_V4 (code object v4+): the two values that pin one xnack mode.
XNACK_V4_MASK, XNACK_V4_ON, XNACK_V4_OFF = 0x300, 0x300, 0x200
WARNING = re.compile(r"^warning: (\d+) solution\(s\) need features", re.M)
LEFT_OUT = re.compile(r"^left out: (.+) solution position (\d+) \(", re.M)


def cmake_argv(logic: Path, out: Path, archs: str, jobs: int, *extra: str) -> list[str]:
    """TensileCreateLibraryFiles' flags in its order (tcl_anatomy.md section 1), CPU_THREADS given."""
    return ["--merge-files", "--separate-architectures", "--lazy-library-loading", "--no-short-file-names",
            "--no-library-print-debug", "--code-object-version=default", "--cxx-compiler=amdclang++",
            f"--jobs={jobs}", "--library-format=msgpack", f"--architecture={archs}", "--build-id=sha1",
            *extra, str(logic), str(out), "HIP"]


def run_tcl(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The console script CMake runs (this interpreter's, so the tree under test), in its own process."""
    script = Path(sys.executable).with_name("TensileCreateLibrary")
    cmd = [str(script)] if script.is_file() else [sys.executable, "-m", "tensile_lite.tcl"]
    return subprocess.run([*cmd, *argv], cwd=cwd, capture_output=True, text=True)


@attrs.frozen(slots=True)
class Built:
    out: Path
    cwd: Path
    log: str

    @property
    def library(self) -> Path:
        return self.out / "library"


@attrs.frozen(slots=True)
class DevLogic:
    files: tuple[LogicFile, ...]  # the dev set's files of ARCHS
    unsupported: Mapping[tuple[str, int], tuple[str, ...]]  # (resolved path, position) -> reasons

    def solutions(self, arch: str) -> Iterator[tuple[LogicFile, int, Solution]]:
        for lf in self.files:
            if lf.arch == arch:
                for pos, sol in enumerate(lf.solutions):
                    yield lf, pos, sol

    def supported(self, arch: str) -> int:
        return sum(1 for lf, pos, _ in self.solutions(arch) if (_key(lf.path), pos) not in self.unsupported)


def _key(path: str | Path) -> str:
    return Path(path).resolve().as_posix()


@pytest.fixture(scope="module")
def logic_dir() -> Path:
    return shared_dir("logic", "asm_full")


@pytest.fixture(scope="module")
def dev_logic(logic_dir: Path) -> DevLogic:
    files = tuple(lf for lf in (read_logic_file(p) for p in dev_logic_files()) if lf.arch in ARCHS)
    unsupported = {(_key(lf.path), pos): reasons for lf in files for pos, sol in enumerate(lf.solutions)
                   if (reasons := unsupported_reasons(sol))}
    return DevLogic(files, unsupported)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, toolchain, logic_dir: Path, devset_kernel_cache: Path) -> Built:
    """The four architectures in one run, from an empty working directory (CMake's is <build>/library), filling
    the session's kernel cache."""
    base = tmp_path_factory.mktemp("devset")
    cwd = base / "cwd"
    cwd.mkdir()
    out = base / "Tensile"
    res = run_tcl(cmake_argv(logic_dir, out, CMAKE_ARCHS, 2, f"--cache-dir={devset_kernel_cache}"), cwd)
    assert res.returncode == 0, res.stderr[-4000:]
    return Built(out, cwd, res.stderr)


def _walk(node: Any) -> Iterator[Mapping[str, Any]]:
    if isinstance(node, Mapping):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def placeholders(master: Mapping[str, Any]) -> list[str]:
    return list(dict.fromkeys(n["value"] for n in _walk(master["library"]) if n.get("type") == "Placeholder"))


def master_of(lib: Path, arch: str) -> dict[str, Any]:
    return read_dat(lib / f"TensileLibrary_lazy_{arch}.dat")


def digests(root: Path, keep: Callable[[str], bool] = lambda rel: True) -> dict[str, str]:
    """Relative path -> sha256 of every file under root (digests, so a difference prints briefly)."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and keep(p.relative_to(root).as_posix())}


def of_archs(archs: tuple[str, ...]) -> Callable[[str], bool]:
    """Whether a library file name belongs to one of `archs` (manifest excluded: it lists them all)."""
    pattern = re.compile(rf"[_-]({'|'.join(archs)})\.(dat|co|hsaco)$")
    return lambda rel: bool(pattern.search(rel))


def machine(path: Path) -> tuple[str | None, bool]:
    """(gfx of the ELF header, whether it loads in both xnack modes: xnack not pinned on or off)."""
    with path.open("rb") as f:
        flags = ELFFile(f).header.e_flags
    return gfx_from_e_flags(flags), flags & XNACK_V4_MASK not in (XNACK_V4_ON, XNACK_V4_OFF)


# --- layout and manifest ---------------------------------------------------------------------------


def test_manifest_lists_exactly_the_library(built: Built) -> None:
    lines = (built.library / MANIFEST).read_text().splitlines()
    listed = [Path(line) for line in lines]
    assert all(p.is_absolute() for p in listed)
    assert len(set(listed)) == len(listed), "a file is listed twice"
    present = sorted(p.resolve() for p in built.library.iterdir() if p.name != MANIFEST)
    assert sorted(listed) == present
    # Nothing else anywhere: no staging folder, no build_tmp, nothing dropped into the working directory.
    assert [p.name for p in built.out.iterdir()] == ["library"]
    assert list(built.cwd.iterdir()) == []
    names = {p.name for p in present}
    for arch in ARCHS:
        assert {f"TensileLibrary_lazy_{arch}.dat", f"Kernels.so-000-{arch}.hsaco"} <= names


def test_every_file_belongs_to_its_architecture(built: Built) -> None:
    """Master, helper code object, and one .dat + .co per placeholder the master names: nothing orphaned."""
    expected = set()
    for arch in ARCHS:
        names = placeholders(master_of(built.library, arch))
        assert all(n.startswith("TensileLibrary_") and n.endswith(f"_{arch}") for n in names), names
        expected |= {f"TensileLibrary_lazy_{arch}.dat", f"Kernels.so-000-{arch}.hsaco"}
        expected |= {f"{n}{ext}" for n in names for ext in (".dat", ".co")}
    assert {p.name for p in built.library.iterdir() if p.name != MANIFEST} == expected


def test_every_dat_loads(built: Built) -> None:
    dats = sorted(built.library.glob("*.dat"))
    assert len(dats) > len(ARCHS)
    for path in dats:
        doc = read_dat(path)
        assert isinstance(doc, dict) and isinstance(doc.get("solutions"), list) and "library" in doc, path.name
        if path.name.startswith("TensileLibrary_lazy_"):
            arch = path.name[len("TensileLibrary_lazy_"):-len(".dat")]
            assert doc["solutions"] == [] and doc["library"]["type"] == "Hardware", path.name
            for row in doc["library"]["rows"]:  # each row: this processor (and perhaps a CU count)
                assert row["predicate"]["type"] == "AMDGPU", path.name
                assert {"type": "Processor", "value": arch} in list(_walk(row["predicate"])), path.name
        else:
            assert doc["solutions"], f"{path.name}: a placeholder library without solutions"


def test_placeholder_kernels_are_in_their_code_objects(built: Built) -> None:
    for arch in ARCHS:
        seen_indices: set[int] = set()
        for name in placeholders(master_of(built.library, arch)):
            doc = read_dat(built.library / f"{name}.dat")
            indices = [int(s["index"]) for s in doc["solutions"]]
            assert len(set(indices)) == len(indices) and not seen_indices & set(indices), \
                f"{name}: solution indices must be unique across the architecture"
            seen_indices |= set(indices)
            for node in _walk(doc["library"]):
                if node.get("type") in ("Matching", "FreeSize"):
                    assert {int(row["index"]) for row in node["table"]} <= set(indices), name
            kernels = {s["kernelName"] for s in doc["solutions"]}
            info = read_code_object(built.library / f"{name}.co")
            assert missing_kernels(info, kernels) == {}, name
            assert set(info.names()) == kernels, f"{name}.co holds kernels its .dat does not use"
            assert info.code_object_version == 4 and machine(built.library / f"{name}.co") == (arch, True), name


def test_helper_code_objects_load(built: Built) -> None:
    for arch in ARCHS:
        path = built.library / f"Kernels.so-000-{arch}.hsaco"
        info = read_code_object(path)
        assert info.code_object_version == 4 and info.kernels and machine(path) == (arch, True), arch


def test_helper_code_objects_hold_every_conversion_kernel(built: Built, dev_logic: DevLogic) -> None:
    """Every split-K conversion kernel the runtime may look up by name for an included MultipleBuffer
    solution whose kernel may split K (each run-time bias type, GSU bucket and vector width) is in the
    architecture's helper code object, and nothing the included solutions do not need (a GSU-1 kernel that
    stays plain needs none)."""
    checked = 0
    for arch in ARCHS:
        wanted = {HELPER_KERNEL}
        for lf, pos, sol in dev_logic.solutions(arch):
            if (_key(lf.path), pos) not in dev_logic.unsupported and converts(sol):
                wanted |= {v.name for v in conversion_kernels(sol.problem_type)}
        info = read_code_object(built.library / f"Kernels.so-000-{arch}.hsaco")
        assert set(info.names()) == wanted, arch
        checked += len(wanted) - 1
    assert checked > 50


# --- unsupported solutions -------------------------------------------------------------------------


def _fingerprint_logic(sol: Solution) -> tuple[Any, ...]:
    return (sol.index, tuple(sol.macro_tile), sol.depth_u, sol.runtime.global_split_u,
            sol.runtime.workgroup_mapping)


def _fingerprint_entry(entry: Mapping[str, Any]) -> tuple[Any, ...]:
    sm = entry["sizeMapping"]
    return (entry["libraryLogicIndex"], tuple(sm["macroTile"][:2]), sm["depthU"], sm["globalSplitU"],
            sm["workGroupMapping"])


def test_unsupported_solutions_are_counted_and_left_out(built: Built, dev_logic: DevLogic) -> None:
    """Each placeholder holds exactly the supported solutions of its logic files: an unsupported one
    that leaked in, or a supported one that went missing, changes the multiset."""
    found = WARNING.findall(built.log)
    assert [int(n) for n in found] == ([len(dev_logic.unsupported)] if dev_logic.unsupported else [])
    for arch in ARCHS:
        want: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for lf, pos, sol in dev_logic.solutions(arch):
            if (_key(lf.path), pos) not in dev_logic.unsupported:
                name = placeholder_name(file_view(lf.problem_type), arch, lf.cu_count,
                                        lf.perf_metric or DEFAULT_PERF_METRIC)
                want[name][_fingerprint_logic(sol)] += 1
        got = {name: collections.Counter(_fingerprint_entry(e) for e in read_dat(built.library / f"{name}.dat")
                                         ["solutions"])
               for name in placeholders(master_of(built.library, arch))}
        assert sorted(got) == sorted(want), arch
        for name, counts in got.items():
            assert counts == want[name], name


def test_manifest_only_run_names_every_unsupported_solution(built: Built, dev_logic: DevLogic,
                                                            logic_dir: Path, tmp_path: Path) -> None:
    """`--generate-manifest-and-exit --verbose 2` predicts the manifest and names each solution left out."""
    out = tmp_path / "Tensile"
    res = run_tcl(cmake_argv(logic_dir, out, CMAKE_ARCHS, 2, "--generate-manifest-and-exit", "--verbose=2"),
                  tmp_path)
    assert res.returncode == 0, res.stderr[-4000:]
    assert [p.name for p in (out / "library").iterdir()] == [MANIFEST]
    predicted = [Path(line) for line in (out / "library" / MANIFEST).read_text().splitlines()]
    actual = [Path(line) for line in (built.library / MANIFEST).read_text().splitlines()]
    assert [p.name for p in predicted] == [p.name for p in actual]
    assert {p.parent for p in predicted} == {(out / "library").resolve()}
    named = {(_key(path), int(pos)) for path, pos in LEFT_OUT.findall(res.stderr)}
    assert named == set(dev_logic.unsupported)


def test_architectures_without_buildable_solutions_are_coherent(built: Built, dev_logic: DevLogic) -> None:
    """gfx908 has logic but nothing buildable (the writer does not target it): it still gets a master (the
    runtime opens it for the device) with no rows, and a helper code object, and no placeholders."""
    empty = []
    for arch in ARCHS:
        master = master_of(built.library, arch)
        assert master["solutions"] == []
        assert any(lf.arch == arch for lf in dev_logic.files), f"the dev set has no {arch} logic"
        if dev_logic.supported(arch) == 0:
            empty.append(arch)
            assert master["library"] == {"type": "Hardware", "rows": []}, arch
            assert not [p.name for p in built.library.glob(f"TensileLibrary_*_{arch}.*")
                        if not p.name.startswith("TensileLibrary_lazy_")]
        else:
            assert master["library"]["rows"] and placeholders(master), arch
    assert empty, ("every architecture now has buildable solutions, so this build no longer covers an "
                   "architecture with none: give this test a logic file nothing can build for")


# --- verify-library --------------------------------------------------------------------------------


@pytest.mark.parametrize("arch", VERIFIED)
def test_verify_one_kernel_per_library(built: Built, arch: str) -> None:
    """Per placeholder library, the first kernel (by name) the verifier can launch, on the emulator against
    numpy. Kernels it cannot launch (grouped GEMM, types it lacks) are skipped before any emulation."""
    by_library: dict[str, list[Any]] = collections.defaultdict(list)
    for k in select(built.out, arch):
        by_library[k.placeholder].append(k)
    assert set(by_library) == set(placeholders(master_of(built.library, arch)))
    emulators = _Emulators()
    outcomes = []
    for name in sorted(by_library):
        for k in by_library[name]:
            outcomes.append(verify_kernel(k, emulators))
            if outcomes[-1].status != "skipped":
                break
    failed = [(o.kernel, f.problem, f.error) for o in outcomes for f in o.failures]
    assert failed == [], failed
    passed = sum(o.status == "passed" for o in outcomes)
    assert passed > 0, sorted({o.reason for o in outcomes})


@pytest.mark.slow
@pytest.mark.parametrize("arch", VERIFIED)
def test_verify_library_all_kernels(built: Built, arch: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli_main(["verify-library", str(built.out), "--arch", arch, "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["failed"] == [], doc["failed"][:5]
    assert doc["kernels"] == len({k.name for k in select(built.out, arch)})
    assert doc["passed"] > 0


# --- determinism -----------------------------------------------------------------------------------


def _reordered_copy(logic: Path, dest: Path) -> Path:
    """The same files under the same names, created in reverse order, beside an unrelated empty folder
    and a non-logic file, so the filesystem lists them differently."""
    root = dest / "asm_full"
    (root / "0_unrelated_empty").mkdir(parents=True)
    for f in sorted(logic.rglob("*.yaml"), reverse=True):
        target = root / f.relative_to(logic)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target)
    (root / "notes.txt").write_text("not a logic file\n")
    return root


def _build_moved(logic: Path, base: Path, dest: str, archs: str, jobs: int) -> Path:
    """Build into base/Tensile, then move it aside: every run writes the same OutputPath, so even the
    manifest's absolute paths must match byte for byte."""
    out = base / "Tensile"
    res = run_tcl(cmake_argv(logic, out, archs, jobs), base)
    assert res.returncode == 0, res.stderr[-4000:]
    os.replace(out, base / dest)
    return base / dest


def _same_bytes(a: dict[str, str], b: dict[str, str]) -> None:
    assert sorted(a) == sorted(b)
    assert [n for n in a if a[n] != b[n]] == []


def _manifest_names(library: Path, keep: Callable[[str], bool]) -> list[str]:
    lines = (library / MANIFEST).read_text().splitlines()
    assert all(Path(line).parent == library.resolve() for line in lines)
    return [Path(line).name for line in lines if keep(Path(line).name)]


def test_jobs_and_creation_order_do_not_change_bytes_gfx90a(built: Built, logic_dir: Path, tmp_path: Path) -> None:
    """One more build, differing from the shared one in both --jobs (1, not 2) and the order the logic files
    were created in: every gfx90a file must come out byte for byte the same, and be listed the same."""
    copy = _reordered_copy(logic_dir, tmp_path / "copy")
    out = tmp_path / "Tensile"
    res = run_tcl(cmake_argv(copy, out, CMAKE_GFX90A, jobs=1), tmp_path)
    assert res.returncode == 0, res.stderr[-4000:]
    keep = of_archs(("gfx90a",))
    _same_bytes(digests(out / "library", keep), digests(built.library, keep))
    assert _manifest_names(out / "library", keep) == _manifest_names(built.library, keep)


@pytest.mark.slow
def test_jobs_and_creation_order_do_not_change_bytes_all(built: Built, logic_dir: Path, tmp_path: Path) -> None:
    """All four architectures: --jobs 1 against --jobs 2 on a reordered copy, every file under OutputPath
    (manifest included), and both against the shared build."""
    one = _build_moved(logic_dir, tmp_path, "jobs1", CMAKE_ARCHS, jobs=1)
    reordered = _build_moved(_reordered_copy(logic_dir, tmp_path / "copy"), tmp_path, "reordered_jobs2",
                             CMAKE_ARCHS, jobs=2)
    _same_bytes(digests(one), digests(reordered))
    keep = of_archs(ARCHS)
    _same_bytes(digests(one / "library", keep), digests(built.library, keep))
