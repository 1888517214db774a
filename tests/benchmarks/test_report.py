"""The report renders from fixture result files: latest per scenario, upstream beside ours, targets, plot."""

from __future__ import annotations

import shutil
from pathlib import Path

from benchmarks import report, store

FIXTURES = Path(__file__).parent / "fixtures"


def _latest() -> dict:
    return store.latest_per_scenario(store.load_results(FIXTURES))


def test_latest_result_per_scenario_wins() -> None:
    latest = _latest()
    assert latest["build-gfx942-j2"]["git"]["short"] == "abcdef12"
    assert "not-a-result" not in "".join(r["_path"] for r in latest.values())
    assert set(latest) == {"build-gfx942-j1", "build-gfx942-j2", "build-sample", "parse", "pipeline-synthetic",
                           "scale-gfx9", "yaml-load"}


def test_render_sets_ours_beside_upstream() -> None:
    text = report.render(_latest())
    assert "| **build-gfx942-j2** | 30.50 | 38.50 | 210.0 MiB |" in text
    assert "999.00" not in text  # the older run of the same scenario is not shown
    # Kernel count beside upstream's reference count, CPU per kernel beside upstream's 1.04.
    assert "| build-gfx942-j2 | 770 / 770 | 0.050 / 1.04 | 210.0 MiB / 1.40 GiB | 12.0 MiB / 127.0 MiB |" in text
    assert "✅ CPU-s per kernel <= 0.1" in text
    assert "(targets are for --jobs 2)" in text
    assert "| CPU user + sys, 9 files | 38.5 s | 793 s | 0.049 |" in text


def test_render_lists_skips_scaling_parse_and_sources() -> None:
    text = report.render(_latest())
    assert "| build-sample | skipped |" in text and "tensile_lite.tcl" in text
    assert "| quarter | 0.250 | 3 | 190 |" in text
    assert "peak_tree_rss x1.003" in text
    assert "x1.31 the bare YAML load" in text
    assert "kernels_per_s = 166.700" in text
    assert "hipBLASLt#1073" in text and "upstream_baseline.md" in text


def test_render_without_results() -> None:
    text = report.render({})
    assert "No successful results yet." in text
    assert "No scaling result yet." in text


def test_write_report_with_plot(tmp_path: Path) -> None:
    for path in FIXTURES.glob("*.json"):
        shutil.copy(path, tmp_path)
    out, text, png = report.write_report(tmp_path)
    assert out.read_text(encoding="utf-8") == text
    # The newest build-like result with a time series is the scaling run.
    assert png is not None and png.name == "scale-gfx9-20261201-abcdef12.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"({png.name})" in text
