"""Code-object pipeline: a synthetic build of many small kernels, streamed vs the upstream way.

    python -m benchmarks run pipeline           # through the runner: JSON in benchmarks/results/
    python -m benchmarks.bench_pipeline streaming|upstream OUT TMP [--kernels N ...]   # one build

Both ways build the same kernels into the same libraries with the same toolchain, in the same run:

- streaming: `build_code_objects` (assemble from stdin, link a library as soon as its kernels are done,
  delete objects at once);
- upstream (tcl_anatomy.md §3.5, §3.7; the 240 GB reports in anchors.md): per kernel write `<base>.s`,
  assemble that file to `<base>.o`, link a per-kernel `<base>.co`; keep every `.s`, `.o` and `.co` in
  build_tmp; link each library at the end; remove build_tmp. (The hipBLASLt snapshot of §3.5 deletes
  each `.s` after assembling it; the reported all-ISA builds kept them.)

Each is run as a child process measured by `benchmarks.runner.measure` (tree RSS, CPU, and the size of
the temporary and output folders, sampled every `--interval`, default 100 ms).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import attrs

KERNELS = 2000
LIBRARIES = 20
PADDING = 256  # s_nop lines per kernel: ~3 KB of text, ~1 KB of code, still "small"
ARCH = "gfx942"
JOBS = 2


# ---------------------------------------------------------------------------------------- the workload


def plan(kernels: int, libraries: int, arch: str, cov: int, padding: int):
    """Kernels split evenly over libraries, in library order; each library also uses the first kernel of
    the next one, so sharing (reference counting) is exercised."""
    from tensile_lite.codeobj.pipeline import LibraryPlan
    from tensile_lite.codeobj.trivial import TrivialKernel

    per = -(-kernels // libraries)
    names = [f"bench_kernel_{i:06d}" for i in range(kernels)]
    groups = [names[j * per:(j + 1) * per] for j in range(libraries)]
    groups = [g for g in groups if g]
    libs = []
    for j, group in enumerate(groups):
        extra = (groups[j + 1][0],) if j + 1 < len(groups) else ()
        libs.append(LibraryPlan(f"TensileLibrary_Bench{j:02d}_{arch}", arch, (*group, *extra)))

    def sources() -> Iterator[TrivialKernel]:
        for name in names:
            yield TrivialKernel(name, arch, cov, padding)

    return sources, libs


def run_streaming(args: argparse.Namespace) -> dict[str, Any]:
    from tensile_lite.codeobj.pipeline import BuildOptions, build_code_objects
    from tensile_lite.codeobj.toolchain import find_toolchain

    sources, libs = plan(args.kernels, args.libraries, args.arch, args.cov, args.padding)
    options = BuildOptions(jobs=args.jobs, code_object_version=args.cov, tmp_parent=args.tmp,
                           progress="plain", progress_every=5.0)
    report = build_code_objects(find_toolchain(), sources(), libs, args.out, options)
    return {"kernels": report.kernels_assembled, "libraries": report.libraries_linked,
            "self_tracked_peak_tmp": report.peak_tmp_bytes}


@attrs.frozen(slots=True)
class _UpstreamTask:
    source: Any
    asm_dir: Path
    assembler: str
    linker: str
    cov: int


def _upstream_kernel(task: _UpstreamTask) -> None:
    """One kernel the way upstream's worker handles it (KernelWriter.getSourceFileString)."""
    from tensile_lite.codeobj.worker import file_base

    base = file_base(task.source.name)
    s_file = task.asm_dir / f"{base}.s"
    s_file.write_text(task.source.assembly_text())
    subprocess.run([task.assembler, "-x", "assembler", "-target", "amdgcn-amd-amdhsa",
                    f"-mcode-object-version={task.cov}", f"-mcpu={task.source.arch}", "-mwavefrontsize64",
                    "-c", "-o", f"{base}.o", f"{base}.s"], cwd=task.asm_dir, check=True)
    subprocess.run([task.linker, "--no-undefined", "-shared", "--build-id=sha1", "-o", f"{base}.co",
                    f"{base}.o"], cwd=task.asm_dir, check=True)


def run_upstream(args: argparse.Namespace) -> dict[str, Any]:
    from tensile_lite.codeobj.assemble import link
    from tensile_lite.codeobj.toolchain import find_toolchain
    from tensile_lite.codeobj.worker import file_base

    tc = find_toolchain()
    sources, libs = plan(args.kernels, args.libraries, args.arch, args.cov, args.padding)
    asm_dir = args.tmp / "build_tmp" / "TENSILE" / "assembly"
    asm_dir.mkdir(parents=True)
    tasks = (_UpstreamTask(s, asm_dir, str(tc.assembler), str(tc.linker), args.cov) for s in sources())
    with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
        for _ in pool.map(_upstream_kernel, tasks, chunksize=4):
            pass
    lib_dir = args.out / "library"
    lib_dir.mkdir(parents=True, exist_ok=True)
    for lib in libs:
        objs = [asm_dir / f"{file_base(n)}.o" for n in sorted(set(lib.kernel_names))]
        link(tc, objs, lib_dir / f"{lib.name}.co")
    shutil.rmtree(args.tmp / "build_tmp")
    return {"kernels": args.kernels, "libraries": len(libs)}


def child_main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_pipeline")
    p.add_argument("way", choices=("streaming", "upstream"))
    p.add_argument("out", type=Path)
    p.add_argument("tmp", type=Path)
    p.add_argument("--kernels", type=int, default=KERNELS)
    p.add_argument("--libraries", type=int, default=LIBRARIES)
    p.add_argument("--padding", type=int, default=PADDING)
    p.add_argument("--arch", default=ARCH)
    p.add_argument("--cov", type=int, default=4)
    p.add_argument("--jobs", type=int, default=JOBS)
    args = p.parse_args(argv)
    result = (run_streaming if args.way == "streaming" else run_upstream)(args)
    print(json.dumps(result))
    return 0


# ------------------------------------------------------------------------------------------ the scenario


def _measure_way(ctx, way: str, jobs: int, kernels: int, libraries: int, padding: int) -> dict[str, Any]:
    from benchmarks.runner import measure
    from benchmarks.scenarios import basic_metrics, build_dirs

    label = f"{way}-j{jobs}"
    dirs, env = build_dirs(ctx, label)
    cmd = [sys.executable, "-m", "benchmarks.bench_pipeline", way, str(dirs["out"]), str(dirs["tmp"]),
           f"--kernels={kernels}", f"--libraries={libraries}", f"--padding={padding}", f"--jobs={jobs}"]
    m = measure(cmd, watch_dirs=dirs, env=env, cwd=Path(__file__).resolve().parents[1], interval=ctx.interval)
    metrics = basic_metrics(m)
    if m.exit_code == 0:
        child = json.loads(m.stdout.strip().splitlines()[-1])
        metrics.update({
            "kernels": child["kernels"],
            "libraries": child["libraries"],
            "kernels_per_s": round(child["kernels"] / m.wall_s, 2),
            "peak_temp_disk": m.peak_of(["tmp", "cwd"]),
            "peak_temp_files": m.peak_dir_files["tmp"] + m.peak_dir_files["cwd"],
            "peak_disk_over_outputs": m.peak_of(["tmp", "cwd", "out"]) - m.final_dirs["out"],
            "out_co": m.outputs["out"].bytes["co"],
        })
        if "self_tracked_peak_tmp" in child:
            metrics["self_tracked_peak_tmp"] = child["self_tracked_peak_tmp"]
    return {"metrics": metrics, "run": {"label": label, **m.to_json()}, "out": dirs["out"]}


def _same_outputs(a: Path, b: Path) -> bool:
    files_a = sorted(p.relative_to(a) for p in a.rglob("*.co"))
    files_b = sorted(p.relative_to(b) for p in b.rglob("*.co"))
    return bool(files_a) and files_a == files_b and all(
        (a / f).read_bytes() == (b / f).read_bytes() for f in files_a)


def scenario_pipeline(ctx) -> dict[str, Any]:
    from benchmarks.scenarios import Skip, failure

    try:
        from tensile_lite.codeobj.toolchain import find_toolchain

        find_toolchain()
    except Exception as exc:  # a missing toolchain only means this scenario cannot run here
        raise Skip(f"no LLVM toolchain: {exc}") from exc
    streaming = _measure_way(ctx, "streaming", JOBS, KERNELS, LIBRARIES, PADDING)
    upstream = _measure_way(ctx, "upstream", JOBS, KERNELS, LIBRARIES, PADDING)
    runs = [streaming["run"], upstream["run"]]
    s, u = streaming["metrics"], upstream["metrics"]
    body: dict[str, Any] = {
        "metrics": dict(s),
        "parts": {"streaming": s, "upstream way": u},
        "details": {
            "workload": {"kernels": KERNELS, "libraries": LIBRARIES, "padding_nops": PADDING, "arch": ARCH,
                         "jobs": JOBS, "shared_kernels": LIBRARIES - 1},
            "outputs_identical": _same_outputs(streaming["out"], upstream["out"]),
            "speedup_wall": round(u["wall_s"] / s["wall_s"], 3) if s.get("wall_s") else None,
            "temp_disk_ratio": (round(u["peak_temp_disk"] / max(s["peak_temp_disk"], 1), 1)
                                if "peak_temp_disk" in u and "peak_temp_disk" in s else None),
        },
        "runs": runs,
        **failure(runs),
    }
    return body


def _register():
    try:
        from benchmarks.scenarios import Scenario
    except ImportError:  # run as a plain child process without the runner
        return ()
    return (Scenario("pipeline", f"code objects: {KERNELS} small kernels in {LIBRARIES} libraries, streaming "
                     f"build vs the upstream way (all .s/.o kept until the end), --jobs={JOBS}",
                     scenario_pipeline),)


SCENARIOS = _register()


if __name__ == "__main__":
    t0 = time.perf_counter()
    code = child_main()
    print(f"bench_pipeline child done in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    raise SystemExit(code)
