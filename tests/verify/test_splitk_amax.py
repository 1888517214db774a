"""verify-library on in-kernel split-K (GlobalSplitUAlgorithm MultipleBufferSingleKernel) and OutputAmaxD
kernels: a library TensileCreateLibrary builds from the bundled gfx942 f32 sample made into three logic
files, one whose solutions are GSU-3 split-K (the second with the round-robin GSU mapping and GSUC), one
whose problem type outputs AmaxD with ScaleCD, and a grouped-GEMM one of the latter (its first solution,
launched through the argument table and UserArguments); and copies of it changed or broken on purpose.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

import tensile_lite.sample
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.library.formats import detect_format, encode, read_dat
from tensile_lite.logic import find_logic_files
from tensile_lite.tcl import main as tcl_main
from tensile_lite.verify import KernelOutcome, Report, select, verify_kernel, verify_library
from tensile_lite.verify.grouped import ARG_TYPE_NAMES
from tensile_lite.verify.library import kernels, library_dir
from tensile_lite.verify.runner import _Emulators
from tests.verify.corrupt import edit_entries, patch_instruction

GSU = 3
# placeholder name prefixes
SPLIT_K, AMAX, GROUPED = "TensileLibrary_SS_SS_Type", "TensileLibrary_SS_SS_SCD_Type", "TensileLibrary_SS_SS_GG"
TABLE, USER = ARG_TYPE_NAMES[1], ARG_TYPE_NAMES[2]


def _sample_logic() -> Path:
    found = [Path(p) for p in find_logic_files([str(tensile_lite.sample.path())]) if "gfx942" in str(p)]
    assert len(found) == 1, found
    return found[0]


def _split_k(doc: list[Any]) -> list[Any]:
    for n, sol in enumerate(doc[5]):
        sol.update(GlobalSplitU=GSU, GlobalSplitUAlgorithm="MultipleBufferSingleKernel",
                   _GlobalAccumulation="MultipleBufferSingleKernel",
                   NumElementsPerThread=sol["MacroTile0"] * sol["MacroTile1"] // sol["NumThreads"])
        if n == 1:
            sol.update(GlobalSplitUWorkGroupMappingRoundRobin=1, GlobalSplitUCoalesced=1)
    return doc


def _amax(doc: list[Any], **extra: Any) -> list[Any]:
    for pt in [doc[4]] + [sol["ProblemType"] for sol in doc[5]]:
        pt.update(OutputAmaxD=True, UseScaleCD=True, **extra)
    return doc


def _grouped_amax(doc: list[Any]) -> list[Any]:
    doc[5] = doc[5][:1]
    doc[7] = [row for row in doc[7] if row[1][0] == 0]  # the size table's rows of that solution
    return _amax(doc, GroupedGemm=True, SupportUserArgs=True)


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory, toolchain: Toolchain) -> Path:
    """The three files built for gfx942 (read-only: copy with `library_copy` before changing it)."""
    src = _sample_logic()
    base = tmp_path_factory.mktemp("splitk_amax")
    logic = base / "logic"
    logic.mkdir()
    for name, change in ((src.stem + "_GSU.yaml", _split_k), (src.stem + "_AmaxD.yaml", _amax),
                         (src.stem + "_GG_AmaxD.yaml", _grouped_amax)):
        doc = yaml.load(src.read_text(), Loader=yaml.CSafeLoader)
        (logic / name).write_text(yaml.dump(change(doc), Dumper=yaml.CSafeDumper))
    out = base / "out"
    assert tcl_main(["--architecture=gfx942", "--jobs=2", str(logic), str(out), "HIP"]) == 0
    return out


def _placeholder(out: Path, prefix: str) -> Path:
    found = sorted((out / "library").glob(f"{prefix}_*_gfx942.dat"))
    assert len(found) == 1, found
    return found[0]


def _kernels(out: Path, prefix: str) -> list[str]:
    return sorted(e["kernelName"] for e in read_dat(_placeholder(out, prefix))["solutions"])


def _by_kernel(outcomes: tuple[KernelOutcome, ...]) -> dict[str, KernelOutcome]:
    return {o.kernel: o for o in outcomes}


def _verify(out: Path, prefix: str, progress: Callable[[str], None] = lambda _: None) -> Report:
    """verify-library's run of the kernels of one placeholder library only."""
    emulators = _Emulators()
    wanted = set(_kernels(out, prefix))
    return Report(tuple(verify_kernel(k, emulators, progress=progress) for k in select(out) if k.name in wanted), 0.0)


def test_split_k_and_amax_kernels_pass(library: Path) -> None:
    entries = read_dat(_placeholder(library, SPLIT_K))["solutions"]
    assert {e["sizeMapping"]["globalAccumulation"] for e in entries} == {3}
    assert {e["sizeMapping"]["globalSplitUWorkGroupMappingRoundRobin"] for e in entries} == {False, True}
    lines: list[str] = []
    report = verify_library(library, progress=lines.append)
    doc = report.to_json()
    assert doc["failed"] == [] and doc["skipped"] == [], doc
    assert doc["kernels"] == doc["passed"] == 5
    outcomes = _by_kernel(report.outcomes)
    for name in _kernels(library, SPLIT_K):
        o = outcomes[name]
        assert o.problems == 5, o
        # full tiles, edges (C and D packed, K tail, batch) and alpha 0 go through the reduction;
        # padded C/D and K 0 run with GSU 1, as upstream's runtime must
        assert any("case small ran with GSU 1 (padded C/D" in n for n in o.notes), o.notes
        assert any("case k0 ran with GSU 1 (K below GlobalSplitUCheckMinK" in n for n in o.notes), o.notes
    runs = [ln for ln in lines if ": ok (" in ln]
    split = [ln for ln in runs if f"GSU={GSU}" in ln]
    assert sorted(ln.split(":")[0].strip() for ln in split) == sorted(["full", "edges", "alpha0"] * 2)
    # all GSU slices of every tile that ran: 2x2 tiles x 3 for full, 6 tiles x 3 for edges
    assert sum(f"GSU={GSU}: ok (12 workgroups" in ln for ln in split) == 2
    assert sum(f"GSU={GSU} (padded A/B strides): ok (18 of 54 workgroups" in ln for ln in split) == 2
    for name in _kernels(library, AMAX):
        # edges runs representative tiles only, so its amax cannot be compared; the others are
        assert [n for n in outcomes[name].notes if "amax" in n] == [
            "case edges: amax not checked: 6 of 18 tiles ran and the amax needs every workgroup"]
    (name,) = _kernels(library, GROUPED)
    grouped = outcomes[name]
    assert grouped.problems == 10, grouped
    # the GEMMs of one launch share AmaxSync, one counter each; UserArguments carry no amax
    assert [n for n in grouped.notes if "amax" in n] == [
        f"{TABLE}: amax of GEMM 1 (edges) not checked: only some of its tiles ran and the amax needs every workgroup"]
    assert sum(kind in ln for ln in runs for kind in (TABLE, USER)) == 2


def test_runtime_gsu_and_no_override(library_copy: Path) -> None:
    """The runtime sends the entry's GSU in the header: a library saying 5 runs the kernel with 5.
    A library that does not let the runtime override GSU gets every case with its GSU and C/D packed;
    `small` and `k0` then have K below GlobalSplitUCheckMinK and are dropped."""
    dat = _placeholder(library_copy, SPLIT_K)
    first, second = _kernels(library_copy, SPLIT_K)

    def change(entry: dict[str, Any]) -> None:
        if entry["kernelName"] == first:
            entry["sizeMapping"]["globalSplitU"] = 5
        else:
            entry["internalArgsSupport"]["gsu"] = False

    edit_entries(dat, change)
    lines: list[str] = []
    report = _verify(library_copy, SPLIT_K, lines.append)
    outcomes = _by_kernel(report.outcomes)
    assert report.ok and report.count("passed") == 2, report.to_json()
    assert any("GSU=5: ok (20 workgroups" in ln for ln in lines), lines
    fixed = outcomes[second]
    assert fixed.problems == 3, fixed
    assert any("does not let the runtime override GSU" in n for n in fixed.notes), fixed.notes
    dropped = [n.split()[1] for n in fixed.notes if " dropped: " in n and "GlobalSplitUCheckMinK" in n]
    assert dropped == ["small", "k0"], fixed.notes
    assert not any("ran with GSU 1" in n for n in fixed.notes), fixed.notes


def test_library_not_declaring_split_k(library_copy: Path) -> None:
    """globalAccumulation 0: with GSU 3 the runtime would need its separate reduction kernels (not
    verified: skipped); with GSU 1 it packs no dstD / Synchronizer / GSUSync, 20 bytes fewer than the
    kernel declares, so the launch contract fails."""
    dat = _placeholder(library_copy, SPLIT_K)
    edit_entries(dat, lambda e: e["sizeMapping"].update(globalAccumulation=0))
    doc = _verify(library_copy, SPLIT_K).to_json()
    assert doc["passed"] == 0 and doc["failed"] == [] and len(doc["skipped"]) == 2, doc
    assert all("globalAccumulation 0" in s["reason"] for s in doc["skipped"]), doc["skipped"]
    edit_entries(dat, lambda e: e["sizeMapping"].update(globalSplitU=1))
    failed = _verify(library_copy, SPLIT_K).to_json()["failed"]
    assert sorted(f["kernel"] for f in failed) == _kernels(library_copy, SPLIT_K)
    assert all(f["problem"] == "launch contract" and "arguments" in f["error"] for f in failed), failed


def test_broken_amax_reduction_fails(library_copy: Path, toolchain: Toolchain) -> None:
    """The last workgroup's max over the AmaxWS partials becomes a min (of 0 and each partial): D is
    still right, the amax is 0. Every case whose GEMM has several workgroups and ran whole fails on
    the amax alone; edges (a subset of tiles) cannot tell."""
    dat = _placeholder(library_copy, AMAX)
    kernel = _kernels(library_copy, AMAX)[0]
    new = patch_instruction(toolchain, dat.with_suffix(".co"), kernel, r"v_max_f32_e32 v\d+, v\d+, v\d+", 10,
                            after=r"s_cbranch_scc1 label_AmaxLast")
    assert new.startswith("v_min_f32")
    report = _verify(library_copy, AMAX)
    doc = report.to_json()
    assert not report.ok and doc["passed"] == 1 and {f["kernel"] for f in doc["failed"]} == {kernel}
    assert {f["problem"].split(":")[0] for f in doc["failed"]} == {"full", "small", "alpha0", "k0"}
    assert all(f["error"].startswith("amax of D before scaleD = 0, want ") for f in doc["failed"]), doc["failed"]


def test_broken_split_k_reduction_fails(library_copy: Path, toolchain: Toolchain) -> None:
    """The reduction subtracts slice 1 instead of adding it: the cases run with GSU 3 on non-zero
    partials fail; alpha 0 (zero partials) and the GSU-1 cases do not reach it."""
    dat = _placeholder(library_copy, SPLIT_K)
    kernel = _kernels(library_copy, SPLIT_K)[0]
    new = patch_instruction(toolchain, dat.with_suffix(".co"), kernel, r"v_add_f32_e32 v\d+, v\d+, v\d+", 2,
                            after=r"buffer_atomic_dec .*")
    assert new.startswith("v_sub_f32")
    doc = _verify(library_copy, SPLIT_K).to_json()
    assert doc["passed"] == 1 and {f["kernel"] for f in doc["failed"]} == {kernel}
    assert {f["problem"].split(":")[0] for f in doc["failed"]} == {"full", "edges"}
    assert all("elements differ" in f["error"] for f in doc["failed"])


def test_broken_grouped_amax_reduction_fails(library_copy: Path, toolchain: Toolchain) -> None:
    """The same break in the grouped kernel: through the argument table every GEMM with several
    workgroups that ran whole has a wrong amax (edges ran a subset); UserArguments pass no amax output,
    so that launch still passes."""
    dat = _placeholder(library_copy, GROUPED)
    (kernel,) = _kernels(library_copy, GROUPED)
    patch_instruction(toolchain, dat.with_suffix(".co"), kernel, r"v_max_f32_e32 v\d+, v\d+, v\d+", 10,
                      after=r"s_cbranch_scc1 label_AmaxLast")
    report = _verify(library_copy, GROUPED)
    doc = report.to_json()
    assert not report.ok and doc["passed"] == 0, doc
    failed = [f["problem"] for f in doc["failed"]]
    assert all(p.startswith(f"{TABLE}, GEMM ") for p in failed), failed
    assert [p.split(":")[0].split()[-1] for p in failed] == ["full", "small", "alpha0", "k0"]
    assert all(f["error"].startswith("amax of D before scaleD = 0, want ") for f in doc["failed"]), doc["failed"]


def test_split_k_kernel_is_shown_by_a_split_solution(library_copy: Path) -> None:
    """A split-K kernel used by a GSU-1 solution and a GSU-3 one (the lower index) is verified through
    the GSU-3 one; another kernel keeps preferring GSU 1."""
    dat = _placeholder(library_copy, SPLIT_K)
    doc = read_dat(dat)
    first = min(doc["solutions"], key=lambda e: e["kernelName"])
    low = min(int(e["index"]) for e in doc["solutions"]) - 1
    doc["solutions"].append({**first, "index": low, "sizeMapping": {**first["sizeMapping"], "globalSplitU": 1}})
    dat.write_bytes(encode(doc, detect_format(dat)))
    shown = {k.name: k for k in kernels(library_dir(library_copy), "gfx942")}
    k = shown[first["kernelName"]]
    assert k.solutions == 2 and k.entry["sizeMapping"]["globalSplitU"] == GSU and k.entry["index"] != low
