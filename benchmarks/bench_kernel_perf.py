"""Main-loop speed beside upstream's kernels: `../shared/tools/kernel-perf/compare.py` on the gfx942 dev set.

    python -m benchmarks run kernel-perf-gfx942

Builds the gfx942 dev-set library with hipBLASLt's argv, runs compare.py on it beside upstream's library for
the same files (`../shared/reference/upstream-lib/gfx942`), with our LDS bank conflicts measured on our
emulator (`--emu-lds`; `TL_KPERF_LDS=replay` replays them from the writer's plan instead), and records the
geometric means of ours/upstream (all pairs, large tiles, TN, NN, NT; schedule only `sim` and with bank
conflicts `sim_banks`) and the ten slowest pairs.
`TL_KPERF_OURS_LIB=DIR` reuses an already built library folder instead of building one (for iterating).
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks import devset
from benchmarks.scenarios import Context, Scenario, Skip, require_devset, require_tcl, run_build

ARCH = "gfx942"
KEYS = ("sim", "sim_banks", "mca")
# a macro tile of at least 256x128 (either way round) counts as large
LARGE_TILE = 256 * 128
# the layouts named by the contraction's A and B index orders in a library's name (the first index is the
# contiguous one: Ailk is A not transposed)
LAYOUTS = {("Ailk", "Bljk"): "NN", ("Alik", "Bljk"): "TN", ("Ailk", "Bjlk"): "NT", ("Alik", "Bjlk"): "TT"}
_TILE = re.compile(r"_MT(\d+)x(\d+)x(\d+)_")
_OPERANDS = re.compile(r"_(A[a-z]+)_(B[a-z]+)_")
_REPO = Path(__file__).resolve().parents[1]


def tool_dir() -> Path:
    return devset.shared_root() / "tools" / "kernel-perf"


def upstream_lib() -> Path:
    return devset.shared_root() / "reference" / "upstream-lib" / ARCH


def layout_of(label: str) -> str:
    found = _OPERANDS.search(label)
    return LAYOUTS.get((found.group(1), found.group(2)), "other") if found else "other"


def tile_area(kernel: str) -> int:
    found = _TILE.search(kernel)
    return int(found.group(1)) * int(found.group(2)) if found else 0


def geomean(values: Iterable[float]) -> float | None:
    logs = [math.log(v) for v in values if v and v > 0]
    return round(math.exp(sum(logs) / len(logs)), 3) if logs else None


def summarise(pairs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Geometric means per group and key, pair counts per group, and the ten pairs slowest with banks."""
    rows = []
    for p in pairs:
        ratio = p.get("speed_ratio") or {}
        if not ratio.get("sim"):
            continue
        kernel = str(p.get("ours", {}).get("kernel", ""))
        rows.append({"label": p["label"], "layout": layout_of(p["label"]), "large": tile_area(kernel) >= LARGE_TILE,
                     "kernel": kernel, **{k: ratio.get(k) for k in KEYS}})
    groups: dict[str, list[dict[str, Any]]] = {"all": rows, "large tiles": [r for r in rows if r["large"]]}
    for name in ("TN", "NN", "NT"):
        groups[name] = [r for r in rows if r["layout"] == name]
    means = {g: {k: geomean(r[k] for r in members) for k in KEYS} for g, members in groups.items()}
    counts = {g: len(members) for g, members in groups.items()}
    worst = sorted((r for r in rows if r["sim_banks"]), key=lambda r: r["sim_banks"])[:10]
    return {"geomean": means, "pairs": counts, "worst_ten": worst}


def lds_mode() -> str:
    """How our LDS bank conflicts are measured: "emu" (default: per-lane addresses traced while our emulator
    runs each kernel, whatever layout the writer chose) or "replay" (TL_KPERF_LDS=replay: lds_banks.py's
    replay of the plan, minutes instead of an hour, but it models only K-contiguous and transposed rows,
    not the stored-as-loaded k_rows operands)."""
    return "replay" if os.environ.get("TL_KPERF_LDS") == "replay" else "emu"


def compare(ours_lib: Path, logic: Sequence[Path], out_json: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, str(tool_dir() / "compare.py"), "--ours-lib", str(ours_lib),
           "--upstream-lib", str(upstream_lib()), "--json", str(out_json)]
    if lds_mode() == "emu":
        cmd.append("--emu-lds")
    else:
        for path in logic:
            cmd += ["--ours-logic", str(path)]
    # the emulator and the replay import tensile_lite: this checkout's
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (str(_REPO), os.environ.get("PYTHONPATH")))))
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def scenario_kernel_perf(ctx: Context) -> dict[str, Any]:
    if not (tool_dir() / "compare.py").is_file() or not upstream_lib().is_dir():
        raise Skip(f"kernel-perf tool or upstream library missing under {devset.shared_root()}")
    files = devset.architectures(require_devset()).get(ARCH, [])
    if not files:
        raise Skip(f"the dev set has no {ARCH} logic file")
    runs = []
    metrics: dict[str, Any] = {}
    reuse = os.environ.get("TL_KPERF_OURS_LIB")
    if reuse:
        ours = Path(reuse)
    else:
        require_tcl()
        built = run_build(ctx, f"{ARCH}-j2", devset.logic_root(), [ARCH], jobs=2)
        runs.append(built["run"])
        if built["run"]["exit_code"] != 0:
            return {"runs": runs, "status": "failed", "reason": "the dev-set build failed"}
        metrics.update({k: built["metrics"][k] for k in ("kernels", "cpu_s", "cpu_s_per_kernel")
                        if k in built["metrics"]})
        ours = ctx.work(f"{ARCH}-j2") / "out" / "library"
    out_json = ctx.work("perf") / "perf.json"
    t0 = time.perf_counter()
    done = compare(ours, files, out_json)
    if done.returncode != 0 or not out_json.is_file():
        tail = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return {"runs": runs, "status": "failed", "reason": f"compare.py exit {done.returncode}: {tail}"}
    summary = summarise(json.loads(out_json.read_text(encoding="utf-8")))
    metrics.update({"compare_wall_s": round(time.perf_counter() - t0, 1), "pairs": summary["pairs"]["all"]})
    for group, means in summary["geomean"].items():
        for key, value in means.items():
            metrics[f"{key} {group}"] = value
    return {"metrics": metrics, "runs": runs,
            "details": {"ours_lib": str(ours) if reuse else "built", "large_tile": f"MT0*MT1 >= {LARGE_TILE}",
                        "lds_conflicts": lds_mode(),
                        **summary}}


SCENARIOS = (Scenario(f"kernel-perf-{ARCH}", f"kernel-perf compare.py: our {ARCH} dev-set main loops beside "
                      "upstream's (sim, sim_banks, mca geometric means; worst ten pairs)", scenario_kernel_perf),)
