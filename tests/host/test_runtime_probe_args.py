"""The strongest oracle for the host's packing: hipBLASLt's own runtime code (../shared/tools/runtime-probe,
built for the CPU) packs the kernel arguments of every problem it solves and reports the bytes. The bundled
sample (dev-set solutions: gfx942 SS, gfx90a HHS) is built with hipBLASLt's command line, the probe solves
its problems, and `tensile_lite.host` must pack the same words for the same call.

The runtime's fake device places A, B, C, D at fixed addresses; alpha is 1 and beta the problem's. The
internalArgs words are left out: they follow the library's `internalArgsSupport` (verify/runtime_args.py
models that), which the host's solution-level words do not. A host broken on purpose (C's strides in
D's place) must disagree.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tensile_lite.host import GemmProblem, args, pack_kernel_args
from tensile_lite.library.naming import kernel_name_for
from tensile_lite.logic import read_logic_file
from tensile_lite.model import Solution
from tensile_lite.sample import path as sample_dir
from tests.tcl.runtime_probe import find_probe, run_probe
from tests.tcl.test_devset_e2e import cmake_argv, run_tcl

ARCHS = ("gfx90a", "gfx942")
# the probe's fake device addresses of the four matrices
FAKE = {"A": 0x1000_0000, "B": 0x2000_0000, "C": 0x3000_0000, "D": 0x4000_0000}


def _solutions() -> dict[str, Solution]:
    out: dict[str, Solution] = {}
    for path in sorted(Path(sample_dir()).rglob("*.yaml")):
        for sol in read_logic_file(path).solutions:
            out.setdefault(kernel_name_for(sol), sol)
    return out


@pytest.fixture(scope="module")
def launches(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Solution, dict[str, str], bytes]]:
    """(solution, problem spec, the argument bytes the runtime packed) of every launch the probe made."""
    probe = find_probe()
    work = tmp_path_factory.mktemp("probe_args")
    res = run_tcl(cmake_argv(Path(sample_dir()), work / "build", "_".join(ARCHS), 1), work)
    assert res.returncode == 0, res.stderr[-2000:]
    sols = _solutions()
    out = []
    for arch in ARCHS:
        run = run_probe(probe, arch, work / "build" / "library", work / arch)
        assert run.returncode == 0, run.log[-2000:]
        for rec in run.jsonl("ours.jsonl"):
            for kernel in (rec.get("run") or {}).get("kernels", []):
                if rec["spec"].get("variant") == "plain":
                    out.append((sols[kernel["name"]], rec["spec"], bytes.fromhex(kernel["args"])))
    assert out, "the probe launched nothing"
    return out


def _host_words(sol: Solution, spec: dict[str, Any]) -> bytes:
    problem = GemmProblem(int(spec["m"]), int(spec["n"]), int(spec["k"]), int(spec["batch"]))
    return pack_kernel_args(sol, problem, FAKE, 1.0, float(spec["beta"]))


def mismatches(launches: list[tuple[Solution, dict[str, str], bytes]]) -> Iterator[str]:
    for sol, spec, runtime in launches:
        ours = _host_words(sol, spec)
        if len(ours) != len(runtime):
            yield f"{spec['id']}: runtime packs {len(runtime)} bytes, the host {len(ours)}"
            continue
        if runtime[0:4] != ours[0:4] or runtime[12:16] != ours[12:16]:
            yield f"{spec['id']}: header gemm_count/numWorkGroups {runtime[:16].hex()} vs {ours[:16].hex()}"
        for off in range(16, len(runtime), 4):
            if runtime[off:off + 4] != ours[off:off + 4]:
                word = struct.unpack_from("<I", runtime, off)[0], struct.unpack_from("<I", ours, off)[0]
                yield f"{spec['id']}: word at {off}: runtime {word[0]:#x}, host {word[1]:#x}"
                break


def test_host_packs_the_runtimes_words(launches: list[tuple[Solution, dict[str, str], bytes]]) -> None:
    assert {sol.arch for sol, _, _ in launches} == set(ARCHS)
    assert list(mismatches(launches)) == []


def test_swapped_strides_disagree_with_the_runtime(launches: list[tuple[Solution, dict[str, str], bytes]],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    real = args._named

    def swapped(*a: Any, **k: Any) -> list[tuple[str, bytes]]:
        fields = real(*a, **k)
        at = {name: i for i, (name, _) in enumerate(fields)}
        i, j = at["strideD1"], at["strideA1"]
        fields[i], fields[j] = (fields[i][0], fields[j][1]), (fields[j][0], fields[i][1])
        return fields

    monkeypatch.setattr(args, "_named", swapped)
    assert list(mismatches(launches))
