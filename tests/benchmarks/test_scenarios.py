"""Scenario registry, skipping, result files, and the dev-set helpers the scenarios rely on."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchmarks import devset, scenarios, store
from benchmarks.__main__ import main
from tests.shared import dev_logic_files


def _skipper(_ctx: scenarios.Context) -> dict:
    raise scenarios.Skip("`tensile-lite frobnicate` does not exist yet")


def _breaker(_ctx: scenarios.Context) -> dict:
    raise ValueError("boom")


def _worker(ctx: scenarios.Context) -> dict:
    (ctx.work("x") / "f").write_text("1")
    return {"metrics": {"wall_s": 1.5}, "parts": {"a": {"wall_s": 1.0}}}


def test_skip_is_recorded_with_its_reason(tmp_path: Path) -> None:
    result = scenarios.run_scenario(scenarios.Scenario("frob", "test", _skipper))
    assert result["status"] == "skipped"
    assert "frobnicate" in result["reason"]
    assert result["machine"]["cores_logical"] >= 1
    assert result["git"]["short"]
    path = store.write_result(tmp_path, result)
    assert path.name.startswith("frob-") and path.name.endswith(f"-{result['git']['short']}.json")
    assert json.loads(path.read_text())["reason"] == result["reason"]


def test_failure_is_recorded_not_raised() -> None:
    result = scenarios.run_scenario(scenarios.Scenario("broken", "test", _breaker))
    assert result["status"] == "failed"
    assert "boom" in result["reason"] and "ValueError" in result["traceback"]


def test_work_folder_is_removed_unless_kept() -> None:
    result = scenarios.run_scenario(scenarios.Scenario("w", "test", _worker))
    assert result["status"] == "ok" and result["metrics"] == {"wall_s": 1.5}
    assert result["work_dir"] is None
    kept = scenarios.run_scenario(scenarios.Scenario("w", "test", _worker), keep_work=True)
    assert (Path(kept["work_dir"]) / "x" / "f").read_text() == "1"
    shutil.rmtree(kept["work_dir"])


def test_select_by_name_and_pattern() -> None:
    registry = {n: scenarios.Scenario(n, "", _skipper)
                for n in ("yaml-load", "build-gfx90a-j1", "build-gfx90a-j2", "build-gfx942-j2")}
    assert [s.name for s in scenarios.select_scenarios(registry, ["build-*-j2"])] == [
        "build-gfx90a-j2", "build-gfx942-j2"]
    assert len(scenarios.select_scenarios(registry, [])) == 4
    with pytest.raises(KeyError, match="nope"):
        scenarios.select_scenarios(registry, ["nope"])


def test_absent_dev_set_skips_with_the_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENSILE_LITE_SHARED", str(tmp_path / "nowhere"))
    registry = scenarios.all_scenarios()
    assert "build-devset" in registry and "yaml-load" in registry
    for name in ("yaml-load", "build-devset", "scale-gfx9"):
        result = scenarios.run_scenario(registry[name])
        assert result["status"] == "skipped", name
        assert "nowhere" in result["reason"]


def test_upstream_argv_matches_hipblaslt_cmake() -> None:
    argv = scenarios.upstream_tcl_argv(Path("/l"), Path("/o"), ["gfx90a", "gfx942"], 2)
    assert argv == [
        "--merge-files", "--separate-architectures", "--lazy-library-loading", "--no-short-file-names",
        "--no-library-print-debug", "--code-object-version=default", "--cxx-compiler=amdclang++", "--jobs=2",
        "--library-format=msgpack", "--architecture=gfx90a_gfx942", "--build-id=sha1", "/l", "/o", "HIP",
    ]


def test_pick_share_by_weight() -> None:
    weights = {Path(f"f{i}.yaml"): w for i, w in enumerate((40, 30, 20, 10))}
    assert devset.pick_share(weights, 1.0) == sorted(weights)
    assert devset.pick_share(weights, 0.5) == [Path("f0.yaml"), Path("f3.yaml")]
    assert devset.pick_share(weights, 0.25) == [Path("f2.yaml")]
    # Nothing fits under the target: the lightest file rather than an empty share.
    assert devset.pick_share({Path("a"): 100, Path("b"): 90}, 0.1) == [Path("b")]


def test_logic_architecture_forms(tmp_path: Path) -> None:
    plain = tmp_path / "a.yaml"
    plain.write_text("- {MinimumRequiredVersion: 4.33.0}\n- aquavanjaram\n- gfx942\n- [Device 0049]\n")
    with_cu = tmp_path / "b.yaml"
    with_cu.write_text("- {MinimumRequiredVersion: 4.33.0}\n- aldebaran\n- {Architecture: gfx90a, CUCount: 104}\n")
    mapping = tmp_path / "c.yaml"
    mapping.write_text("MinimumRequiredVersion: 4.33.0\nArchitectureName: gfx1100\n")
    broken = tmp_path / "d.yaml"
    broken.write_text("- [unclosed\n")
    assert [devset.logic_architecture(p) for p in (plain, with_cu, mapping, broken)] == [
        "gfx942", "gfx90a", "gfx1100", None]
    assert list(devset.architectures([with_cu, mapping, plain, broken])) == ["gfx90a", "gfx942", "gfx1100"]


def test_every_dev_set_file_has_an_architecture() -> None:
    files = dev_logic_files()
    archs = {devset.logic_architecture(p) for p in files}
    assert None not in archs
    assert {"gfx90a", "gfx942", "gfx1201"} <= archs


def test_list_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "yaml-load" in out and "scale-gfx9" in out


def test_report_command_on_empty_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--results", str(tmp_path), "report", "--no-plot"]) == 0
    assert (tmp_path / "REPORT.md").read_text().startswith("# tensile-lite benchmarks")
