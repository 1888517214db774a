"""`tensile-lite coverage`: per-architecture counts and ranked missing features, as text and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tensile_lite.cli import main
from tests.shared import dev_logic_files, shared_dir


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["coverage", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_report_on_dev_set(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, str(shared_dir("logic")), "--json")
    assert code == 0
    doc = json.loads(out)
    assert set(doc) == {"architectures", "total", "missing_features"}
    archs = doc["architectures"]
    for arch, row in archs.items():
        assert set(row) == {"solutions", "supported", "kernels", "supported_kernels", "blocked_by",
                            "unreadable_files", "files_left_out_of_libraries", "custom_kernel_solutions"}
        # the dev set's five custom kernels (eight solutions) are all gfx942's, each built from its file
        assert row["custom_kernel_solutions"] == (8 if arch == "gfx942" else 0)
        assert row["unreadable_files"] == [] and row["files_left_out_of_libraries"] == []
        # per architecture, the blockers add up to the overall ranking
        assert sum(m["solutions"] for m in row["blocked_by"]) >= row["solutions"] - row["supported"]
        assert 0 <= row["supported"] <= row["solutions"]
        assert 0 <= row["supported_kernels"] <= row["kernels"] <= row["solutions"]
        assert (row["supported"] == 0) == (row["supported_kernels"] == 0), arch
    assert doc["total"] == {"solutions": sum(r["solutions"] for r in archs.values()),
                            "supported": sum(r["supported"] for r in archs.values()), "custom_kernel_solutions": 8}
    assert doc["total"]["solutions"] == 2290
    assert archs["gfx942"]["supported"] >= 500 and archs["gfx90a"]["supported"] >= 300
    # the WMMA writer covers the RDNA files whose types and epilogue it builds
    assert archs["gfx1200"]["supported"] == archs["gfx1200"]["solutions"] and archs["gfx1102"]["supported"] > 0
    features = doc["missing_features"]
    counts = [f["solutions"] for f in features]
    assert counts == sorted(counts, reverse=True) and all(c > 0 for c in counts)
    names = {f["feature"] for f in features}
    # the dev set's gradient solutions (BGRADB: 2 on gfx941, 1 on gfx908) are built; gfx908 stays out
    assert "CustomKernel" not in names
    assert not any(n.startswith("Gradient") for n in names)
    assert archs["gfx941"]["supported"] == archs["gfx941"]["solutions"]
    # the MAC kernels (f32 in wave64 on gfx1100, f64 on gfx1101/gfx1201) are built
    assert not any(n.startswith("non-MFMA") or n in ("wave64", "dtype:D/D/D") for n in names)
    assert archs["gfx1100"]["supported"] == archs["gfx1100"]["solutions"]
    # split-K through the conversion kernels with int32 compute (gfx1101's I8II) and LocalSplitU with
    # split-K (gfx942) are built: every solution of both
    for arch in ("gfx1101", "gfx942"):
        assert archs[arch]["supported"] == archs[arch]["solutions"], arch
    assert not any(n.startswith(("GSU MultipleBuffer", "LocalSplitU with")) for n in names)
    # every unsupported solution is blocked by at least one feature
    unsupported = doc["total"]["solutions"] - doc["total"]["supported"]
    assert max(counts) <= unsupported <= sum(counts)
    assert sum(m["solutions"] for r in archs.values() for m in r["blocked_by"]) == sum(counts)


def test_text_report_single_file(capsys: pytest.CaptureFixture[str]) -> None:
    path = next((p for p in dev_logic_files() if p.stem.endswith("Cijk_Ailk_Bljk_HHS_BH_UserArgs")), None)
    if path is None:
        pytest.skip("the HHS dev-set file is not available")
    code, out, _ = _run(capsys, str(path))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["arch", "solutions", "supported"]
    assert lines[1].split()[0] == "gfx942"
    # its LocalSplitU solutions with MultipleBuffer split-K are built
    assert "LocalSplitU with split-K" not in out and "total: 104 of 104" in out


def test_missing_path_is_an_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _run(capsys, str(tmp_path / "nowhere"))
    assert code == 2 and "nowhere" in err


def test_unreadable_file_is_reported(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("- 1\n- 2\n")
    code, _, err = _run(capsys, str(tmp_path))
    assert code == 2 and "bad.yaml" in err



