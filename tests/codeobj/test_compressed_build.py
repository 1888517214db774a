"""Compressed code objects through the build: the streaming pipeline, the emulator, verify-library's checks,
and a 7.x build of the bundled sample against a `--no-compress` one."""

from __future__ import annotations

import gc
import struct
from pathlib import Path

import numpy as np
import pytest

from tensile_lite.codeobj.bundle import COMPRESSED_BUNDLE, PLAIN_ELF, container, read_code_object_file
from tensile_lite.codeobj.bundler import OffloadBundler, compress
from tensile_lite.codeobj.elf import read_code_object
from tensile_lite.codeobj.finish import CodeObjectFinish
from tensile_lite.codeobj.pipeline import BuildOptions, LibraryPlan, build_code_objects
from tensile_lite.codeobj.trivial import TrivialKernel
from tensile_lite.emu import DeviceMemory, Emulator
from tensile_lite.errors import EXIT_TOOLCHAIN, ToolFailure
from tensile_lite.library.formats import DatError
from tensile_lite.sample import path as sample_logic_dir
from tensile_lite.tcl import main as tcl_main
from tensile_lite.tcl import run
from tensile_lite.tcl_args import build_parser, to_request
from tensile_lite.verify import verify_library
from tensile_lite.verify.integrity import check_code_object
from tests.emu.kernels import KernelSpec, build, dialect, ptr


def _plan(arch: str = "gfx942"):
    kernels = [TrivialKernel(f"k{i:02d}", arch) for i in range(6)]
    libs = [LibraryPlan(f"TensileLibrary_L{j}_{arch}", arch, [k.name for k in kernels if int(k.name[1:]) % 2 == j])
            for j in range(2)]
    return kernels, libs


def _build(toolchain, tmp_path: Path, name: str, finish: CodeObjectFinish | None = None, jobs: int = 2):
    scratch = tmp_path / f"{name}-scratch"
    scratch.mkdir()
    kernels, libs = _plan()
    opts = {"finish": finish} if finish is not None else {}
    options = BuildOptions(jobs=jobs, tmp_parent=scratch, progress="off", **opts)
    report = build_code_objects(toolchain, kernels, libs, tmp_path / name, options, stream=None)
    return tmp_path / name / "library", scratch, report, libs


def test_pipeline_compresses_each_library_and_leaves_no_raw_file(toolchain, bundler, tmp_path):
    plain, _, plain_report, libs = _build(toolchain, tmp_path, "plain")
    default, _, _, _ = _build(toolchain, tmp_path, "default", CodeObjectFinish())
    packed, scratch, report, _ = _build(toolchain, tmp_path, "packed", CodeObjectFinish(bundler), jobs=1)
    assert sorted(p.name for p in scratch.rglob("*")) == []  # the `.co.raw` files went at once
    assert report.libraries_linked == 2 and report.output_bytes < plain_report.output_bytes
    for lib in libs:
        name = f"{lib.name}.co"
        assert (plain / name).read_bytes() == (default / name).read_bytes()  # plain: today's path and bytes
        assert container((plain / name).read_bytes()) == PLAIN_ELF
        assert container((packed / name).read_bytes()) == COMPRESSED_BUNDLE
        # compression wraps the very ELF a plain build publishes
        assert read_code_object_file(packed / name) == (plain / name).read_bytes()
        info = read_code_object(packed / name)
        assert info.container == COMPRESSED_BUNDLE and set(info.names()) == set(lib.kernel_names)
    assert sorted(p.name for p in packed.iterdir()) == sorted(f"{lib.name}.co" for lib in libs)


def test_pipeline_bundler_failure_names_the_library_and_leaves_nothing(toolchain, tmp_path):
    fake = tmp_path / "broken-bundler"
    fake.write_text("#!/bin/sh\necho 'error: Compression not supported' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(ToolFailure, match=r"compressing TensileLibrary_L0_gfx942\.co failed"):
        _build(toolchain, tmp_path, "broken", CodeObjectFinish(OffloadBundler(fake, "test")), jobs=1)
    assert [p.name for p in (tmp_path / "broken" / "library").iterdir()] == []
    assert list((tmp_path / "broken-scratch").rglob("*")) == []


_STORE_LANE = """
  {s_load_b64} s[4:5], s[0:1], 0x0
  {wait_smem}
  v_lshlrev_b32 v1, 2, v0
  {global_store_b32} v1, v0, s[4:5]
  s_endpgm
"""


def test_emulator_runs_a_kernel_of_a_compressed_code_object(toolchain, bundler, tmp_path):
    arch = "gfx942"
    spec = KernelSpec("lane_ids", dialect(arch, _STORE_LANE), (ptr("out"),), vgprs=8, sgprs=16)
    plain = build(toolchain, tmp_path, arch, [spec], name="lanes")
    packed = compress(bundler, plain, tmp_path / "lanes.co", arch)
    results = []
    for path in (plain, packed):
        emu = Emulator(path, toolchain=toolchain)
        mem = DeviceMemory()
        out = mem.alloc(4 * 64, fill=0xEE)
        emu.launch("lane_ids", grid=(1, 1, 1), block=(64, 1, 1), kernargs=struct.pack("<Q", out), memory=mem)
        results.append(mem.array(out, np.uint32, 64).copy())
        assert emu.path == path  # messages name the file the user gave
        if path == packed:
            unpacked = emu.elf_path
            assert unpacked != path and unpacked.read_bytes() == plain.read_bytes()
        del emu
    gc.collect()
    assert not unpacked.exists()  # the unpacked ELF goes with its emulator
    assert (results[0] == np.arange(64)).all() and (results[1] == results[0]).all()


def test_verify_integrity_reads_compressed_code_objects(toolchain, bundler, tmp_path):
    packed, _, _, libs = _build(toolchain, tmp_path, "packed", CodeObjectFinish(bundler), jobs=1)
    co = packed / f"{libs[0].name}.co"
    check_code_object(co, libs[0].kernel_names, "gfx942")
    with pytest.raises(DatError, match="built for amdgcn-amd-amdhsa--gfx942, not gfx90a"):
        check_code_object(co, libs[0].kernel_names, "gfx90a")
    co.write_bytes(co.read_bytes()[:-10])
    with pytest.raises(DatError, match=r"not a readable code object.*compressed offload bundle"):
        check_code_object(co, libs[0].kernel_names, "gfx942")


def _tcl(out: Path, *flags: str) -> Path:
    argv = ["--jobs=2", "--verbose=0", "--architecture=gfx942", "--interface=rocm-7.2", *flags,
            str(sample_logic_dir()), str(out), "HIP"]
    assert run(to_request(build_parser().parse_args(argv))) == 0
    return out / "library"


def test_rocm7_build_of_the_sample_writes_bundles_that_verify(toolchain, bundler, tmp_path):
    packed = _tcl(tmp_path / "packed")
    plain = _tcl(tmp_path / "plain", "--no-compress")
    # Wherever the 7.x layout puts them: every `.co` is a compressed bundle, or plain ELF with --no-compress.
    cos = sorted(p.relative_to(packed) for p in packed.rglob("*.co"))
    assert cos and cos == sorted(p.relative_to(plain) for p in plain.rglob("*.co"))
    for rel in cos:
        assert container((packed / rel).read_bytes()) == COMPRESSED_BUNDLE
        assert container((plain / rel).read_bytes()) == PLAIN_ELF
        assert read_code_object_file(packed / rel) == (plain / rel).read_bytes()
    # The helper code object stays plain in 7.x (upstream unbundles it from the HIP compile).
    helpers = list(packed.rglob("Kernels.so-000-*.hsaco"))
    assert helpers and all(container(h.read_bytes()) == PLAIN_ELF for h in helpers)
    report = verify_library(str(tmp_path / "packed"), progress=lambda _: None)
    summary = report.to_json()
    assert report.ok and summary["passed"] == summary["kernels"] > 0, summary


def test_rocm7_build_with_a_bundler_that_cannot_compress_stops_before_any_kernel(toolchain, tmp_path, monkeypatch,
                                                                                 capsys):
    old = tmp_path / "clang-offload-bundler"
    old.write_text("#!/bin/sh\necho \"clang-offload-bundler: Unknown command line argument '--compress'.\" >&2\n"
                   "exit 1\n")
    old.chmod(0o755)

    def no_kernels(*_args, **_kwargs):
        raise AssertionError("kernels were built before the bundler was checked")

    monkeypatch.setattr("tensile_lite.build.build_code_objects", no_kernels)
    argv = ["--verbose=0", "--architecture=gfx942", "--interface=rocm-7.2", f"--offload-bundler={old}",
            str(sample_logic_dir()), str(tmp_path / "out"), "HIP"]
    assert tcl_main(argv) == EXIT_TOOLCHAIN
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and str(old) in lines[0] and "cannot compress code objects" in lines[0]
    assert "--no-compress" in lines[0] and "--offload-bundler" in lines[0]
    assert not list((tmp_path / "out").rglob("*.co"))
