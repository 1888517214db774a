"""hipBLASLt's own runtime code as the client of the library we build (../shared/tools/runtime-probe).

The dev set's whole logic root is built for gfx90a and for gfx942 with hipBLASLt's command line, then the
runtime (compiled for the CPU, with a fake device) loads every file, audits the loader in strict mode,
selects a solution for every size of the logic tables and more, packs the kernel arguments and checks each
launch against our code objects, and does the same with upstream's library for the logic: ours must load
cleanly, find and launch every kernel, and pick upstream's top-1 solution wherever we have it.

The second half breaks a copy of the gfx90a library in one way at a time and shows each check catching it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from tensile_lite.library.formats import detect_format, encode, read_dat
from tests.shared import shared_dir
from tests.tcl.runtime_probe import (
    ArchBuild,
    DevsetBuilds,
    Probe,
    ProbeRun,
    figures,
    incomplete,
    left_out_mismatch,
    load_failures,
    recompare,
    run_probe,
    runtime_faults,
    strict_messages,
    supported_disagreements,
    top1_disagreements,
)
from tests.tcl.test_devset_e2e import master_of, placeholders
from tests.verify.corrupt import edit_entries, placeholder

ARCHS = ("gfx90a", "gfx942")
BROKEN_ARCH = "gfx90a"  # the smaller library: each broken copy costs one more probe run
# The placeholder the breakages touch: five solutions, its own CU count, a Matching table.
VICTIM = "I8I8_I8I8_UA_Type_I8I8_HPA_Contraction_l_Ailk_Bjlk"


def _report(run: ProbeRun) -> dict[str, Any]:
    report = run.report()
    assert report is not None, run.log[-3000:]
    return report


@attrs.frozen(slots=True)
class Probed:
    build: ArchBuild
    run: ProbeRun

    @property
    def report(self) -> dict[str, Any]:
        return _report(self.run)

    def master_placeholders(self) -> list[str]:
        return placeholders(master_of(self.build.library, self.build.arch))


@attrs.define(slots=True)
class ProbeRuns:
    """Our library of each architecture through the probe against upstream's, at most once per module."""
    builds: DevsetBuilds
    probe: Probe
    base: Path
    _done: dict[str, Probed] = attrs.field(factory=dict)

    def __call__(self, arch: str) -> Probed:
        if arch not in self._done:
            build = self.builds(arch)
            run = run_probe(self.probe, arch, build.library, self.base / arch, shared_dir("reference", "dat", arch))
            self._done[arch] = Probed(build, run)
        return self._done[arch]


@pytest.fixture(scope="module")
def probe_runs(devset_builds: DevsetBuilds, runtime_probe: Probe,
               tmp_path_factory: pytest.TempPathFactory) -> ProbeRuns:
    return ProbeRuns(devset_builds, runtime_probe, tmp_path_factory.mktemp("probe"))


@pytest.fixture(scope="module", params=ARCHS)
def probed(request: pytest.FixtureRequest, probe_runs: ProbeRuns) -> Probed:
    return probe_runs(request.param)


# --- our library, as hipBLASLt's runtime sees it ----------------------------------------------------------


def test_probe_runs_to_the_end(probed: Probed) -> None:
    assert incomplete(probed.run) == []


def test_every_placeholder_loads(probed: Probed) -> None:
    names = probed.master_placeholders()
    assert names, "the master names no placeholder"
    assert load_failures(probed.run, names) == []


def test_strict_loader_audit_is_silent(probed: Probed) -> None:
    """No required key missing, no bad value, no key of ours the runtime never reads."""
    assert strict_messages(probed.run) == {}


def test_runtime_finds_launches_and_solves_everything(probed: Probed) -> None:
    """No problem the runtime could not evaluate, no solution whose kernel is not in its code object, no
    launch that does not match the code object, no solve() error, nothing fatal."""
    assert runtime_faults(probed.report) == {}
    assert probed.report["ours"]["counts"].get("run", 0) > 0


def test_top1_is_upstreams_wherever_we_have_it(probed: Probed) -> None:
    """Every problem gets upstream's top-1 solution, except where upstream's winner is a solution we left
    out (compare.py checks that winner against our library's solutions)."""
    assert top1_disagreements(probed.report, probed.run.problem_count()) == {}
    assert probed.report["compare"]["counts"].get("top1 agree", 0) > 0


def test_supported_solutions_are_upstreams(probed: Probed) -> None:
    """For every problem the runtime accepts the same solutions from both libraries, except upstream's that
    we left out: our predicates admit what upstream's admit."""
    assert supported_disagreements(probed.report) == {}


def test_only_the_solutions_we_cannot_build_are_missing(probed: Probed) -> None:
    assert left_out_mismatch(probed.report, probed.build.built.log) == {}


def test_figures(probed: Probed, record_property: Callable[[str, object], None]) -> None:
    """Recorded, not asserted: kernelArgWordDiffs (the internalArgs words) belongs to another issue."""
    found = figures(probed.run)
    found["buildSeconds"] = round(probed.build.seconds, 1)
    print(json.dumps(found, indent=1))
    for key, value in found.items():
        record_property(f"{probed.build.arch}.{key}", json.dumps(value))
    assert "kernelArgWordDiffs" in found and found["problems"] > 0


# --- each check fails on a library broken on purpose ------------------------------------------------------


def victim(library: Path) -> Path:
    return placeholder(library.parent, BROKEN_ARCH, VICTIM)


def delete_placeholder(library: Path) -> str:
    dat = victim(library)
    dat.unlink()
    return dat.stem


def remove_kernel(library: Path) -> str:
    """Rename one kernel everywhere in its code object (symbol, `.kd` descriptor, metadata entry): to the
    runtime the kernel is gone while the .dat still names it."""
    dat = victim(library)
    co = dat.with_suffix(".co")
    names = sorted({s["kernelName"] for s in read_dat(dat)["solutions"]})
    kernel = next(k for k in names if not any(k in other for other in names if other != k))
    gone = kernel[:-1] + ("0" if kernel[-1] != "0" else "1")  # same length: string tables stay valid
    data = co.read_bytes()
    assert data.count(kernel.encode()) >= 3 and gone.encode() not in data
    co.write_bytes(data.replace(kernel.encode(), gone.encode()))
    return kernel


def add_unknown_key(library: Path) -> str:
    dat = victim(library)
    edit_entries(dat, lambda entry: entry.__setitem__("keyTheRuntimeNeverReads", 1))
    return dat.name


def unreadable_value(library: Path) -> str:
    """A negative staggerU where the runtime reads an unsigned value: its msgpack reader aborts."""
    edit_entries(victim(library), lambda entry: entry["sizeMapping"].__setitem__("staggerU", -1))
    return "probe run"


def _edit_document(dat: Path, change: Callable[[dict[str, Any]], None]) -> None:
    doc = read_dat(dat)
    change(doc)
    dat.write_bytes(encode(doc, detect_format(dat)))


def _matching_tables(node: Any) -> list[list[dict[str, Any]]]:
    if isinstance(node, dict):
        own = [node["table"]] if node.get("type") == "Matching" else []
        return own + [t for value in node.values() for t in _matching_tables(value)]
    if isinstance(node, list):
        return [t for value in node for t in _matching_tables(value)]
    return []


def rotate_table(library: Path) -> str:
    """Every Matching row of the placeholder points at the next row's solution: the runtime picks solutions
    upstream has too, for the wrong sizes."""
    def rotate(doc: dict[str, Any]) -> None:
        for table in _matching_tables(doc["library"]):
            indices = [row["index"] for row in table]
            assert len(set(indices)) > 1
            for row, index in zip(table, indices[1:] + indices[:1], strict=True):
                row["index"] = index

    _edit_document(victim(library), rotate)
    return "top1 differ: both present"


def tighten_predicate(library: Path) -> str:
    """Solutions that demand an absurd leading free size: ours reject what upstream's accept."""
    def tighten(entry: dict[str, Any]) -> None:
        for pred in entry["problemPredicate"]["value"]:
            if pred["type"] == "LeadingFree0SizesGreaterOrEqual":
                pred["value"] = 1 << 30

    edit_entries(victim(library), tighten)
    return "in ours but rejected by ours' predicates"


def drop_solution(library: Path) -> None:
    """One solution removed with its table rows, as if we had left it out without saying so."""
    def drop(doc: dict[str, Any]) -> None:
        gone = doc["solutions"].pop()
        for table in _matching_tables(doc["library"]):
            table[:] = [row for row in table if row["index"] != gone["index"]]

    _edit_document(victim(library), drop)


Detect = Callable[[ProbeRun, list[str]], Any]  # a check: (run, the master's placeholders) -> findings


@attrs.frozen(slots=True)
class Breakage:
    corrupt: Callable[[Path], str]  # breaks the library folder; returns what it broke
    # Each check, and what its findings must mention (None: what `corrupt` returned).
    checks: tuple[tuple[Detect, str | None], ...]
    compared: bool = False  # needs upstream's run beside ours


def _fault(name: str) -> Detect:
    return lambda run, names: runtime_faults(_report(run)).get(name)


BREAKAGES = {
    "placeholder .dat deleted": Breakage(delete_placeholder, (
        (lambda run, names: load_failures(run, names), None), (_fault("fatal"), "placeholder load"))),
    "kernel removed from its .co": Breakage(remove_kernel, (
        (_fault("missingKernels"), None), (_fault("kernelProblems"), VICTIM))),
    "unknown key in a solution": Breakage(add_unknown_key, ((lambda run, names: strict_messages(run), None),)),
    "value the runtime cannot read": Breakage(unreadable_value, (
        (lambda run, names: incomplete(run), "did not finish"),)),
    "table rows rotated": Breakage(rotate_table, (
        (lambda run, names: top1_disagreements(_report(run), run.problem_count()), "both present"),),
        compared=True),
    "predicate tightened": Breakage(tighten_predicate, (
        (lambda run, names: supported_disagreements(_report(run)), "rejected by ours' predicates"),),
        compared=True),
}


@pytest.fixture
def broken_copy(devset_builds: DevsetBuilds, tmp_path: Path) -> Path:
    """A private copy of the gfx90a dev-set library folder, free to break."""
    out = tmp_path / "Tensile"
    shutil.copytree(devset_builds(BROKEN_ARCH).built.out, out)
    return out / "library"


@pytest.mark.parametrize("case", list(BREAKAGES))
def test_check_catches_a_broken_library(case: str, broken_copy: Path, runtime_probe: Probe,
                                        tmp_path: Path) -> None:
    breakage = BREAKAGES[case]
    names = placeholders(master_of(broken_copy, BROKEN_ARCH))
    named = breakage.corrupt(broken_copy)
    reference = shared_dir("reference", "dat", BROKEN_ARCH) if breakage.compared else None
    run = run_probe(runtime_probe, BROKEN_ARCH, broken_copy, tmp_path / "probe", reference)
    for detect, expect in breakage.checks:
        findings = detect(run, names)
        assert findings, f"{case}: a check found nothing\n{run.log[-3000:]}"
        assert (expect or named) in repr(findings), findings


def test_left_out_check_catches_a_silently_dropped_solution(broken_copy: Path, runtime_probe: Probe,
                                                            devset_builds: DevsetBuilds, tmp_path: Path) -> None:
    drop_solution(broken_copy)
    run = run_probe(runtime_probe, BROKEN_ARCH, broken_copy, tmp_path / "probe",
                    shared_dir("reference", "dat", BROKEN_ARCH))
    assert "leftOut" in left_out_mismatch(_report(run), devset_builds(BROKEN_ARCH).built.log)


def test_solve_error_check_reads_the_probes_field(probe_runs: ProbeRuns, runtime_probe: Probe,
                                                  tmp_path: Path) -> None:
    """No .dat edit found makes hipBLASLt's solve() throw (the runtime crashes or quietly packs instead), so a
    solveError record, as `probe run` writes one, goes into a copy of a real run's output."""
    probed = probe_runs(BROKEN_ARCH)
    out = tmp_path / "out"
    shutil.copytree(probed.run.out, out)
    records = [json.loads(line) for line in (out / "ours.jsonl").read_text().splitlines()]
    hit = next(r for r in records if r["kind"] == "problem" and r.get("run"))
    hit["run"]["solveError"] = "injected: solve() threw"
    (out / "ours.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    report = recompare(runtime_probe, attrs.evolve(probed.run, out=out))
    assert runtime_faults(report)["solveErrors"] == (1, [[hit["id"], "injected: solve() threw"]])
