"""TensileCreateLibrary for the ROCm 7.x interfaces, end to end with real kernels: the gfx90a and gfx942
files of the 7.x sample logic (../shared/logic7) built as 7.0-7.2 and as develop lay them out, checked the
way their runtime reads them (layout, mapping range table over the lazy libraries' real contents,
contiguous indices, fnuz type names, no manifest), publishing that keeps an earlier library on failure,
and hipBLASLt's (2024) runtime code loading the 7.2 layout where its vocabulary allows."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tensile_lite.sample
from tensile_lite.build import check_request
from tensile_lite.codeobj.bundle import COMPRESSED_BUNDLE
from tensile_lite.codeobj.elf import read_code_object
from tensile_lite.codeobj.resources import kernel_resources, runtime_occupancy
from tensile_lite.errors import TensileLiteError
from tensile_lite.interfaces import HIPBLASLT_2024, INTERFACES, ROCM_7_2, ROCM_DEVELOP
from tensile_lite.library.entry_schema import SCHEMA_7_2
from tensile_lite.library.formats import decode, decode_raw, detect_format, encode, read_dat
from tensile_lite.library.indexed import check_indexed
from tensile_lite.library.layout import library_of, read_mapping
from tensile_lite.targets import get_target
from tensile_lite.tcl import main
from tensile_lite.tcl_args import build_parser, to_request
from tensile_lite.verify.report import PASSED
from tensile_lite.verify.runner import verify_library
from tests.shared import logic7_files, shared_dir
from tests.tcl.runtime_probe import Probe, incomplete, run_probe, runtime_faults, strict_messages

ARCHS = ("gfx90a", "gfx942")
MANIFEST = "TensileManifest.txt"


def tcl7(interface: str, logic: Path, out: Path, archs: str, *extra: str) -> int:
    """7.x CMake's command line (hipblaslt_codegen.cmake): no 2024 flags; --no-compress until the
    code-object bundles are in."""
    return main([f"--interface={interface}", f"--architecture={archs}", "--cxx-compiler=amdclang++",
                 "--no-compress", "--jobs=2", "--verbose=0", *extra, str(logic), str(out), "HIP"])


def _logic7(dest: Path) -> Path:
    """The 7.x sample's gfx90a and gfx942 files, in their layout below a root as CMake passes it."""
    root = shared_dir("logic7")
    for path in logic7_files():
        rel = path.relative_to(root)  # asm_full/<family>/...
        if rel.parts[1] in ("aldebaran", "aquavanjaram"):
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, dest / rel)
    return dest


@pytest.fixture(scope="module")
def logic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _logic7(tmp_path_factory.mktemp("logic7"))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, logic: Path, toolchain: Any) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("build7")
    outs = {}
    # develop: one folder per requested architecture, gfx1100's empty (no logic for it)
    for name, archs in ((ROCM_7_2, "gfx90a;gfx942"), (ROCM_DEVELOP, "gfx90a;gfx942;gfx1100")):
        out = base / name
        assert tcl7(name, logic, out, archs) == 0
        outs[name] = out
    return outs


def _libraries(folder: Path) -> dict[str, dict[str, Any]]:
    """Lazy libraries (not masters) in `folder`, by name, decoded."""
    return {p.name.split(".")[0]: read_dat(p) for p in sorted(folder.glob("TensileLibrary_*.dat*"))
            if not p.name.startswith("TensileLibrary_lazy_")}


def _folders(out: Path, name: str) -> Iterator[tuple[str, Path]]:
    library = out / "library"
    if INTERFACES[name].per_arch_dirs:
        yield from ((gfx, library / gfx) for gfx in ARCHS)
    else:
        yield "", library


@pytest.mark.parametrize("name", [ROCM_7_2, ROCM_DEVELOP])
def test_layout_and_no_manifest(built, name):
    out = built[name]
    library = out / "library"
    assert [p.name for p in out.iterdir()] == ["library"]  # no staging, no stamp of ours outside
    assert not list(library.rglob(MANIFEST))
    ext = ".dat.zlib" if name == ROCM_DEVELOP else ".dat"
    if name == ROCM_DEVELOP:
        assert sorted(p.name for p in library.iterdir()) == ["gfx1100", "gfx90a", "gfx942"]
        assert list((library / "gfx1100").iterdir()) == []
    else:
        assert all(p.is_file() for p in library.iterdir())
        assert (library / "TensileLiteLibrary_lazy_Mapping.dat").is_file()
    for gfx in ARCHS:
        folder = library / gfx if name == ROCM_DEVELOP else library
        assert (folder / f"TensileLibrary_lazy_{gfx}{ext}").is_file()
        assert (folder / f"Kernels.so-000-{gfx}.hsaco").is_file()
        if name == ROCM_DEVELOP:
            assert (folder / f"TensileLiteLibrary_lazy_{gfx}_Mapping{ext}").is_file()
        master = read_dat(folder / f"TensileLibrary_lazy_{gfx}{ext}")
        named = {row["library"]["value"] for hw in master["library"]["rows"]
                 for op in hw["library"]["map"].values() for perf in op["rows"] for row in perf["library"]["rows"]}
        for placeholder in named:  # every library the master names is beside it, with its kernels
            doc = read_dat(folder / f"{placeholder}{ext}")
            kernels = {k.name for k in read_code_object(folder / f"{placeholder}.co").kernels}
            assert {s["kernelName"] for s in doc["solutions"]} <= kernels


@pytest.mark.parametrize("name", [ROCM_7_2, ROCM_DEVELOP])
def test_mapping_finds_every_solution_and_indices_are_contiguous(built, name):
    indices: list[int] = []
    for gfx, folder in _folders(built[name], name):
        (path,) = folder.glob("TensileLiteLibrary_lazy_*Mapping.dat*")
        mapping = read_mapping(read_dat(path))
        libs = _libraries(folder)
        assert set(mapping.values()) == set(libs)
        assert all(n.endswith(f"_{gfx}") for n in mapping.values()) or not gfx
        for lib_name, doc in libs.items():
            own = [s["index"] for s in doc["solutions"]]
            assert own == list(range(own[0], own[0] + len(own)))  # one range per library
            assert all(library_of(mapping, i) == lib_name for i in own)
            indices += own
    assert sorted(indices) == list(range(len(indices))) and indices


@pytest.mark.parametrize("name", [ROCM_7_2, ROCM_DEVELOP])
def test_fp8_fnuz_problem_types_use_7x_names(built, name):
    libs = {n: d for _, folder in _folders(built[name], name) for n, d in _libraries(folder).items()}
    fp8 = {n: d for n, d in libs.items() if n.startswith("TensileLibrary_F8NH_")}
    assert len(fp8) == 1
    (doc,) = fp8.values()
    for sol in doc["solutions"]:
        assert sol["problemType"]["aType"] == "Float8_fnuz"
        types = next(p["value"] for p in sol["problemPredicate"]["value"] if p["type"] == "TypesEqual")
        assert types[0] == "Float8_fnuz"


def _digest(library: Path) -> dict[str, str]:
    return {str(p.relative_to(library)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(library.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", [ROCM_7_2, ROCM_DEVELOP])
def test_occupancy_is_what_each_built_kernel_allows(built, name):
    """7.x's ranking reads sizeMapping.CUOccupancy; every entry's is its own kernel's, read back from the
    library's code object (registers, LDS, threads), not a figure from the logic file."""
    seen = set()
    for _, folder in _folders(built[name], name):
        for lib_name, doc in _libraries(folder).items():
            gfx = lib_name.rsplit("_", 1)[1]
            target = get_target(gfx)
            resources = kernel_resources(read_code_object(folder / f"{lib_name}.co"), target)
            for sol in doc["solutions"]:
                got = sol["sizeMapping"]["CUOccupancy"]
                assert got == runtime_occupancy(resources[sol["kernelName"]], target), sol["name"]
                assert 1 <= got <= 10
                seen.add(got)
    assert len(seen) > 1  # the kernels differ, so do their figures


def test_loop_clocks_come_from_the_kernel_texts_and_survive_the_cache(tmp_path, logic, toolchain):
    """MathClocksUnrolledLoop is read from each kernel's text in the worker; a cache hit renders no text,
    so the entry carries the figure: a cold and a warm 7.2 build write the same bytes, with figures."""
    cache = tmp_path / "cache"
    for run in ("cold", "warm"):
        assert tcl7(ROCM_7_2, logic, tmp_path / run, "gfx942", f"--cache-dir={cache}") == 0
    cold, warm = ({p.name: p.read_bytes() for p in (tmp_path / run / "library").iterdir()} for run in ("cold", "warm"))
    assert cold == warm
    docs = _libraries(tmp_path / "warm" / "library")
    clocks = [s["sizeMapping"]["MathClocksUnrolledLoop"] for d in docs.values() for s in d["solutions"]]
    assert clocks and all(c > 0 for c in clocks) and len(set(clocks)) > 1


def test_failed_build_keeps_the_earlier_library_and_a_7x_build_drops_an_old_stamp(tmp_path, logic, toolchain):
    out = tmp_path / "out"
    (out / "library").mkdir(parents=True)
    (out / "library" / MANIFEST).write_text("left by a 2024 build\n")
    assert tcl7(ROCM_DEVELOP, logic, out, "gfx90a") == 0
    library = out / "library"
    assert not (library / MANIFEST).exists()
    before = _digest(library)
    assert before and all(k.startswith("gfx90a/") for k in before)
    broken = tmp_path / "broken"
    shutil.copytree(logic, broken)
    (broken / "asm_full" / "aldebaran" / "bad.yaml").write_text("- {unclosed\n")
    assert tcl7(ROCM_DEVELOP, broken, out, "gfx90a") != 0
    assert _digest(library) == before
    assert [p.name for p in out.iterdir()] == ["library"]


def test_unsupported_7x_requests_fail_at_once(tmp_path, logic, capsys):
    # the 2024 runtime's layout without lazy loading is not one we write: refused before any work
    assert tcl7(HIPBLASLT_2024, logic, tmp_path / "a", "gfx942", "--no-lazy-library-loading") == 2
    err = capsys.readouterr().err
    assert "--no-lazy-library-loading" in err and HIPBLASLT_2024 in err and err.count("\n") == 1
    assert not (tmp_path / "a" / "library").exists() or not list((tmp_path / "a" / "library").iterdir())


def _inline(node: Any, folder: Path, ext: str) -> Any:
    """A lazy master's tree with each Placeholder node replaced by its library's selection tree."""
    if isinstance(node, dict):
        if node.get("type") == "Placeholder":
            return read_dat(folder / f"{node['value']}{ext}")["library"]
        return {k: _inline(v, folder, ext) for k, v in node.items()}
    return [_inline(v, folder, ext) for v in node] if isinstance(node, list) else node


def _eager(logic: Path, out: Path, interface: str, jobs: int) -> Path:
    """A compressed 7.x build without lazy loading (as 7.x's device-library CMake asks for it)."""
    assert main([f"--interface={interface}", "--architecture=gfx90a;gfx942;", f"--jobs={jobs}", "--verbose=0",
                 "--no-lazy-library-loading", str(logic), str(out), "HIP"]) == 0
    return out / "library"


@pytest.fixture(scope="module")
def eager(tmp_path_factory: pytest.TempPathFactory, logic: Path, toolchain: Any) -> Path:
    return _eager(logic, tmp_path_factory.mktemp("eager") / "out", ROCM_DEVELOP, 2)


def test_without_lazy_loading_one_master_holds_what_the_lazy_libraries_hold(eager, built):
    """Per architecture: exactly the master, one code object and the helpers; the master's solutions are the
    lazy libraries' solutions (same entries, same indices), its selection rows theirs in the Placeholder
    nodes' place; its code object a compressed bundle holding each kernel once."""
    lazy = built[ROCM_DEVELOP] / "library"
    for gfx in ARCHS:
        folder = eager / gfx
        assert sorted(p.name for p in folder.iterdir()) == sorted([
            f"TensileLibrary_{gfx}.dat.zlib", f"TensileLibrary_{gfx}.co", f"Kernels.so-000-{gfx}.hsaco"])
        master = read_dat(folder / f"TensileLibrary_{gfx}.dat.zlib")
        lazy_master = read_dat(lazy / gfx / f"TensileLibrary_lazy_{gfx}.dat.zlib")
        assert master["library"] == _inline(lazy_master["library"], lazy / gfx, ".dat.zlib")
        solutions = [s for doc in _libraries(lazy / gfx).values() for s in doc["solutions"]]
        assert master["solutions"] == sorted(solutions, key=lambda s: s["index"]) and solutions
        info = read_code_object(folder / f"TensileLibrary_{gfx}.co")
        assert info.container == COMPRESSED_BUNDLE
        names = [k.name for k in info.kernels]
        assert sorted(set(names)) == names == sorted({s["kernelName"] for s in solutions})
        helper = folder / f"Kernels.so-000-{gfx}.hsaco"
        assert helper.read_bytes() == (lazy / gfx / helper.name).read_bytes()  # unchanged
    indices = [s["index"] for gfx in ARCHS for s in read_dat(eager / gfx / f"TensileLibrary_{gfx}.dat.zlib")
               ["solutions"]]
    assert indices == list(range(len(indices)))  # masters by architecture, each contiguous


def test_without_lazy_loading_flat_bytes_do_not_depend_on_jobs_and_kernels_verify(tmp_path, logic, toolchain):
    one, two = (_eager(logic, tmp_path / f"j{j}", ROCM_7_2, j) for j in (1, 2))
    assert sorted(p.name for p in one.iterdir()) == sorted(
        f"{stem}{gfx}{ext}" for gfx in ARCHS for stem, ext in (
            ("TensileLibrary_", ".dat"), ("TensileLibrary_", ".co"), ("Kernels.so-000-", ".hsaco")))
    assert _digest(one) == _digest(two)
    report = verify_library(one, limit=2)  # found through the master's inline solutions
    assert [o.status for o in report.outcomes] == [PASSED, PASSED]


_NEW_PREDICATES = ("WorkgroupNumberCheck", "DataTypeE", "SwizzleTensorA", "SwizzleTensorB")


def _without_new_predicates(node: Any) -> int:
    """Drop the predicates only 7.x's registry knows from every `And` below `node`; how many went."""
    dropped = 0
    if isinstance(node, dict):
        if node.get("type") == "And":
            kept = [p for p in node["value"] if p.get("type") not in _NEW_PREDICATES]
            dropped += len(node["value"]) - len(kept)
            node["value"] = kept
        for value in node.values():
            dropped += _without_new_predicates(value)
    elif isinstance(node, list):
        dropped += sum(_without_new_predicates(v) for v in node)
    return dropped


def _as_2024(doc: dict[str, Any]) -> None:
    for entry in doc["solutions"]:
        assert entry["internalArgsSupport"].pop("useSFC") is False
        # 7.x checks the workspace as a task (2024 as a problem predicate, which the probe then goes without)
        assert entry.pop("taskPredicate") == {"type": "WorkspaceCheck"}
        for key in SCHEMA_7_2.size_keys:
            entry["sizeMapping"].pop(key)
        assert _without_new_predicates(entry["problemPredicate"]) == 4
    _without_new_predicates(doc["library"])


def test_hipblaslt_runtime_loads_the_72_layout(tmp_path, toolchain, runtime_probe: Probe):
    """The probe is the 2024 runtime's code: it cannot read 7.x's fnuz names nor the mapping file, so it
    gets each architecture's files of a 7.2 build of the bundled sample (no 8-bit floats) without the
    mapping and without what only 7.x's reader knows (entry_schema.py: useSFC, taskPredicate, the new
    sizeMapping fields and problem predicates); gfx942's indices then start after gfx90a's, which its
    selection must not mind."""
    out = tmp_path / "out"
    assert tcl7(ROCM_7_2, tensile_lite.sample.path(), out, "gfx90a;gfx942") == 0
    library = out / "library"
    mapping = read_mapping(read_dat(library / "TensileLiteLibrary_lazy_Mapping.dat"))
    for gfx in ARCHS:
        folder = tmp_path / gfx
        folder.mkdir()
        for path in library.iterdir():
            if path.name.endswith(".dat") and path.name.split(".")[0].endswith(f"_{gfx}"):
                doc = read_dat(path)  # without the keys 7.x's runtime requires and 2024's strict mode refuses
                _as_2024(doc)
                (folder / path.name).write_bytes(encode(doc, "msgpack"))
            elif path.name.split(".")[0].endswith(f"_{gfx}") or path.name == f"Kernels.so-000-{gfx}.hsaco":
                shutil.copy(path, folder / path.name)
        first = min(k for k, v in mapping.items() if v.endswith(f"_{gfx}"))
        assert (first > 0) == (gfx == "gfx942")
        run = run_probe(runtime_probe, gfx, folder, tmp_path / f"probe-{gfx}")
        assert incomplete(run) == []
        report = run.report()
        assert report is not None and runtime_faults(report) == {}
        assert strict_messages(run) == {}


def test_msgpack_indexed_takes_the_interfaces_container_and_only_where_the_runtime_reads_it():
    def request(interface: str) -> Any:
        return to_request(build_parser().parse_args([f"--interface={interface}", "--library-format=msgpack-indexed",
                                                     "L", "O", "HIP"]))
    develop = request(ROCM_DEVELOP)
    assert develop.library_format == "msgpack-indexed-zlib"  # .dat.zlib, as develop writes every .dat
    check_request(develop, INTERFACES[ROCM_DEVELOP])
    for name in (ROCM_7_2, HIPBLASLT_2024):
        req = request(name)
        assert req.library_format == "msgpack-indexed"
        with pytest.raises(TensileLiteError, match=f"the {name} runtime cannot read indexed .dat files"):
            check_request(req, INTERFACES[name])


def test_an_indexed_build_holds_the_format_1_content_and_passes_the_loader_checks(tmp_path, built, logic):
    """7.x's command line with --library-format=msgpack-indexed: every library file (masters and lazy
    libraries) is format 2 and passes the runtime loader's checks, with sorted unique indices whose spans
    tile the blob; it decodes to exactly what the default build wrote; mapping files and code objects are
    the same bytes."""
    out = tmp_path / "indexed"
    assert tcl7(ROCM_DEVELOP, logic, out, "gfx90a;gfx942;gfx1100", "--library-format=msgpack-indexed") == 0
    plain = built[ROCM_DEVELOP] / "library"
    library = out / "library"
    names = sorted(str(p.relative_to(library)) for p in library.rglob("*") if p.is_file())
    assert names == sorted(str(p.relative_to(plain)) for p in plain.rglob("*") if p.is_file())
    libraries = 0
    for name in names:
        data, before = (library / name).read_bytes(), (plain / name).read_bytes()
        if "_Mapping" in name or not name.endswith(".dat.zlib"):
            assert data == before, name
            continue
        raw = decode_raw(data, name)
        assert raw["format_version"] == 2 and detect_format(name, data) == "msgpack-indexed-zlib"
        rows = check_indexed(raw)
        assert [r[0] for r in rows] == sorted({r[0] for r in rows})
        assert [r[1] for r in rows] == [sum(r[2] for r in rows[:n]) for n in range(len(rows))]
        assert sum(r[2] for r in rows) == len(raw["solutions_blob"])
        assert decode(data, name) == decode(before, name)
        libraries += bool(rows)
    lazy = [n for n in names if n.endswith(".dat.zlib") and "_Mapping" not in n and "/TensileLibrary_lazy_" not in n]
    assert libraries == len(lazy) > 0  # every lazy library has its solutions in the blob; masters have none
