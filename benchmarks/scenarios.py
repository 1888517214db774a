"""Named benchmark scenarios; each runs commands of the project's CLI and returns figures for one JSON file.

A scenario is a function `(Context) -> dict` with optional keys `metrics` (headline figures, names as in
`store.METRIC_NAMES`), `parts` (label -> metrics, e.g. one per format or per share), `runs` (measurement JSON),
`details`, and `status`/`reason` when it failed. It raises `Skip` when what it needs is missing, e.g. a
command that has not landed yet or the dev set in ../shared. Other modules add scenarios by defining
`SCENARIOS` (a sequence of `Scenario`) in `benchmarks/bench_<topic>.py`.
"""

from __future__ import annotations

import datetime
import fnmatch
import importlib
import io
import json
import os
import pkgutil
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from benchmarks import devset, store
from benchmarks.machine import git_state, machine
from benchmarks.runner import Measurement, measure

JOBS = (1, 2)
# architectures also built as ROCm 7.0-7.2 builds them (build7-*)
ROCM7_ARCHS = ("gfx90a", "gfx942")
SHARES = (("quarter", 0.25), ("half", 0.5), ("all", 1.0))


class Skip(Exception):
    """What the scenario needs is not there; recorded as skipped with this reason."""


@attrs.frozen(slots=True)
class Context:
    work_root: Path
    interval: float = 0.1
    logic_root: Path | None = None  # `run --logic-root`: a logic tree of the scenarios that take one

    def work(self, name: str) -> Path:
        path = self.work_root / name
        path.mkdir(parents=True, exist_ok=True)
        return path


@attrs.frozen(slots=True)
class Scenario:
    name: str
    help: str
    func: Callable[[Context], Mapping[str, Any]]


# ----------------------------------------------------------------------------------------------- commands


def tensile_lite_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "tensile_lite", *args]


def tcl_cmd(argv: Sequence[str]) -> list[str]:
    """TensileCreateLibrary run through this interpreter (the console script may sit behind a shell shim)."""
    return [sys.executable, "-c", "import sys; from tensile_lite.tcl import main; sys.exit(main())", *argv]


def upstream_tcl_argv(logic: Path, out: Path, architectures: Sequence[str], jobs: int) -> list[str]:
    """The argv hipBLASLt's CMake passes (tcl_anatomy.md §1), flag for flag and in its order."""
    return [
        "--merge-files", "--separate-architectures", "--lazy-library-loading",
        "--no-short-file-names", "--no-library-print-debug", "--code-object-version=default",
        "--cxx-compiler=amdclang++", f"--jobs={jobs}", "--library-format=msgpack",
        f"--architecture={'_'.join(architectures)}", "--build-id=sha1", str(logic), str(out), "HIP",
    ]


def rocm7_tcl_argv(logic: Path, out: Path, architectures: Sequence[str], jobs: int) -> list[str]:
    """The argv ROCm 7.x's CMake passes (rocm7_delta.md addendum: `;`-joined targets in one argument), for
    the 7.0-7.2 interface."""
    return ["--interface=rocm-7.2", f"--architecture={';'.join(architectures)}", "--cxx-compiler=amdclang++",
            f"--jobs={jobs}", str(logic), str(out), "HIP"]


def require_command(name: str) -> None:
    done = subprocess.run(tensile_lite_cmd(name, "--help"), capture_output=True, text=True)
    if done.returncode != 0:
        raise Skip(f"`tensile-lite {name}` does not exist yet")


def require_tcl() -> None:
    done = subprocess.run([sys.executable, "-c", "import tensile_lite.tcl"], capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["import failed"])[-1]
        raise Skip(f"TensileCreateLibrary (tensile_lite.tcl) is not available yet: {last}")


def require_devset() -> list[Path]:
    devset.use_custom_kernels()
    files = devset.logic_files()
    if not files:
        raise Skip(f"dev-set logic not found at {devset.logic_root()} (set TENSILE_LITE_SHARED)")
    return files


def sample_logic() -> Path:
    code = "import tensile_lite.sample as s; print(s.path())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if done.returncode != 0:
        raise Skip("the bundled sample (tensile_lite.sample.path()) is not available yet")
    return Path(done.stdout.strip())


# ---------------------------------------------------------------------------------------------- measuring


def build_dirs(ctx: Context, label: str) -> tuple[dict[str, Path], dict[str, str]]:
    """Watched folders of one build (tmp, cwd, out) and an environment pointing TMPDIR into tmp.

    hipBLASLt's CMake runs the generator in <build>/library, so its build_tmp lands in the cwd.
    """
    base = ctx.work(label)
    dirs = {name: base / name for name in ("tmp", "cwd", "out")}
    for path in dirs.values():
        path.mkdir(exist_ok=True)
    env = dict(os.environ, TMPDIR=str(dirs["tmp"]))
    return dirs, env


def count_kernels(out: Path) -> tuple[int, int]:
    """(assembly kernels in .co files, source kernels in .hsaco files), counted by their `.kd` symbols."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    from tensile_lite.codeobj.bundle import code_object_bytes, read_code_object_file
    from tensile_lite.errors import TensileLiteError

    counts = {"co": 0, "hsaco": 0}
    for kind in counts:
        for path in sorted(out.rglob(f"*.{kind}")):
            try:
                # 7.x's `.co` files are (compressed) offload bundles holding the ELF
                data = code_object_bytes(read_code_object_file(path), str(path))
                symtab = ELFFile(io.BytesIO(data)).get_section_by_name(".symtab")
                if symtab is not None:
                    counts[kind] += sum(1 for s in symtab.iter_symbols() if s.name.endswith(".kd"))
            except (ELFError, OSError, ValueError, TensileLiteError):
                continue
    return counts["co"], counts["hsaco"]


def basic_metrics(m: Measurement) -> dict[str, Any]:
    return {
        "exit_code": m.exit_code,
        "wall_s": round(m.wall_s, 3),
        "cpu_s": round(m.cpu_s, 3),
        "peak_tree_rss": m.peak_tree_rss,
        "peak_process_rss": m.peak_process_rss,
    }


def build_metrics(m: Measurement) -> dict[str, Any]:
    """Headline figures of a run watched with `build_dirs`: temporary disk is tmp + cwd."""
    metrics = basic_metrics(m)
    out = m.outputs["out"]
    final_out = m.final_dirs["out"]
    metrics.update({
        "peak_temp_disk": m.peak_of(["tmp", "cwd"]),
        "peak_disk_over_outputs": m.peak_of(["tmp", "cwd", "out"]) - final_out,
        "peak_temp_files": m.peak_dir_files["tmp"] + m.peak_dir_files["cwd"],
        **{f"out_{kind.replace('.', '_')}": size for kind, size in out.bytes.items()},
        "out_files": sum(out.files.values()),
    })
    return metrics


def run_build(ctx: Context, label: str, logic: Path, archs: Sequence[str], jobs: int,
              argv: Callable[[Path, Path, Sequence[str], int], list[str]] = upstream_tcl_argv) -> dict[str, Any]:
    """One TensileCreateLibrary run with upstream's argv (2024's unless `argv` says otherwise):
    {"metrics": ..., "run": measurement JSON}."""
    dirs, env = build_dirs(ctx, label)
    m = measure(tcl_cmd(argv(logic, dirs["out"], archs, jobs)), watch_dirs=dirs, env=env,
                cwd=dirs["cwd"], interval=ctx.interval)
    metrics = build_metrics(m)
    kernels, helpers = count_kernels(dirs["out"])
    metrics["kernels"], metrics["helper_kernels"] = kernels, helpers
    if kernels:
        metrics["cpu_s_per_kernel"] = round(m.cpu_s / kernels, 4)
    run = {"label": label, **m.to_json()}
    return {"metrics": metrics, "run": run}


def failure(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """status/reason for the first run that exited non-zero (empty when all succeeded)."""
    for run in runs:
        if run["exit_code"] != 0:
            tail = run["stderr_tail"].strip().splitlines()
            why = tail[-1] if tail else "no message"
            return {"status": "failed", "reason": f"{run['label']}: exit {run['exit_code']}: {why}"}
    return {}


# ------------------------------------------------------------------------------------------ yaml baseline

# Loads each file in turn with PyYAML's C loader and reports per-file figures as JSON lines. The high-water
# RSS before and after each load bounds the memory of that one document (exact for the first or largest).
_YAML_LOADER = r"""
import json, resource, sys, time, yaml
for path in sys.argv[1:]:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    wall, cpu = time.perf_counter(), time.process_time()
    with open(path, "rb") as f:
        doc = yaml.load(f, Loader=yaml.CSafeLoader)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    n = len(doc[5]) if isinstance(doc, list) and len(doc) > 5 and isinstance(doc[5], list) else None
    del doc
    print(json.dumps({"file": path, "load_s": wall, "load_cpu_s": cpu,
                      "maxrss_before": before, "maxrss_after": after, "solutions": n}))
"""


def yaml_load(ctx: Context, files: Sequence[Path], label: str) -> tuple[Measurement, list[dict[str, Any]]]:
    m = measure([sys.executable, "-c", _YAML_LOADER, *map(str, files)], watch_dirs={}, interval=ctx.interval)
    if m.exit_code != 0:
        raise RuntimeError(f"yaml baseline ({label}) failed: {m.stderr.strip()[-500:]}")
    return m, [json.loads(line) for line in m.stdout.splitlines() if line.startswith("{")]


def largest(files: Sequence[Path]) -> Path:
    return max(files, key=lambda p: (p.stat().st_size, str(p)))


def scenario_yaml_load(ctx: Context) -> dict[str, Any]:
    files = require_devset()
    whole, per_file = yaml_load(ctx, files, "whole-set")
    rows = []
    for path in files:
        m, (row,) = yaml_load(ctx, [path], path.name)
        size = path.stat().st_size
        net = row["maxrss_after"] - row["maxrss_before"]
        rows.append({
            "file": str(path.relative_to(devset.logic_root())), "bytes": size, "solutions": row["solutions"],
            "load_s": round(row["load_s"], 4), "load_cpu_s": round(row["load_cpu_s"], 4),
            "process_wall_s": round(m.wall_s, 4), "peak_process_rss": m.peak_process_rss,
            "net_peak_rss": net, "net_rss_per_yaml_byte": round(net / size, 3),
        })
    big = max(rows, key=lambda r: r["bytes"])
    total_bytes = sum(r["bytes"] for r in rows)
    metrics = {
        **basic_metrics(whole),
        "files": len(files),
        "solutions": sum(r["solutions"] or 0 for r in rows),
        "yaml_bytes": total_bytes,
        "load_s_total": round(sum(r["load_s"] for r in per_file), 3),
        "yaml_mb_per_s": round(total_bytes / 1e6 / max(whole.wall_s, 1e-9), 2),
    }
    parts = {
        "whole-set": metrics,
        "largest-file": {
            "file": big["file"], "yaml_bytes": big["bytes"], "wall_s": big["process_wall_s"],
            "load_s": big["load_s"], "peak_process_rss": big["peak_process_rss"],
            "net_peak_rss": big["net_peak_rss"], "net_rss_per_yaml_byte": big["net_rss_per_yaml_byte"],
        },
    }
    return {"metrics": metrics, "parts": parts, "runs": [{"label": "whole-set", **whole.to_json()}],
            "details": {"per_file": rows}}


# ------------------------------------------------------------------------------------------------- parse


def inspect_logic_json(ctx: Context, paths: Sequence[Path], label: str) -> tuple[Measurement, dict[str, Any]]:
    m = measure(tensile_lite_cmd("inspect-logic", *map(str, paths), "--json"), watch_dirs={},
                interval=ctx.interval)
    try:
        doc = json.loads(m.stdout)
    except ValueError:
        doc = {}
    return m, doc


def scenario_parse(ctx: Context) -> dict[str, Any]:
    files = require_devset()
    require_command("inspect-logic")
    root = devset.logic_root()
    big = largest(files)
    baseline, _ = yaml_load(ctx, files, "yaml whole-set")
    ours, doc = inspect_logic_json(ctx, [root], "inspect-logic whole-set")
    startup = measure(tensile_lite_cmd("--version"), watch_dirs={}, interval=ctx.interval)
    ours_big, _ = inspect_logic_json(ctx, [big], "inspect-logic largest")
    _, (yaml_big,) = yaml_load(ctx, [big], "yaml largest")
    total = doc.get("total", {}) if isinstance(doc, dict) else {}
    size = big.stat().st_size
    ours_net = ours_big.peak_process_rss - startup.peak_process_rss
    yaml_net = yaml_big["maxrss_after"] - yaml_big["maxrss_before"]
    metrics = {
        **basic_metrics(ours),
        "files": total.get("files"), "solutions": total.get("solutions"), "kernels": total.get("kernels"),
        "errors": len(doc.get("errors", [])) if isinstance(doc, dict) else None,
        "yaml_wall_s": round(baseline.wall_s, 3),
        "wall_ratio_vs_yaml": round(ours.wall_s / baseline.wall_s, 3),
        "cpu_ratio_vs_yaml": round(ours.cpu_s / max(baseline.cpu_s, 1e-9), 3),
        "peak_rss_ratio_vs_yaml": round(ours.peak_process_rss / baseline.peak_process_rss, 3),
        "startup_s": round(startup.wall_s, 3),
        "largest_file": str(big.relative_to(root)),
        "largest_yaml_bytes": size,
        "largest_net_peak_rss": ours_net,
        "largest_net_rss_per_yaml_byte": round(ours_net / size, 3),
        "largest_yaml_net_rss_per_yaml_byte": round(yaml_net / size, 3),
    }
    runs = [{"label": "yaml whole-set", **baseline.to_json()},
            {"label": "inspect-logic whole-set", **ours.to_json()},
            {"label": "tensile-lite --version", **startup.to_json()},
            {"label": "inspect-logic largest", **ours_big.to_json()}]
    parts = {"inspect-logic": basic_metrics(ours), "yaml.load (CSafeLoader)": basic_metrics(baseline)}
    return {"metrics": metrics, "parts": parts, "runs": runs, **failure(runs)}


# --------------------------------------------------------------------------------------- metadata, builds

METADATA_FORMATS = ("msgpack", "msgpack-zstd", "msgpack-zlib", "yaml")


def scenario_build_metadata(ctx: Context) -> dict[str, Any]:
    require_devset()
    require_command("build-metadata")
    parts: dict[str, Any] = {}
    runs = []
    for fmt in METADATA_FORMATS:
        dirs, env = build_dirs(ctx, f"metadata-{fmt}")
        m = measure(tensile_lite_cmd("build-metadata", str(devset.logic_root()), str(dirs["out"]),
                                     "--library-format", fmt),
                    watch_dirs=dirs, env=env, cwd=dirs["cwd"], interval=ctx.interval)
        if m.exit_code == 2 and ("invalid choice" in m.stderr or "unrecognized arguments" in m.stderr):
            parts[fmt] = {"skipped": f"format {fmt} not offered yet"}
            continue
        metrics = build_metrics(m)
        metrics["dat_bytes"] = m.outputs["out"].bytes["dat"] + m.outputs["out"].bytes["dat.zlib"]
        metrics["dat_files"] = m.outputs["out"].files["dat"] + m.outputs["out"].files["dat.zlib"]
        parts[fmt] = metrics
        runs.append({"label": fmt, **m.to_json()})
    plain = parts.get("msgpack", {}).get("dat_bytes")
    for metrics in parts.values():
        if plain and "dat_bytes" in metrics:
            metrics["size_vs_msgpack"] = round(metrics["dat_bytes"] / plain, 4)
    headline = parts.get("msgpack") if "dat_bytes" in parts.get("msgpack", {}) else {}
    return {"metrics": headline, "parts": parts, "runs": runs, **failure(runs)}


def scenario_build_sample(ctx: Context) -> dict[str, Any]:
    require_tcl()
    logic = sample_logic()
    archs = list(devset.architectures(devset.logic_files(logic)))
    if not archs:
        raise Skip(f"no logic files with an architecture under the sample path {logic}")
    built = run_build(ctx, "sample", logic, archs, jobs=2)
    return {"metrics": built["metrics"], "runs": [built["run"]], "details": {"architectures": archs},
            **failure([built["run"]])}


def build_scenario(arch: str, jobs: int, rocm7: bool = False) -> Callable[[Context], dict[str, Any]]:
    def run(ctx: Context) -> dict[str, Any]:
        files = devset.architectures(require_devset()).get(arch, [])
        require_tcl()
        argv = rocm7_tcl_argv if rocm7 else upstream_tcl_argv
        built = run_build(ctx, f"{arch}-j{jobs}", devset.logic_root(), [arch], jobs, argv)
        metrics = {**built["metrics"], "files": len(files), "jobs": jobs}
        return {"metrics": metrics, "runs": [built["run"]], **failure([built["run"]])}

    return run


def kernel_weights(ctx: Context, files: Sequence[Path]) -> tuple[dict[Path, int], str]:
    """Distinct kernels per file from `inspect-logic --json`, else solutions per file (said in the JSON)."""
    try:
        require_command("inspect-logic")
        _, doc = inspect_logic_json(ctx, files, "weights")
        by_path = {}
        for entry in doc.get("files", []):
            name = entry.get("path") or entry.get("file")
            if name is not None and isinstance(entry.get("kernels"), int):
                by_path[Path(name).resolve()] = entry["kernels"]
        weights = {p: by_path[p.resolve()] for p in files}
        return weights, "kernels (inspect-logic)"
    except (Skip, KeyError, AttributeError, TypeError):
        return {p: devset.solution_count(p) for p in files}, "solutions (inspect-logic unavailable)"


def scenario_scale_gfx9(ctx: Context) -> dict[str, Any]:
    groups = devset.architectures(require_devset())
    require_tcl()
    files = sorted(p for arch, paths in groups.items() if arch.startswith("gfx9") for p in paths)
    arch_of = {p: arch for arch, paths in groups.items() for p in paths}
    weights, weighed_by = kernel_weights(ctx, files)
    root = devset.logic_root()
    parts: dict[str, Any] = {}
    runs = []
    for label, fraction in SHARES:
        picked = devset.pick_share(weights, fraction)
        logic = ctx.work(f"logic-{label}") / "asm_full"
        for path in picked:
            dest = logic / path.relative_to(root)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
        archs = sorted({arch_of[p] for p in picked})
        built = run_build(ctx, f"scale-{label}", logic, archs, jobs=2)
        parts[label] = {**built["metrics"], "files": len(picked), "weight": sum(weights[p] for p in picked),
                        "share": round(sum(weights[p] for p in picked) / sum(weights.values()), 3),
                        "architectures": archs}
        runs.append(built["run"])
    first, last = parts["quarter"], parts["all"]
    growth = {
        f"{key}_all_over_quarter": round(last[key] / first[key], 3)
        for key in ("weight", "kernels", "wall_s", "cpu_s", "peak_tree_rss", "peak_temp_disk")
        if first.get(key) and last.get(key) is not None
    }
    return {"metrics": {**last, **growth}, "parts": parts, "runs": runs,
            "details": {"weighed_by": weighed_by}, **failure(runs)}


# ---------------------------------------------------------------------------------------------- start-up


def scenario_startup(ctx: Context) -> dict[str, Any]:
    """Fixed cost before any work: the CLI's import time, and a build whose logic has nothing for the target
    (the bundled sample built for gfx1100: files read and filtered, toolchain found, nothing assembled)."""
    cli = measure(tensile_lite_cmd("--version"), watch_dirs={}, interval=ctx.interval)
    parts = {"tensile-lite --version": basic_metrics(cli)}
    runs = [{"label": "tensile-lite --version", **cli.to_json()}]
    try:
        require_tcl()
        import tensile_lite.sample

        built = run_build(ctx, "empty", tensile_lite.sample.path(), ["gfx1100"], jobs=2)
        parts["TensileCreateLibrary, nothing to build"] = built["metrics"]
        runs.append(built["run"])
    except Skip as why:
        parts["TensileCreateLibrary, nothing to build"] = {"skipped": str(why)}
    metrics = {**basic_metrics(cli), "startup_s": round(cli.wall_s, 3)}
    empty = parts["TensileCreateLibrary, nothing to build"]
    if empty.get("exit_code") == 0:
        metrics["tcl_empty_s"] = empty["wall_s"]
    return {"metrics": metrics, "parts": parts, "runs": runs, **failure(runs)}


# ---------------------------------------------------------------------------------------------- registry


def _build_scenarios() -> list[Scenario]:
    try:
        archs = list(devset.architectures(devset.logic_files()))
    except OSError:
        archs = []
    if not archs:
        def missing(_ctx: Context) -> dict[str, Any]:
            require_devset()
            raise Skip("the dev set has no logic file with a readable architecture")

        return [Scenario("build-devset", "TensileCreateLibrary per dev-set architecture (dev set absent)",
                         missing)]
    return [
        Scenario(f"build-{arch}-j{jobs}",
                 f"TensileCreateLibrary, upstream argv, dev set, --architecture={arch} --jobs={jobs}",
                 build_scenario(arch, jobs))
        for arch in archs for jobs in JOBS
    ] + [
        # the same library as ROCm 7.0-7.2 builds it: 7.x's argv, compressed bundles, the 7.x entries
        Scenario(f"build7-{arch}-j2", f"TensileCreateLibrary, ROCm 7.x argv (--interface=rocm-7.2), dev set, "
                 f"--architecture={arch} --jobs=2", build_scenario(arch, 2, rocm7=True))
        for arch in archs if arch in ROCM7_ARCHS
    ]


def _plugin_scenarios() -> list[Scenario]:
    """Scenarios of benchmarks/bench_*.py modules; a module that fails to import shows as skipped."""
    found: list[Scenario] = []
    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda i: i.name):
        if not info.name.startswith("bench_"):
            continue
        try:
            module = importlib.import_module(f"benchmarks.{info.name}")
            declared = list(getattr(module, "SCENARIOS", ()))
            problem = None if declared else f"benchmarks/{info.name}.py defines no SCENARIOS"
        except Exception as exc:  # a broken neighbour must not hide the other scenarios
            declared, problem = [], f"benchmarks/{info.name}.py does not import: {exc!r}"
        if problem:
            def skipped(_ctx: Context, why: str = problem) -> dict[str, Any]:
                raise Skip(why)

            declared = [Scenario(info.name.removeprefix("bench_").replace("_", "-"), problem, skipped)]
        found.extend(declared)
    return found


def all_scenarios() -> dict[str, Scenario]:
    fixed = [
        Scenario("startup", "fixed cost: `tensile-lite --version`, TensileCreateLibrary with nothing to build",
                 scenario_startup),
        Scenario("yaml-load", "baseline: yaml.load(CSafeLoader) of every dev-set file, one at a time",
                 scenario_yaml_load),
        Scenario("parse", "`tensile-lite inspect-logic DEVSET --json` against the yaml-load baseline",
                 scenario_parse),
        Scenario("build-metadata", "`tensile-lite build-metadata DEVSET OUT` per library format",
                 scenario_build_metadata),
        Scenario("build-sample", "TensileCreateLibrary, upstream argv, bundled sample, --jobs=2",
                 scenario_build_sample),
    ]
    tail = [Scenario("scale-gfx9", "TensileCreateLibrary on a quarter, half and all of the dev set's gfx9 "
                     "files (by kernel count), --jobs=2", scenario_scale_gfx9)]
    return {s.name: s for s in [*fixed, *_build_scenarios(), *tail, *_plugin_scenarios()]}


def select_scenarios(registry: Mapping[str, Scenario], patterns: Sequence[str]) -> list[Scenario]:
    """Scenarios matching names or shell patterns (`build-*`), in registry order; all when none given."""
    if not patterns:
        return list(registry.values())
    unknown = [p for p in patterns if not fnmatch.filter(registry, p)]
    if unknown:
        raise KeyError(f"no scenario matches {', '.join(unknown)} (see `python -m benchmarks list`)")
    return [s for name, s in registry.items() if any(fnmatch.fnmatchcase(name, p) for p in patterns)]


# ------------------------------------------------------------------------------------------------ running


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def run_scenario(scenario: Scenario, *, interval: float = 0.1, keep_work: bool = False,
                 logic_root: Path | None = None) -> dict[str, Any]:
    """Run one scenario in a fresh work folder and wrap its figures with the machine and git state."""
    started = _now()
    t0 = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix=f"tl-bench-{scenario.name}-"))
    body: dict[str, Any]
    try:
        body = dict(scenario.func(Context(work, interval, logic_root)))
        status, reason = body.pop("status", "ok"), body.pop("reason", None)
    except Skip as why:
        body, status, reason = {}, "skipped", str(why)
    except Exception as exc:  # recorded, so one broken scenario does not stop a whole run
        body, status, reason = {"traceback": traceback.format_exc()[-4000:]}, "failed", repr(exc)
    finally:
        if not keep_work:
            shutil.rmtree(work, ignore_errors=True)
    return {
        "schema": store.SCHEMA,
        "scenario": scenario.name,
        "description": scenario.help,
        "status": status,
        "reason": reason,
        "started_at": started,
        "finished_at": _now(),
        "duration_s": round(time.perf_counter() - t0, 3),
        "work_dir": str(work) if keep_work else None,
        "machine": machine(),
        "git": git_state(),
        "metrics": body.pop("metrics", {}),
        **body,
    }
