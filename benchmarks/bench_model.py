"""Issue 2 figures: parsing the dev set into the model vs a bare CSafeLoader load, and model memory.

`python -m benchmarks.bench_model` writes benchmarks/results/model-<date>.json.
"""

from __future__ import annotations

import datetime
import gc
import json
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import yaml

from tensile_lite.logic import find_logic_files, read_logic_file

ROOT = Path(__file__).resolve().parents[1]


def shared_logic() -> Path | None:
    base = Path(os.environ.get("TENSILE_LITE_SHARED", ROOT.parent / "shared"))
    path = base / "logic"
    return path if path.is_dir() else None


def _timed(fn, files):
    t0, c0 = time.perf_counter(), time.process_time()
    for f in files:
        fn(f)
    return time.perf_counter() - t0, time.process_time() - c0


def retained_model_bytes(path: Path) -> tuple[int, int]:
    """(bytes the parsed model keeps alive, peak bytes while parsing) by tracemalloc."""
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    model = read_logic_file(path)
    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del model
    return current - base, peak - base


def main() -> int:
    logic = shared_logic()
    if logic is None:
        print("shared/logic not found; set TENSILE_LITE_SHARED", file=sys.stderr)
        return 1
    files = find_logic_files([logic])
    # Warm the page cache so both passes read from memory.
    for f in files:
        f.read_bytes()
    yaml_wall, yaml_cpu = _timed(lambda f: yaml.load(f.open("rb"), Loader=yaml.CSafeLoader), files)
    model_wall, model_cpu = _timed(read_logic_file, files)
    largest = max(files, key=lambda p: p.stat().st_size)
    kept, peak = retained_model_bytes(largest)
    size = largest.stat().st_size
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    result = {
        "scenario": "model-parse", "date": datetime.date.today().isoformat(), "commit": commit,
        "files": len(files), "yaml_load_wall_s": round(yaml_wall, 3), "yaml_load_cpu_s": round(yaml_cpu, 3),
        "model_parse_wall_s": round(model_wall, 3), "model_parse_cpu_s": round(model_cpu, 3),
        "parse_to_yaml_time_ratio": round(model_wall / yaml_wall, 3),
        "largest_file": largest.name, "largest_file_bytes": size, "largest_model_retained_bytes": kept,
        "largest_model_retained_ratio": round(kept / size, 3), "largest_parse_peak_traced_bytes": peak,
    }
    out = ROOT / "benchmarks" / "results" / f"model-{result['date']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
