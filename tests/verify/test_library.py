"""verify-library end to end on the sample library TensileCreateLibrary builds, and on copies of it
broken on purpose: each break must be reported as a failure (or a skip with its reason), never a pass."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import numpy as np
import pytest

from tensile_lite.cli import main
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.library.formats import read_dat
from tensile_lite.verify import launch, verify_library
from tensile_lite.verify.reference import expected
from tests.verify.corrupt import edit_entries, patch_instruction, placeholder

SS_KERNEL_TAG = "Contraction_l_Alik_Bjlk"  # the gfx942 f32 placeholder of the sample


def test_sample_library_passes(sample_library: Path) -> None:
    report = verify_library(sample_library)
    doc = report.to_json()
    assert doc["failed"] == [] and doc["skipped"] == [], doc
    assert doc["kernels"] == doc["passed"] == 4
    assert {o.arch for o in report.outcomes} == {"gfx90a", "gfx942"}
    for o in report.outcomes:
        # full tiles, edges with K tail and batch, sub-tile, alpha 0, K 0, and edges' shape at a user's GSU
        # override (every sample kernel is a GSU-1 MultipleBuffer one that takes the runtime's GSU)
        assert o.problems == 6 and o.workgroups > 0 and o.instructions > 0, o
    assert report.ok


def test_json_shape_and_exit_code(sample_library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["verify-library", str(sample_library), "--arch", "gfx942", "--kernels", "1", "--seed", "3",
                 "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {"kernels", "passed", "failed", "skipped"} <= set(doc)
    assert doc["kernels"] == 1 and doc["passed"] == 1 and doc["failed"] == [] and doc["skipped"] == []
    assert isinstance(doc["problems"], int) and doc["problems"] == 6
    assert isinstance(doc["workgroups"], int) and isinstance(doc["seconds"], float)


def test_table_and_progress(sample_library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify-library", str(sample_library / "library"), "--arch", "gfx90a", "--kernels", "1"]) == 0
    out, err = capsys.readouterr()
    assert "passed" in out and "1 kernels: 1 passed, 0 failed, 0 skipped" in out
    assert "[1/1]" in err and "edges:" in err


def test_missing_library_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify-library", str(tmp_path)]) == 2
    assert "TensileLibrary_lazy_" in capsys.readouterr().err


def _flip_b_along_k(pt, a, b, c, d_letters, d_shape, k, alpha, beta, ep=None, **kw):
    """A deliberately wrong reference: B's summation index reversed."""
    axis = next(i for i, ch in enumerate(b.letters) if ch in a.letters and ch not in d_letters)
    return expected(pt, a, attrs.evolve(b, values=np.flip(b.values, axis=axis)), c, d_letters, d_shape, k, alpha,
                    beta, ep, **kw)


def test_wrong_reference_is_caught(sample_library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launch, "expected", _flip_b_along_k)
    report = verify_library(sample_library, arch="gfx942")
    assert report.count("failed") == 2 and not report.ok
    failed = report.to_json()["failed"]
    # every case with A @ B in it fails (alpha 0 and K 0 do not use B)
    assert {f["problem"].split(":")[0] for f in failed} == {"full", "edges", "small", "override"}
    assert all("elements differ" in f["error"] for f in failed)


def test_broken_kernel_fails(library_copy: Path, toolchain: Toolchain, capsys: pytest.CaptureFixture[str]) -> None:
    """One instruction of one kernel changed: the alpha multiply of the full-tile, beta != 0 store path
    becomes an add. Cases with a full tile and beta != 0 reach it; `alpha0` does too, but adding 0 to a
    zero accumulator is still right, and `override` runs at GSU 2, where the conversion kernel applies alpha,
    so exactly `edges` and `k0` must fail."""
    dat = placeholder(library_copy, "gfx942", SS_KERNEL_TAG)
    kernel = sorted(e["kernelName"] for e in read_dat(dat)["solutions"])[0]
    new = patch_instruction(toolchain, dat.with_suffix(".co"), kernel, r"v_mul_f32_e32 v\d+, s\d+, v\d+", 1)
    assert new.startswith("v_add_f32")
    code = main(["verify-library", str(library_copy), "--arch", "gfx942", "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    assert doc["passed"] == 1 and {f["kernel"] for f in doc["failed"]} == {kernel}
    assert {f["problem"].split(":")[0] for f in doc["failed"]} == {"edges", "k0"}


def test_unsupported_instruction_is_skipped(library_copy: Path, toolchain: Toolchain) -> None:
    dat = placeholder(library_copy, "gfx942", SS_KERNEL_TAG)
    kernel = sorted(e["kernelName"] for e in read_dat(dat)["solutions"])[0]
    new = patch_instruction(toolchain, dat.with_suffix(".co"), kernel, r"v_mul_f32_e32 v\d+, s\d+, v\d+", 4)
    report = verify_library(library_copy, arch="gfx942")
    outcome = next(o for o in report.outcomes if o.kernel == kernel)
    if outcome.status != "skipped":
        pytest.skip(f"the emulator now implements {new.split()[0]}; choose another opcode")
    assert new.split()[0] in outcome.reason and "does not implement" in outcome.reason
    assert report.ok and report.count("passed") == 1


def test_library_lying_about_a_transpose_fails(library_copy: Path) -> None:
    """The .dat says B is not transposed while the kernel reads it transposed: the runtime would pack
    B's strides for the other layout, and the results are wrong."""
    dat = placeholder(library_copy, "gfx942", SS_KERNEL_TAG)

    def untranspose_b(entry: dict) -> None:
        pt = entry["problemType"]
        pt["operationIdentifier"] = pt["operationIdentifier"].replace("_Bjlk_", "_Bljk_")
        pt["transB"] = False

    edit_entries(dat, untranspose_b)
    report = verify_library(library_copy, arch="gfx942")
    assert report.count("failed") == 2
    assert all(f["problem"].split(":")[0] in ("full", "edges", "small", "override") for f in report.to_json()["failed"])


def test_argument_layout_mismatch_is_a_contract_failure(library_copy: Path) -> None:
    """The .dat drops beta: the runtime would pack 4 bytes less than the kernel declares."""
    dat = placeholder(library_copy, "gfx942", SS_KERNEL_TAG)
    edit_entries(dat, lambda e: e["problemType"].update(useBeta=False))
    failed = verify_library(library_copy, arch="gfx942").to_json()["failed"]
    assert len(failed) == 2 and all(f["problem"] == "launch contract" for f in failed)
    assert "arguments" in failed[0]["error"]


def test_kernel_missing_from_code_object_fails(library_copy: Path) -> None:
    dat = placeholder(library_copy, "gfx942", SS_KERNEL_TAG)
    edit_entries(dat, lambda e: e.update(kernelName=e["kernelName"] + "_gone"))
    failed = verify_library(library_copy, arch="gfx942").to_json()["failed"]
    assert len(failed) == 2 and all("has no kernel" in f["error"] for f in failed)


def test_unsupported_problem_type_is_skipped_with_reason(library_copy: Path) -> None:
    dat = placeholder(library_copy, "gfx942", SS_KERNEL_TAG)
    edit_entries(dat, lambda e: e["problemType"].update(stridedBatched=False))
    doc = verify_library(library_copy, arch="gfx942").to_json()
    assert doc["passed"] == 0 and doc["failed"] == [] and len(doc["skipped"]) == 2
    assert all("batched pointer arrays" in s["reason"] for s in doc["skipped"])


def test_library_claiming_a_bias_the_kernel_lacks_fails(library_copy: Path) -> None:
    """A bias in the .dat makes the runtime append bias arguments the kernel does not declare."""
    dat = placeholder(library_copy, "gfx942", SS_KERNEL_TAG)
    edit_entries(dat, lambda e: e["problemType"].update(useBias=1, biasDataTypeWhiteList=["Float"]))
    failed = verify_library(library_copy, arch="gfx942").to_json()["failed"]
    assert len(failed) == 2 and all(f["problem"] == "launch contract" for f in failed)
