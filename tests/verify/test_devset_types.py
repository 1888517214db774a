"""verify-library on what the kernel writer builds beyond f16/bf16/f32 CDNA kernels: 8-bit floats in both
encodings (FNUZ on gfx940/941/942, OCP on gfx1200), RDNA (gfx1100 wave32 WMMA, gfx1200's 3-D grid),
the E output (UseE), int32 epilogues (ScaleAlphaVec as an int vector, the i32 activations) and split-K
through the runtime's conversion kernel (MultipleBuffer). One TensileCreateLibrary build of a few small
solutions taken from the dev-set logic files, and copies of it broken on purpose: each break must fail
exactly what it affects.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile

from tensile_lite.codeobj.toolchain import Toolchain, find_toolchain_for
from tensile_lite.errors import ToolchainError
from tensile_lite.library.formats import read_dat
from tensile_lite.tcl import main as tcl_main
from tensile_lite.verify import KernelOutcome, Report, elements, epilogue, select, verify_kernel
from tensile_lite.verify.launch import grid_of
from tensile_lite.verify.problems import cases
from tensile_lite.verify.runner import _Emulators
from tensile_lite.verify.runtime_view import runtime_solution
from tests.shared import dev_logic_files
from tests.verify.corrupt import edit_entries, patch_instruction
from tests.verify.trimmed import write_trimmed

# dev-set file -> (solution positions kept, a change of its problem type or None, name of the copy)
F8H = "aquavanjaram_Cijk_Ailk_Bljk_F8H_HHS_BH_Bias_HAS_SAB_SAV_UserArgs.yaml"  # gfx942, f16 with fp8 A
B8B8 = "aquavanjaram_Cijk_Ailk_Bjlk_B8B8S_BH_BiasSHB_AmaxD_HAS_SAB_SCD_SAV_UserArgs.yaml"  # gfx941, bf8 D
F8B8F8 = "aquavanjaram_Cijk_Alik_Bjlk_F8B8F8S_BH_BiasSH_AmaxD_HAS_SAB_SCD_SAV_UserArgs.yaml"  # gfx940, fp8 D
GFX1200 = "gfx1200_Cijk_Alik_Bljk_F8B8S_BH_BiasSHB_HAS_SAB_SAV_UserArgs.yaml"  # OCP fp8 x bf8
NAVI31 = "navi31_Cijk_Alik_Bjlk_BBS_BH_Bias_AuxB_HAS_SAV_UserArgs.yaml"  # gfx1100, E in bf16
INT8 = "gfx1201_Cijk_Ailk_Bjlk_I8II_BH_HAI_SAV_UserArgs.yaml"  # int32 epilogue, relu
PICKS: dict[str, tuple[str, tuple[int, ...], dict[str, Any] | None]] = {
    F8H: ("gfx942", (32, 27), None),      # MultipleBuffer GSU 8, and GSU 1
    B8B8: ("gfx941", (0,), None),
    F8B8F8: ("gfx940", (0,), None),
    GFX1200: ("gfx1200", (0,), None),
    NAVI31: ("gfx1100", (1, 3), None),    # GSU 1, and MultipleBuffer GSU 4 (E from the conversion kernel)
    INT8: ("gfx1201", (14,), None),
    "all_" + INT8: ("gfx1201", (14,), {"ActivationType": "all"}),  # abs, leakyrelu, clippedrelu too
}
MULTIPLE_BUFFER = {"gfx942": 8, "gfx1100": 4}  # the GSU of each library's MultipleBuffer solution


def _archs() -> list[str]:
    """The targets built: gfx940/941 only when an LLVM that still knows them is installed."""
    out = []
    for arch in dict.fromkeys(arch for arch, _, _ in PICKS.values()):
        try:
            find_toolchain_for(arch)
        except ToolchainError:
            continue
        out.append(arch)
    return out


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory, toolchain: Toolchain) -> Path:
    """The picked solutions built for their architectures (read-only: copy with `library_copy`)."""
    files = {p.name: p for p in dev_logic_files()}
    archs = _archs()
    base = tmp_path_factory.mktemp("devset_types")
    logic = base / "logic"
    logic.mkdir()
    for name, (arch, keep, change) in PICKS.items():
        source = name.removeprefix("all_")
        if source not in files:
            pytest.skip(f"the dev set has no {source}")
        if arch in archs:
            write_trimmed(files[source], logic / name, keep, change)
    out = base / "out"
    assert tcl_main([f"--architecture={'_'.join(archs)}", "--jobs=2", str(logic), str(out), "HIP"]) == 0
    return out


def _verify(out: Path, keep: Callable[[Any], bool] = lambda k: True,
            progress: Callable[[str], None] = lambda _: None) -> Report:
    todo = [k for k in select(out) if keep(k)]
    emulators = _Emulators(todo)
    return Report(tuple(verify_kernel(k, emulators, progress=progress) for k in todo), 0.0)


def _of(report: Report, arch: str, contains: str = "") -> list[KernelOutcome]:
    return [o for o in report.outcomes if o.arch == arch and contains in o.kernel]


def _dat(out: Path, arch: str, contains: str) -> Path:
    found = [p for p in (out / "library").glob(f"TensileLibrary_*_{arch}.dat") if contains in p.name]
    assert len(found) == 1, found
    return found[0]


def _gsu(out: Path, o: KernelOutcome) -> int:
    lib = out / "library"
    for dat in lib.glob(f"TensileLibrary_*_{o.arch}.dat"):
        for e in read_dat(dat)["solutions"]:
            if e["kernelName"] == o.kernel:
                return int(e["sizeMapping"]["globalSplitU"])
    raise AssertionError(o.kernel)


def _overridden(o: KernelOutcome) -> bool:
    return any(n.startswith("case override runs") for n in o.notes)


def test_every_kernel_passes(library: Path) -> None:
    lines: list[str] = []
    report = _verify(library, progress=lines.append)
    doc = report.to_json()
    assert doc["failed"] == [] and doc["skipped"] == [], doc
    archs = set(_archs())
    assert {o.arch for o in report.outcomes} == archs
    assert doc["passed"] == doc["kernels"] == sum(len(keep) for arch, keep, _ in PICKS.values() if arch in archs)
    # five cases, and a sixth for a GSU-1 MultipleBuffer kernel that takes a user's GSU override
    assert all(o.problems == 5 + _overridden(o) for o in report.outcomes), [(o.kernel, o.problems, o.notes)
                                                                           for o in report.outcomes]
    # the MultipleBuffer kernels ran their GSU through the conversion kernel, and said so
    for arch, gsu in MULTIPLE_BUFFER.items():
        (split,) = [o for o in _of(report, arch) if _gsu(library, o) > 1]
        assert _gsu(library, split) == gsu
    assert sum(f"GSU={MULTIPLE_BUFFER['gfx942']}" in ln and "conversion" in ln and ": ok (" in ln
               for ln in lines) == 3, lines  # full, edges, alpha0; small and k0 have K below the minimum
    # gfx12 is launched on the runtime's 3-D grid, the others on a 1-D one
    for k in select(library):
        rs = runtime_solution(k.entry, k.arch)
        todo, _ = cases(rs, k.entry.get("problemPredicate"))
        assert all(grid_of(rs, c).three_d == k.arch.startswith("gfx12") for c in todo), k.name
        if "_AI_" in k.name:
            # the `all` int32 kernel ran every i32 activation
            kinds = {c.name: epilogue.make(rs.problem_type, c.problem, c.name, np.random.default_rng(0)) for c in todo}
            assert {n: ep.activation for n, ep in kinds.items() if ep} == {
                "full": "none", "edges": "relu", "small": "abs", "alpha0": "leakyrelu", "k0": "clippedrelu"}


def test_wrong_fp8_encoding_fails(library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """FNUZ and OCP swapped: every kernel with an 8-bit float operand or output fails, the others pass."""
    swap = {"fnuz": "ocp", "ocp": "fnuz"}
    real = elements.fp8_encoding
    monkeypatch.setattr(elements, "fp8_encoding", lambda arch: swap.get(real(arch) or "", None))
    report = _verify(library, lambda k: k.arch in ("gfx942", "gfx1200", "gfx1100", "gfx941"))
    failed = {o.arch for o in report.outcomes if o.status == "failed"}
    assert failed == {"gfx942", "gfx1200", "gfx941"} & set(_archs()), report.to_json()["failed"]
    assert all(o.status == "passed" for o in _of(report, "gfx1100"))
    assert all(o.status == "failed" for o in report.outcomes if o.arch != "gfx1100")


def test_library_lying_about_an_8bit_operand_fails(library_copy: Path) -> None:
    """The .dat says A is bf8 where the gfx1200 kernel reads fp8: the runtime would send other bits."""
    dat = _dat(library_copy, "gfx1200", "F8B8")
    edit_entries(dat, lambda e: e["problemType"].update(aType="BFloat8"))
    (o,) = _verify(library_copy, lambda k: k.arch == "gfx1200").outcomes
    assert o.status == "failed", o
    assert {f.problem.split(":")[0] for f in o.failures} == {"full", "edges", "small"}
    assert all("elements differ" in f.error for f in o.failures)


def test_library_lying_about_e_type_fails_on_e(library_copy: Path) -> None:
    """E is written in bf16; a .dat saying f16 makes E (only E) wrong in the kernel's own epilogue. For
    the MultipleBuffer kernel the runtime would also look for an `_AuxH` conversion kernel, which the
    library does not have: its GSU-4 cases, and the GSU-1 kernel's case with a user's GSU override, fail
    on that; the GSU-1 ones on E."""
    dat = _dat(library_copy, "gfx1100", "Bias_Aux")
    edit_entries(dat, lambda e: e["problemType"].update(eType="Half"))
    report = _verify(library_copy, lambda k: k.arch == "gfx1100")
    assert len(report.outcomes) == 2 and report.count("failed") == 2, report.to_json()
    for o in report.outcomes:
        # alpha 0 and K 0 too: E = beta * C + bias there
        assert {f.problem.split(":")[0] for f in o.failures} == {"full", "edges", "small", "alpha0", "k0"} | (
            {"override"} if _overridden(o) else set())
        for f in o.failures:
            if re.search(r"GSU=[2-9]", f.problem):
                assert "_AuxH_" in f.error and "conversion kernel" in f.error and "is not in" in f.error, f
            else:
                assert "elements of E differ" in f.error and "D[" not in f.error, f


def test_broken_conversion_kernel_fails(library_copy: Path, toolchain: Toolchain) -> None:
    """The gfx942 conversion kernels for GSU 8 subtract the slices after the first instead of adding
    them: the cases run with GSU 8 on non-zero slices fail (alpha 0 sums zeros), the GSU-1 cases and
    the other kernel pass."""
    hsaco = library_copy / "library" / "Kernels.so-000-gfx942.hsaco"
    with hsaco.open("rb") as f:
        names = [s.name for s in ELFFile(f).get_section_by_name(".symtab").iter_symbols()
                 if "_PostGSU8_" in s.name and not s.name.endswith(".kd")]
    assert names
    for name in names:
        new = patch_instruction(toolchain, hsaco, name, r"v_add_f32_e32 v\d+, v\d+, v\d+", 2)
        assert new.startswith("v_sub_f32")
    report = _verify(library_copy, lambda k: k.arch == "gfx942")
    failed = [o for o in report.outcomes if o.status == "failed"]
    assert report.count("passed") == 1 and len(failed) == 1, report.to_json()
    assert _gsu(library_copy, failed[0]) == 8
    assert {f.problem.split(":")[0] for f in failed[0].failures} == {"full", "edges"}


def test_missing_helper_code_object_fails_every_multiple_buffer_kernel(library_copy: Path) -> None:
    """Both MultipleBuffer kernels need the helper code object: the GSU-4 one in every case, the GSU-1 one
    (it takes the runtime's GSU) for its case with a user's override; each fails on the code object."""
    (library_copy / "library" / "Kernels.so-000-gfx1100.hsaco").unlink()
    report = _verify(library_copy, lambda k: k.arch == "gfx1100")
    assert {o.status for o in report.outcomes} == {"failed"}, report.to_json()
    by_gsu = {_gsu(library_copy, o): o for o in report.outcomes}
    assert set(by_gsu) == {1, 4}, report.to_json()
    assert all({f.problem for f in o.failures} == {"code object"} for o in report.outcomes), report.to_json()
    for o in report.outcomes:
        assert all("Kernels.so-000-gfx1100.hsaco" in f.error for f in o.failures), o


def test_broken_integer_relu_fails(library_copy: Path, toolchain: Toolchain) -> None:
    """The first i32 relu of the hipblaslt_all int8 kernel (the full-tile store path) becomes min(0, x):
    of the cases that run relu (edges, small), the one with full tiles fails; `small`, all edge tiles,
    the cases without relu and the `all` kernel pass."""
    dat = _dat(library_copy, "gfx1201", "I8I8_II8_HA_")
    (entry,) = [e for e in read_dat(dat)["solutions"] if "_HAI_" in e["kernelName"]]
    new = patch_instruction(toolchain, dat.with_suffix(".co"), entry["kernelName"], r"v_max_i32_e32 v\d+, 0, v\d+",
                            0x11)
    assert new.startswith("v_min_i32")
    report = _verify(library_copy, lambda k: k.arch == "gfx1201")
    doc = report.to_json()
    assert doc["passed"] == 1 and {f["kernel"] for f in doc["failed"]} == {entry["kernelName"]}, doc
    assert {f["problem"].split(":")[0] for f in doc["failed"]} == {"edges"}
