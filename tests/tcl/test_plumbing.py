"""The build's plumbing with every solution admitted and stand-in kernels (real assembler, no GEMM code):
every kernelName of every .dat is a kernel of the .co beside it, and outputs do not depend on --jobs."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tensile_lite.build import build_library
from tensile_lite.codeobj.elf import read_code_object
from tensile_lite.codeobj.trivial import TrivialKernel
from tensile_lite.library.formats import read_dat
from tensile_lite.tcl import _publish
from tensile_lite.tcl_args import build_parser, to_request
from tests.shared import shared_dir


class _Admit:
    """A gate's verdict admitting every solution (only its empty `reasons` is read)."""

    reasons: tuple[str, ...] = ()


_ADMIT = _Admit()


def _build(logic: Path, out: Path, jobs: int) -> None:
    req = to_request(build_parser().parse_args([f"--jobs={jobs}", "--architecture=gfx90a", "--verbose=0",
                                                str(logic), str(out), "HIP"]))
    staging = out / "staging"
    summary = build_library(req, staging, log=lambda *_: None, gate=lambda _s: _ADMIT,
                            kernel_source=lambda sol, name, code_object_version, decision: TrivialKernel(
                                name, sol.arch, code_object_version))
    _publish(staging, out / "library", summary, write_manifest=True)
    assert summary.supported == summary.solutions > 0


def test_every_kernel_name_is_in_its_code_object(tmp_path, toolchain):
    logic = shared_dir("logic", "asm_full", "aldebaran", "104CU")
    _build(logic, tmp_path / "a", jobs=2)
    library = tmp_path / "a" / "library"
    placeholders = [p for p in library.glob("TensileLibrary_*.dat") if "_lazy_" not in p.name]
    assert placeholders
    for dat in placeholders:
        names = {s["kernelName"] for s in read_dat(dat)["solutions"]}
        kernels = {k.name for k in read_code_object(dat.with_suffix(".co")).kernels}
        assert names == kernels


def test_jobs_do_not_change_bytes(tmp_path, toolchain):
    logic = shared_dir("logic", "asm_full", "aldebaran", "104CU")
    _build(logic, tmp_path / "j1", jobs=1)
    _build(logic, tmp_path / "j2", jobs=2)

    def digest(d: Path) -> dict[str, str]:
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.iterdir())
                if p.name != "TensileManifest.txt"}

    assert digest(tmp_path / "j1" / "library") == digest(tmp_path / "j2" / "library")
