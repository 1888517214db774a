"""Result files: `results/<scenario>-<date>-<commit>.json`, and finding the latest one per scenario."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"
SCHEMA = 1

# Headline metric names the report tabulates (bytes unless the name says otherwise); a scenario may add
# others, which the report lists under "Other figures".
METRIC_NAMES = frozenset({
    "wall_s", "cpu_s", "peak_tree_rss", "peak_process_rss", "peak_temp_disk", "peak_disk_over_outputs",
    "peak_temp_files", "out_co", "out_dat", "out_dat_zlib", "out_hsaco", "out_other", "out_files", "kernels",
    "helper_kernels", "solutions", "files", "jobs", "cpu_s_per_kernel", "exit_code",
})


def result_path(results_dir: Path, scenario: str, date: str, commit_short: str) -> Path:
    return results_dir / f"{scenario}-{date.replace('-', '')}-{commit_short}.json"


def write_result(results_dir: Path, result: Mapping[str, Any]) -> Path:
    """Write atomically (temporary name + rename) so a half-written file is never read as a result."""
    results_dir.mkdir(parents=True, exist_ok=True)
    path = result_path(results_dir, result["scenario"], result["finished_at"][:10], result["git"]["short"])
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def load_results(results_dir: Path) -> list[dict[str, Any]]:
    """Every readable result file; files that are not results (or are broken) are ignored."""
    found = []
    for path in sorted(results_dir.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("schema") == SCHEMA and "scenario" in data:
            data["_path"] = str(path)
            found.append(data)
    return found


def latest_per_scenario(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    latest: dict[str, dict[str, Any]] = {}
    for res in results:
        name = res["scenario"]
        if name not in latest or res.get("finished_at", "") > latest[name].get("finished_at", ""):
            latest[name] = res
    return dict(sorted(latest.items()))
