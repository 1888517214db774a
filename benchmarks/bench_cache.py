"""Rebuilds with the kernel cache, and the whole 2024 gfx942 library from a logic tree given on the command line.

cache-warm-devset: the dev set's gfx942 files copied, built cold into an empty cache, one logic file touched
(a YAML comment appended: new bytes and mtime, same solutions), and built again with the warm cache. The warm
run's figures are the headline; `details` says whether its library is byte-identical to the cold one and how
many kernels came from the cache.

whole-gfx942: `python -m benchmarks run whole-gfx942 --logic-root ASM_FULL` builds hipBLASLt's whole gfx942
library from the logic tree ASM_FULL (nothing is fetched; skipped without it), cold at --jobs=2 into an empty
cache, then warm. Assembler versus Python: the warm run renders no text and runs no assembler, so
`cpu_s(cold) - cpu_s(warm)` is the CPU of generating and assembling the kernels, the rest is reading, planning and
linking.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path
from typing import Any

from benchmarks import devset
from benchmarks.runner import measure
from benchmarks.scenarios import (
    Context,
    Scenario,
    Skip,
    build_dirs,
    build_metrics,
    require_devset,
    tcl_cmd,
    upstream_tcl_argv,
)

_TALLY = re.compile(r"kernel cache \S+: (\d+) of (\d+) kernel objects from the cache, (\d+) assembled")


def _library_digest(out: Path) -> str:
    """One digest of every library file but the manifest (which holds absolute paths)."""
    h = hashlib.sha256()
    lib = out / "library"
    for path in sorted(lib.rglob("*")):
        if path.is_file() and path.name != "TensileManifest.txt":
            h.update(path.relative_to(lib).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _cached_build(ctx: Context, label: str, logic: Path, arch: str, cache: Path) -> dict[str, Any]:
    dirs, env = build_dirs(ctx, label)
    argv = [*upstream_tcl_argv(logic, dirs["out"], [arch], 2), f"--cache-dir={cache}"]
    m = measure(tcl_cmd(argv), watch_dirs=dirs, env=env, cwd=dirs["cwd"], interval=ctx.interval)
    tally = _TALLY.findall(m.stderr)
    hits, objects, assembled = map(int, tally[-1]) if tally else (0, 0, 0)
    return {"metrics": build_metrics(m), "run": {"label": label, **m.to_json()}, "exit": m.exit_code,
            "hits": hits, "objects": objects, "assembled": assembled,
            "digest": _library_digest(dirs["out"]) if m.exit_code == 0 else ""}


def _cold_then_warm(ctx: Context, logic: Path, arch: str, touch: Path | None) -> dict[str, Any]:
    cache = ctx.work("kernel-cache")
    cold = _cached_build(ctx, "cold", logic, arch, cache)
    if touch is not None:
        with touch.open("a") as f:
            f.write("\n# touched by the cache-warm benchmark\n")
    warm = _cached_build(ctx, "warm", logic, arch, cache)
    failed = next((r for r in (cold, warm) if r["exit"] != 0), None)
    body: dict[str, Any] = {
        "metrics": warm["metrics"], "parts": {"cold": cold["metrics"], "warm": warm["metrics"]},
        "runs": [cold["run"], warm["run"]],
        "details": {"byte_identical": cold["digest"] == warm["digest"] != "", "warm_from_cache": warm["hits"],
                    "warm_assembled": warm["assembled"], "kernel_objects": warm["objects"],
                    "touched": str(touch.relative_to(logic)) if touch else None,
                    "generate_and_assemble_cpu_s": round(cold["metrics"]["cpu_s"] - warm["metrics"]["cpu_s"], 2)},
    }
    if failed is not None:
        body.update(status="failed", reason=f"{failed['run']['label']} build exited {failed['exit']}")
    return body


def scenario_cache_warm_devset(ctx: Context) -> dict[str, Any]:
    require_devset()
    arch = "gfx942"
    files = [f for f in devset.logic_files() if arch in devset.architectures([f])]
    if not files:
        raise Skip(f"the dev set has no {arch} logic file")
    copy = ctx.work("logic")
    for f in files:
        dest = copy / f.relative_to(devset.logic_root())
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dest)
    return _cold_then_warm(ctx, copy, arch, copy / files[0].relative_to(devset.logic_root()))


def scenario_whole_gfx942(ctx: Context) -> dict[str, Any]:
    if ctx.logic_root is None:
        raise Skip("needs hipBLASLt's logic tree: python -m benchmarks run whole-gfx942 --logic-root ASM_FULL "
                   "(nothing is fetched)")
    if not ctx.logic_root.is_dir():
        raise Skip(f"--logic-root {ctx.logic_root} is not a folder")
    return _cold_then_warm(ctx, ctx.logic_root, "gfx942", None)


SCENARIOS = (
    Scenario("cache-warm-devset", "dev set gfx942: cold build into an empty kernel cache, one logic file touched, "
             "warm rebuild (--jobs=2)", scenario_cache_warm_devset),
    Scenario("whole-gfx942", "the whole 2024 gfx942 library from --logic-root, cold then warm kernel cache "
             "(--jobs=2); skipped without --logic-root", scenario_whole_gfx942),
)
