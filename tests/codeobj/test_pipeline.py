from __future__ import annotations

import io
from pathlib import Path

import attrs
import pytest

from tensile_lite.codeobj.assemble import assemble
from tensile_lite.codeobj.elf import read_code_object
from tensile_lite.codeobj.pipeline import BuildOptions, LibraryPlan, build_code_objects
from tensile_lite.codeobj.trivial import TrivialKernel
from tensile_lite.codeobj.worker import KernelSource, file_base
from tensile_lite.errors import BuildError, ToolchainError

from .kernels import BrokenKernel, RaisingKernel, UnpicklableKernel

QUIET = dict(progress="off")


def _plan(n: int = 12, arch: str = "gfx942"):
    """n kernels over three libraries; k000 is shared by all three."""
    kernels = [TrivialKernel(f"k{i:03d}", arch) for i in range(n)]
    libs = [LibraryPlan(f"TensileLibrary_L{j}_{arch}", arch,
                        (*(k.name for k in kernels if int(k.name[1:]) % 3 == j), "k000"))
            for j in range(3)]
    return kernels, libs


def _build(toolchain, tmp_path: Path, kernels, libs, name="out", **opts):
    scratch = tmp_path / f"{name}-scratch"
    scratch.mkdir()
    options = BuildOptions(tmp_parent=scratch, **{**QUIET, **opts})
    out = tmp_path / name
    return out, scratch, build_code_objects(toolchain, kernels, libs, out, options, stream=None)


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_trivial_kernel_satisfies_the_protocol():
    assert isinstance(TrivialKernel("k", "gfx942"), KernelSource)


def test_jobs_1_and_2_give_identical_bytes_and_clean_up(toolchain, tmp_path):
    kernels, libs = _plan()
    out1, scratch1, r1 = _build(toolchain, tmp_path, kernels, libs, "j1", jobs=1)
    # Reverse the input order as well: neither order nor jobs may change the output.
    out2, scratch2, r2 = _build(toolchain, tmp_path, list(reversed(kernels)), libs, "j2", jobs=2)
    assert r1.jobs == 1 and r2.jobs == 2
    assert _files(out1) == _files(out2) == sorted(["library"] + [f"library/{lib.name}.co" for lib in libs])
    for lib in libs:
        assert (out1 / "library" / f"{lib.name}.co").read_bytes() == (out2 / "library" / f"{lib.name}.co").read_bytes()
    assert _files(scratch1) == [] and _files(scratch2) == []
    assert r1.kernels_assembled == r2.kernels_assembled == 12
    assert r1.libraries_linked == 3 and r1.peak_tmp_bytes > 0 and r1.output_bytes > 0


def test_shared_kernel_is_assembled_once_and_in_every_library(toolchain, tmp_path):
    kernels, libs = _plan()
    # Supplying the shared kernel twice must not assemble it twice either.
    out, _, report = _build(toolchain, tmp_path, [*kernels, kernels[0]], libs, jobs=2)
    assert report.kernels_assembled == len(kernels)
    for lib in libs:
        info = read_code_object(out / "library" / f"{lib.name}.co")
        assert info.names() == tuple(sorted(set(lib.kernel_names)))
        assert "k000" in info.names()


def test_objects_are_deleted_when_their_last_library_is_linked(toolchain, tmp_path):
    # Kernels streamed library by library: the peak is bounded by one library plus the shared kernel,
    # not by the whole set.
    arch = "gfx1100"
    libs = [LibraryPlan(f"TensileLibrary_L{j}_{arch}", arch, (*(f"l{j}k{i}" for i in range(5)), "shared"))
            for j in range(4)]
    kernels = [TrivialKernel("shared", arch)] + [TrivialKernel(n, arch) for lib in libs for n in lib.kernel_names
                                                  if n != "shared"]
    _, _, report = _build(toolchain, tmp_path, kernels, libs, jobs=1)
    one = assemble(toolchain, kernels[1].assembly_text(), arch, tmp_path / "one.o").stat().st_size
    assert report.kernels_assembled == 21
    # Keeping everything would peak at 21 objects; streaming holds one library's five plus "shared".
    assert 6 * one - 64 <= report.peak_tmp_bytes <= 6 * one + 64


def test_assembler_error_is_reported_and_leaves_no_partial_output(toolchain, tmp_path):
    kernels, libs = _plan()
    kernels[4] = BrokenKernel("k004", "gfx942", "v_bogus_op v1, v2")
    options = BuildOptions(jobs=2, tmp_parent=tmp_path, **QUIET)
    with pytest.raises(BuildError) as err:
        build_code_objects(toolchain, kernels, libs, tmp_path / "out", options, stream=None,
                           solutions_of={"k004": ["Cijk_Ailk_Bljk_S_MT64x64_sol4"]})
    msg = str(err.value)
    failed = tmp_path / "out" / "failed-kernels" / "k004.s"
    assert "kernel k004 (gfx942)" in msg and "Cijk_Ailk_Bljk_S_MT64x64_sol4" in msg
    assert "TensileLibrary_L1_gfx942" in msg
    assert "v_bogus_op v1, v2" in msg and str(failed) in msg
    assert failed.read_text() == kernels[4].assembly_text()
    # The library holding the bad kernel is not there, not even half-written.
    lib_files = _files(tmp_path / "out" / "library")
    assert "TensileLibrary_L1_gfx942.co" not in lib_files
    assert not [f for f in lib_files if ".tmp-" in f]
    assert not list(tmp_path.glob(".tensile-lite-tmp-*"))


def test_generator_failure_names_the_kernel(toolchain, tmp_path):
    kernels, libs = _plan(6)
    kernels[2] = RaisingKernel("k002", "gfx942")
    with pytest.raises(BuildError, match=r"kernel k002 \(gfx942\).*generating its assembly text failed.*MT1=7"):
        _build(toolchain, tmp_path, kernels, libs, jobs=1)
    assert _files(tmp_path / "out-scratch") == []


def test_interrupt_removes_temporaries(toolchain, tmp_path):
    kernels, libs = _plan()

    def stream():
        yield from kernels[:5]
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _build(toolchain, tmp_path, stream(), libs, jobs=2)
    assert _files(tmp_path / "out-scratch") == []
    assert not [f for f in _files(tmp_path / "out") if ".tmp-" in f]


def test_missing_kernel_fails_and_unused_kernel_is_reported(toolchain, tmp_path):
    kernels, libs = _plan(6)
    with pytest.raises(BuildError, match=r"never supplied.*TensileLibrary_L2_gfx942 lacks k005"):
        _build(toolchain, tmp_path, kernels[:5], libs, jobs=1)
    extra = TrivialKernel("orphan", "gfx942")
    _, _, report = _build(toolchain, tmp_path, [*kernels, extra], libs, "again", jobs=1)
    assert report.kernels_unused == ("orphan (gfx942)",)


def test_keep_build_tmp_keeps_text_and_objects(toolchain, tmp_path):
    kernels, libs = _plan(3)
    out, _, report = _build(toolchain, tmp_path, kernels, libs, jobs=1, keep_build_tmp=True)
    assert report.build_tmp == out / "build_tmp"
    kept = _files(report.build_tmp)
    assert {"gfx942/k000.s", "gfx942/k000.o", "gfx942/k002.s", "gfx942/k002.o"} <= set(kept)


def test_code_object_v5_and_mixed_archs(toolchain, tmp_path, supported_targets):
    archs = [a for a in ("gfx90a", "gfx1201") if a in supported_targets]
    kernels = [TrivialKernel(f"k{i}", a, 5) for a in archs for i in range(3)]
    libs = [LibraryPlan(f"TensileLibrary_X_{a}", a, ("k0", "k1", "k2")) for a in archs]
    out, _, report = _build(toolchain, tmp_path, kernels, libs, jobs=2, code_object_version=5)
    assert report.libraries_linked == len(archs)
    for a in archs:
        info = read_code_object(out / "library" / f"TensileLibrary_X_{a}.co")
        assert info.code_object_version == 5 and info.target.endswith(a)


def test_progress_lines_and_summary_when_not_a_terminal(toolchain, tmp_path):
    kernels, libs = _plan(6)
    sink = io.StringIO()
    build_code_objects(toolchain, kernels, libs, tmp_path / "out",
                       BuildOptions(jobs=1, progress="auto", progress_every=0.0, tmp_parent=tmp_path),
                       stream=sink)
    lines = sink.getvalue().splitlines()
    assert lines[0].startswith("[1/6 kernels")
    assert "\r" not in sink.getvalue()
    assert lines[-1].startswith("code objects: 6 kernels assembled, 3 libraries linked")
    assert "peak temporary disk" in lines[-1]


def test_long_kernel_names_get_unique_short_file_names():
    a, b = "K" * 300 + "a", "K" * 300 + "b"
    assert file_base(a) != file_base(b)
    assert len(file_base(a)) <= 96 and file_base("short_name") == "short_name"


def test_metadata_version_must_match_code_object_version(toolchain, tmp_path):
    kernels = [TrivialKernel("k0", "gfx942", 4), TrivialKernel("k1", "gfx942", 5)]
    libs = [LibraryPlan("TensileLibrary_M_gfx942", "gfx942", ("k0", "k1"))]
    with pytest.raises(BuildError, match=r"amdhsa\.version 1\.1, 1\.2 .* code object v5"):
        _build(toolchain, tmp_path, kernels, libs, jobs=1, code_object_version=5)
    assert _files(tmp_path / "out" / "library") == []


def test_source_that_cannot_reach_a_worker_is_named(toolchain, tmp_path):
    kernels, libs = _plan(6)
    kernels[3] = UnpicklableKernel("k003", "gfx942")
    with pytest.raises(BuildError, match=r"kernel k003 \(gfx942\).*worker failed"):
        _build(toolchain, tmp_path, kernels, libs, jobs=2)
    assert _files(tmp_path / "out-scratch") == []


class _FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_rewrites_one_line_on_a_terminal(toolchain, tmp_path):
    kernels, libs = _plan(6)
    term = _FakeTerminal()
    build_code_objects(toolchain, kernels, libs, tmp_path / "out",
                       BuildOptions(jobs=1, progress="auto", tmp_parent=tmp_path), stream=term)
    text = term.getvalue()
    assert "\r\x1b[K[" in text and "kernels/s" in text and "ETA" in text
    assert text.endswith("\n") and text.splitlines()[-1].startswith("code objects: 6 kernels assembled")


def test_target_the_toolchain_cannot_build_fails_before_any_work(toolchain, tmp_path):
    old = attrs.evolve(toolchain, version=(19, 1, 7))
    libs = [LibraryPlan("TensileLibrary_A_gfx950", "gfx950", ("k",))]
    with pytest.raises(ToolchainError, match=r"LLVM 19\.1\.7.*gfx950.*LLVM 20\+"):
        build_code_objects(old, [TrivialKernel("k", "gfx950")], libs, tmp_path / "out", BuildOptions(**QUIET))
    assert not (tmp_path / "out").exists()
