"""verify-library on grouped-GEMM kernels: a library TensileCreateLibrary builds from the gfx942 dev-set
grouped logic file (f32 data through xf32 MFMAs, bias, scaleAlphaVec, the hipblaslt_all activation, user
arguments), each kernel launched once through the argument table (argType 1) and once through
UserArguments (argType 2) with five GEMMs of different sizes; and copies of it broken on purpose, where
each break must fail exactly the launches it affects.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tensile_lite.asm.gemm.grouped import record_bytes, user_argument_offsets
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.library.formats import read_dat
from tensile_lite.tcl import main as tcl_main
from tensile_lite.verify import verify_library
from tensile_lite.verify.grouped import ARG_TYPE_NAMES, GroupLayout
from tensile_lite.verify.mapping import ROW_MAJOR, Grid, TileOrder
from tensile_lite.verify.runtime_view import runtime_solution
from tests.shared import dev_logic_files
from tests.verify.corrupt import edit_entries, patch_literal

GROUPED_LOGIC = "aquavanjaram_Cijk_Ailk_Bjlk_S_MX_B_Bias_GG_HA_SAV_UserArgs.yaml"
# SolutionIndex of the solutions the default tests build: small tiles of both xf32 MFMA shapes
# (16x16x8: 32x16 and 16x64; 32x32x4: 128x32), so every launch is quick to emulate
CHOSEN = frozenset({8, 23, 203})
TABLE, USER = ARG_TYPE_NAMES[1], ARG_TYPE_NAMES[2]


def _build(tmp: Path, keep: frozenset[int] | None) -> Path:
    """TensileCreateLibrary on the grouped dev-set file (only the `keep` solutions, all when None)."""
    found = [p for p in dev_logic_files() if p.name == GROUPED_LOGIC]
    if not found:
        pytest.skip(f"the dev set has no {GROUPED_LOGIC}")
    logic = tmp / "logic"
    logic.mkdir()
    doc = yaml.load(found[0].read_text(), Loader=yaml.CSafeLoader)
    if keep is not None:
        doc[5] = [s for s in doc[5] if s["SolutionIndex"] in keep]
        assert len(doc[5]) == len(keep)
    (logic / GROUPED_LOGIC).write_text(yaml.dump(doc, Dumper=yaml.CSafeDumper))
    out = tmp / "out"
    assert tcl_main(["--architecture=gfx942", "--jobs=2", str(logic), str(out), "HIP"]) == 0
    return out


@pytest.fixture(scope="module")
def grouped_library(tmp_path_factory: pytest.TempPathFactory, toolchain: Toolchain) -> Path:
    """The chosen grouped solutions, built (read-only: copy with `grouped_copy` before changing it)."""
    return _build(tmp_path_factory.mktemp("grouped"), CHOSEN)


@pytest.fixture
def grouped_copy(grouped_library: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "out"
    shutil.copytree(grouped_library, dst)
    return dst


def _placeholder(out: Path) -> Path:
    found = sorted((out / "library").glob("TensileLibrary_*_GG_*_gfx942.dat"))
    assert len(found) == 1, found
    return found[0]


def _first_kernel(out: Path) -> dict:
    return min(read_dat(_placeholder(out))["solutions"], key=lambda e: e["kernelName"])


def test_grouped_kernels_pass_through_both_argument_kinds(grouped_library: Path) -> None:
    lines: list[str] = []
    report = verify_library(grouped_library, progress=lines.append)
    doc = report.to_json()
    assert doc["failed"] == [] and doc["skipped"] == [], doc
    assert doc["kernels"] == doc["passed"] == len(CHOSEN)
    for o in report.outcomes:
        # six GEMMs (full, edges, small, alpha 0, K 0, edges' shape at a user's GSU override) in each of two
        # launches
        assert o.problems == 12 and o.workgroups > 0 and o.instructions > 0, o
        assert not any("smaller than" in n for n in o.notes), o.notes
    launches = [ln for ln in lines if "GEMMs [" in ln]
    assert sum(TABLE in ln for ln in launches) == sum(USER in ln for ln in launches) == len(CHOSEN)
    assert all(ln.strip().endswith("s)") and ": ok (" in ln for ln in launches), launches
    assert "full, edges, small, alpha0, k0, override" in launches[0]


@pytest.mark.parametrize("arg_type", [1, 2])
def test_wrong_record_stride_fails_that_launch_only(grouped_copy: Path, toolchain: Toolchain, arg_type: int) -> None:
    """One kernel steps through its argType-1 records (or argType-2 structs) 4 bytes short: the first
    GEMM still reads its own arguments, the others read shifted ones. The launch of that kind fails;
    the other kind and the other kernels pass."""
    entry = _first_kernel(grouped_copy)
    kernel = entry["kernelName"]
    sol = runtime_solution(entry, "gfx942").solution
    size = record_bytes(sol) if arg_type == 1 else user_argument_offsets(sol)[1]
    opcode = "s_mov_b32" if arg_type == 1 else "s_cmov_b32"
    new = patch_literal(toolchain, _placeholder(grouped_copy).with_suffix(".co"), kernel,
                        rf"{opcode} s\d+, {size:#x}", size - 4)
    assert new.endswith(f"{size - 4:#x}")
    report = verify_library(grouped_copy, arch="gfx942")
    doc = report.to_json()
    assert not report.ok and doc["passed"] == len(CHOSEN) - 1 and doc["skipped"] == []
    assert {f["kernel"] for f in doc["failed"]} == {kernel}
    assert all(f["problem"].startswith(ARG_TYPE_NAMES[arg_type]) for f in doc["failed"]), doc["failed"]
    assert not any("GEMM 0 full:" in f["problem"] for f in doc["failed"])


def test_without_user_arguments_only_the_table_runs(grouped_copy: Path) -> None:
    """A problem type without device user arguments is launched through the table alone, and says so."""
    dat = _placeholder(grouped_copy)
    edit_entries(dat, lambda e: e["problemType"].update(supportDeviceUserArguments=False))
    kernel = _first_kernel(grouped_copy)["kernelName"]
    lines: list[str] = []
    report = verify_library(grouped_copy, arch="gfx942", limit=1, progress=lines.append)
    (outcome,) = report.outcomes
    assert outcome.kernel == kernel and outcome.status == "passed" and outcome.problems == 6
    assert any("argType 2 not run" in n for n in outcome.notes)
    assert any(TABLE in ln for ln in lines) and not any(USER in ln for ln in lines)


def test_group_layout_maps_every_workgroup_to_one_tile() -> None:
    """The runtime's numWorkGroups prefix sums: whatever the order, each workgroup computes one tile of
    one GEMM and every tile of every GEMM is computed once; XCC remaps over the whole launch."""
    layout = GroupLayout((Grid(3, 2, 2), Grid(1, 1, 1), Grid(2, 3, 1), Grid(4, 1, 3)))
    assert layout.starts == (0, 12, 13, 19) and layout.count == 31
    every = {(g, (i, j, b)) for g, grid in enumerate(layout.grids) for b in range(grid.batch)
             for j in range(grid.tiles1) for i in range(grid.tiles0)}
    for order in (ROW_MAJOR, TileOrder("wgm", 2), TileOrder("wgm", -3), TileOrder("xcc", 1, xcc=4),
                  TileOrder("xcc", -2, xcc=2, cu=6)):
        tiles = [layout.tile(order, (w, 0, 0)) for w in range(layout.count)]
        assert sorted(tiles) == sorted(every), order
        assert len(layout.table(order)) == layout.count
    assert [layout.tile(ROW_MAJOR, (w, 0, 0)) for w in (0, 1, 3, 12, 13, 30)] == [
        (0, (0, 0, 0)), (0, (1, 0, 0)), (0, (0, 1, 0)), (1, (0, 0, 0)), (2, (0, 0, 0)), (3, (3, 0, 2))]
    # XCC 2: even ids take the first half of the launch, odd ids the second
    assert layout.tile(TileOrder("xcc", 1, xcc=2), (1, 0, 0)) == layout.tile(ROW_MAJOR, (15, 0, 0))


@pytest.mark.slow
def test_every_grouped_dev_kernel_passes(tmp_path: Path, toolchain: Toolchain) -> None:
    out = _build(tmp_path, None)
    doc = verify_library(out, arch="gfx942").to_json()
    assert doc["failed"] == [], doc["failed"]
    assert doc["passed"] == doc["kernels"] > 100 and doc["skipped"] == []
