"""hipBLASLt's own runtime code as a client of a built library: ../shared/tools/runtime-probe.

`find_probe` locates the probe (skipping with the reason when it is absent or cannot run here), `run_probe`
runs its `run.sh` over a library directory (optionally against upstream's re-encoded reference) and keeps
what it wrote, `DevsetBuilds` builds the dev set one architecture at a time with hipBLASLt's command line.
The checks each return what is wrong, empty when nothing is, so a test asserts `== []` / `== {}` and a
failure prints the offending files, problems and solutions.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest

from tests.shared import shared_dir
from tests.tcl.test_devset_e2e import Built, cmake_argv, run_tcl

PROBE_FILES = ("run.sh", "probe", "compare.py", "gen_problems.py", "reencode_upstream.py")
TIME = Path("/usr/bin/time")  # run.sh times each `probe run` with it
# compare.py's top-1 classes (compare()): agreement, and the disagreements explained by a solution we left out.
TOP1_AGREE = frozenset({"top1 agree", "top1 agree (both none)"})
TOP1_LEFT_OUT = frozenset({"top1 differ: upstream's winner left out of ours",
                           "top1 differ: ours none, upstream's winner left out of ours"})
# compare.py counts problems either side could not evaluate, or that only one problem list has.
UNCOMPARED = ("error", "only in ours' problem list")
LEFT_OUT_WHY = "left out of ours"  # compare.py's reason for a solution upstream supports and ours lacks
BUILT = re.compile(r"^built \d+ architecture\(s\) \(([^)]*)\): (\d+) of (\d+) solutions", re.M)


@attrs.frozen(slots=True)
class Probe:
    root: Path

    @property
    def run_sh(self) -> Path:
        return self.root / "run.sh"

    @property
    def binary(self) -> Path:
        return self.root / "probe"


def find_probe() -> Probe:
    """The shared runtime probe, once it has shown it runs on this machine (its usage line)."""
    probe = Probe(shared_dir("tools", "runtime-probe"))
    missing = [name for name in PROBE_FILES if not (probe.root / name).is_file()]
    if missing:
        pytest.skip(f"runtime probe incomplete in {probe.root}: missing {', '.join(missing)}")
    if not TIME.is_file():
        pytest.skip(f"the runtime probe's run.sh needs {TIME}, absent on this machine")
    try:
        res = subprocess.run([str(probe.binary)], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"the runtime probe {probe.binary} cannot run on this machine: {exc}")
    if "usage:" not in res.stdout + res.stderr:
        pytest.skip(f"the runtime probe {probe.binary} cannot run on this machine (exit {res.returncode}): "
                    f"{(res.stdout + res.stderr).strip()[-500:]}")
    return probe


@attrs.frozen(slots=True)
class ProbeRun:
    """One `run.sh ARCH LIBRARY [REFERENCE]`: its exit status, console output and output folder."""
    arch: str
    library: Path
    out: Path
    returncode: int
    log: str
    seconds: float

    def report(self) -> dict[str, Any] | None:
        path = self.out / "report.json"
        return json.loads(path.read_text()) if path.is_file() else None

    def jsonl(self, name: str) -> list[dict[str, Any]]:
        path = self.out / name
        if not path.is_file():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]

    def problem_count(self) -> int:
        path = self.out / "problems.tsv"
        return sum(1 for line in path.read_text().splitlines() if line) if path.is_file() else 0


def probe_env(work: Path) -> dict[str, str]:
    """run.sh calls `python3` for its scripts: make that this interpreter (it has msgpack)."""
    env = dict(os.environ, RT=str(work / "rt"), OUT=str(work / "out"))
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def run_probe(probe: Probe, arch: str, library: Path, work: Path, reference: Path | None = None) -> ProbeRun:
    argv = [str(probe.run_sh), arch, str(library), *([str(reference)] if reference else [])]
    start = time.monotonic()
    res = subprocess.run(argv, env=probe_env(work), capture_output=True, text=True, timeout=1800)
    return ProbeRun(arch, library, work / "out", res.returncode, res.stdout + res.stderr, time.monotonic() - start)


def recompare(probe: Probe, run: ProbeRun) -> dict[str, Any]:
    """Run compare.py again over `run`'s output folder (after a test edited its records)."""
    argv = [sys.executable, str(probe.root / "compare.py"), "--ours", str(run.out / "ours.jsonl"),
            "--ours-lib", str(run.library), "--json", str(run.out / "report.json")]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    report = run.report()
    assert report is not None
    return report


# --- builds ------------------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class ArchBuild:
    arch: str
    built: Built
    seconds: float

    @property
    def library(self) -> Path:
        return self.built.library


@attrs.define(slots=True)
class DevsetBuilds:
    """hipBLASLt's build of the whole dev-set logic root for one architecture at a time, each made at most
    once per session (the first test that asks pays for it)."""
    base: Path
    logic_root: Path
    cache: Path
    _done: dict[str, ArchBuild] = attrs.field(factory=dict)

    def __call__(self, arch: str) -> ArchBuild:
        if arch not in self._done:
            self._done[arch] = self._build(arch)
        return self._done[arch]

    def _build(self, arch: str) -> ArchBuild:
        cwd = self.base / arch / "cwd"  # CMake runs it from an empty <build>/library
        cwd.mkdir(parents=True)
        start = time.monotonic()
        res = run_tcl(cmake_argv(self.logic_root, self.base / arch / "Tensile", arch, 2,
                                f"--cache-dir={self.cache}"), cwd)
        assert res.returncode == 0, res.stderr[-4000:]
        return ArchBuild(arch, Built(self.base / arch / "Tensile", cwd, res.stderr), time.monotonic() - start)


# --- the checks -----------------------------------------------------------------------------------------


def incomplete(run: ProbeRun) -> list[str]:
    """Whether every step ran to its end: run.sh's status, the report, and the probe's closing summary
    over every generated problem (a crash of `probe run` leaves no summary)."""
    faults = []
    if run.returncode != 0:
        faults.append(f"run.sh exited {run.returncode}: {run.log.strip()[-1500:]}")
    if run.report() is None:
        faults.append("no report.json")
    summaries = [r for r in run.jsonl("ours.jsonl") if r["kind"] == "summary"]
    if len(summaries) != 1:
        faults.append("`probe run` did not finish (no summary record in ours.jsonl)")
    elif summaries[0]["problems"] != run.problem_count() or run.problem_count() == 0:
        faults.append(f"probe evaluated {summaries[0]['problems']} of {run.problem_count()} problems")
    return faults


def load_failures(run: ProbeRun, expected_placeholders: list[str]) -> list[str]:
    """Every .dat loads standalone, and every placeholder the master names loads lazily and at preload."""
    faults = []
    dats = sorted(p.name for p in run.library.glob("*.dat"))
    loaded = {r["file"]: r for r in run.jsonl("load.jsonl") if r["kind"] == "load"}
    faults += [f"{name}: not in the standalone load" for name in dats if name not in loaded]
    faults += [f"{name}: standalone load failed {r.get('exception')!r}" for name, r in loaded.items() if not r["ok"]]
    records = run.jsonl("ours.jsonl")
    seen = {r["value"]: r for r in records if r["kind"] == "placeholder"}
    for value in expected_placeholders:
        if value not in seen:
            faults.append(f"{value}: placeholder never loaded by the runtime")
        elif not seen[value]["ok"]:
            faults.append(f"{value}: placeholder failed to load ({seen[value]['path']})")
    faults += [f"{value}: loaded but not in the master" for value in seen if value not in expected_placeholders]
    for pre in (r for r in records if r["kind"] == "preload"):
        if pre["preloaded"] != pre["placeholders"] or pre["placeholders"] != len(expected_placeholders):
            faults.append(f"preload {pre['pattern']}: {pre['preloaded']}/{pre['placeholders']} placeholders, "
                          f"master names {len(expected_placeholders)}")
    return faults


def strict_messages(run: ProbeRun) -> dict[str, list[str]]:
    """What the loader said in strict mode (TENSILE_DB=0x1000), by the file it was loading; the probe
    brackets each file with @@BEGIN/@@END and prints a JSON line per file, neither a message."""
    path = run.out / "strict.txt"
    if not path.is_file():
        return {"(no strict.txt)": []}
    messages: dict[str, list[str]] = {}
    current = "(between files)"
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("@@BEGIN "):
            current = line[len("@@BEGIN "):]
        elif line.startswith("@@END "):
            current = "(between files)"
        elif line.strip() and not line.startswith("{") and not line.startswith("Error loading msgpack data"):
            messages.setdefault(current, []).append(line)  # the header line above introduces each message
    return messages


def runtime_faults(report: Mapping[str, Any]) -> dict[str, tuple[int, list[Any]]]:
    """The report fields README says must be empty / 0 (errors, missing kernels, kernel problems, solve
    errors, fatal), plus code objects that failed to load (the xnack-suffixed names the runtime tries
    first are absent by design): field -> (count, examples) for each that is not."""
    ours = report["ours"]
    failed_loads = [c for c in ours["codeObjectLoads"] if c["status"] != "ok" and "xnack" not in Path(c["path"]).name]
    fields = {"errors": (ours["nErrors"], ours["errors"]),
              "missingKernels": (len(ours["missingKernels"]), ours["missingKernels"][:5]),
              "kernelProblems": (ours["nKernelProblems"], ours["kernelProblems"]),
              "solveErrors": (ours["nSolveErrors"], ours["solveErrors"]),
              "fatal": (len(ours["fatal"]), ours["fatal"]),
              "codeObjectLoads": (len(failed_loads), failed_loads[:5])}
    return {name: value for name, value in fields.items() if value[0]}


def top1_disagreements(report: Mapping[str, Any], problems: int) -> dict[str, Any]:
    """Problems whose top-1 solution differs from upstream's for any reason but a winner we left out, and
    any of the `problems` generated that were not compared; with compare.py's examples."""
    counts = report["compare"]["counts"]
    top1 = {k: n for k, n in counts.items() if k.startswith("top1 ")}
    bad: dict[str, Any] = {k: n for k, n in top1.items() if k not in TOP1_AGREE | TOP1_LEFT_OUT}
    bad.update({k: counts[k] for k in UNCOMPARED if counts.get(k)})
    if not problems or counts.get("problems") != problems or sum(top1.values()) != problems:
        bad["problems compared / classified / generated"] = (counts.get("problems"), sum(top1.values()), problems)
    if bad:
        bad["examples"] = {k: v for k, v in report["compare"]["examples"].items() if k in bad}
    return bad


def supported_disagreements(report: Mapping[str, Any]) -> dict[str, Any]:
    """Solutions the runtime finds applicable (isSolutionSupported) in one library and not the other, except
    upstream's that we left out: those would be predicates that differ."""
    cmp = report["compare"]
    bad = {f"only upstream: {k}": n for k, n in cmp["supportedOnlyUpstream"].items() if k != LEFT_OUT_WHY}
    bad.update({f"only ours: {k}": n for k, n in cmp["supportedOnlyOurs"].items()})
    if bad:
        bad["examples"] = {k: v for k, v in cmp["supportedExamples"].items() if k != LEFT_OUT_WHY}
    return bad


def built_solutions(log: str) -> tuple[int, int]:
    """(solutions built, solutions read) from TensileCreateLibrary's closing line."""
    found = BUILT.findall(log)
    assert len(found) == 1, log[-2000:]
    return int(found[0][1]), int(found[0][2])


def left_out_mismatch(report: Mapping[str, Any], build_log: str) -> dict[str, Any]:
    """The solutions of upstream's library missing from ours are exactly as many as the build reported left
    out, and ours has none upstream lacks."""
    dat = report["dat"]
    built, read = built_solutions(build_log)
    bad: dict[str, Any] = {}
    if len(dat["leftOut"]) != read - built:
        bad["leftOut"] = (len(dat["leftOut"]), f"build left out {read - built}", dat["leftOut"][:10])
    if dat["extraInOurs"]:
        bad["extraInOurs"] = dat["extraInOurs"][:10]
    return bad


def figures(run: ProbeRun) -> dict[str, Any]:
    """The numbers worth keeping from one run (printed by the tests, kept as junit properties)."""
    report = run.report() or {}
    ours = report.get("ours", {})
    out = {"arch": run.arch, "seconds": round(run.seconds, 1), "problems": run.problem_count(),
           "placeholdersLoaded": sum(1 for p in ours.get("placeholders", []) if p[1]),
           "strictMessages": sum(len(v) for v in strict_messages(run).values()),
           "oursCounts": ours.get("counts"), "argsVsKernarg": ours.get("argsVsKernarg")}
    if "compare" in report:
        cmp = report["compare"]
        out.update(compareCounts=cmp["counts"], supportedOnlyUpstream=cmp["supportedOnlyUpstream"],
                   kernelArgWordDiffs=cmp["kernelArgWordDiffs"],
                   kernelArgWordDiffExamples={k: v[:2] for k, v in cmp["kernelArgWordDiffExamples"].items()},
                   leftOut=len(report["dat"]["leftOut"]), datFieldDiffs=report["dat"]["fieldDiffs"],
                   lazyMasterDiffs=len(report["dat"]["lazyMasterDiffs"]))
    return out
