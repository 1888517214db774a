from __future__ import annotations

import pytest

from tensile_lite.codeobj.assemble import assemble, assemble_argv, link
from tensile_lite.codeobj.elf import read_code_object
from tensile_lite.codeobj.trivial import TrivialKernel
from tensile_lite.errors import BuildError
from tensile_lite.targets import TARGETS

from .kernels import BrokenKernel


def test_argv_uses_upstream_flags_and_table_wave_size(toolchain, tmp_path):
    argv = assemble_argv(toolchain, "gfx942:xnack-", tmp_path / "k.o")
    assert argv[1:] == ["-x", "assembler", "-target", "amdgcn-amd-amdhsa", "-mcode-object-version=4",
                        "-mcpu=gfx942", "-mwavefrontsize64", "-c", "-o", str(tmp_path / "k.o"), "-"]
    assert "-mno-wavefrontsize64" in assemble_argv(toolchain, "gfx1201", tmp_path / "k.o")
    assert "-mwavefrontsize64" in assemble_argv(toolchain, "gfx1100", tmp_path / "k.o", wave64=True)
    with pytest.raises(BuildError, match="version 3"):
        assemble_argv(toolchain, "gfx942", tmp_path / "k.o", code_object_version=3)


@pytest.mark.parametrize("cov", [4, 5])
def test_every_supported_target_assembles_and_links(toolchain, supported_targets, tmp_path, cov):
    assert supported_targets, "the installed LLVM supports no target of the table"
    for gfx in supported_targets:
        objs = [assemble(toolchain, TrivialKernel(f"k{i}_{gfx}", gfx, cov).assembly_text(), gfx,
                         tmp_path / f"{gfx}_{i}.o", code_object_version=cov) for i in range(2)]
        co = link(toolchain, objs, tmp_path / f"{gfx}.co")
        info = read_code_object(co)
        assert info.target == f"amdgcn-amd-amdhsa--{gfx}"
        assert info.code_object_version == cov
        assert info.metadata_version == ((1, 1) if cov == 4 else (1, 2))
        assert info.names() == (f"k0_{gfx}", f"k1_{gfx}")
        for k in info.kernels:
            assert len(k.descriptor) == 64 and k.has_symbol
            assert k.metadata[".wavefront_size"] == TARGETS[gfx].wavefront_size
    assert not list(tmp_path.glob("*.tmp-*"))


def test_assembler_error_shows_line_and_leaves_no_object(toolchain, tmp_path):
    src = BrokenKernel("bad_kernel", "gfx942", "v_bogus_op v1, v2")
    text = src.assembly_text()
    bad_no = text.splitlines().index("  v_bogus_op v1, v2") + 1
    out = tmp_path / "bad_kernel.o"
    with pytest.raises(BuildError) as err:
        assemble(toolchain, text, "gfx942", out)
    msg = str(err.value)
    assert "bad_kernel" in msg and "gfx942" in msg and f"line {bad_no}:" in msg
    assert "| " + "  v_bogus_op v1, v2" in msg
    assert not out.exists()


def test_many_errors_are_capped(toolchain, tmp_path):
    text = TrivialKernel("k", "gfx90a").assembly_text().replace(
        "  s_endpgm\n", "  nope1\n  nope2\n  nope3\n  nope4\n  nope5\n  s_endpgm\n")
    with pytest.raises(BuildError, match=r"and 2 more error") as err:
        assemble(toolchain, text, "gfx90a", tmp_path / "k.o")
    assert "nope3" in str(err.value) and "nope4" not in str(err.value)


def test_link_failure_is_named_and_atomic(toolchain, tmp_path):
    # The same kernel symbol twice is a duplicate-definition error in ld.lld.
    a = assemble(toolchain, TrivialKernel("dup", "gfx942").assembly_text(), "gfx942", tmp_path / "a.o")
    b = assemble(toolchain, TrivialKernel("dup", "gfx942").assembly_text(), "gfx942", tmp_path / "b.o")
    dest = tmp_path / "lib.co"
    with pytest.raises(BuildError, match=r"(?s)linking lib\.co failed.*duplicate symbol: dup"):
        link(toolchain, [a, b], dest)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.o", "b.o"]


def test_batched_link_gives_identical_bytes(toolchain, tmp_path):
    objs = [assemble(toolchain, TrivialKernel(f"k{i}", "gfx1100").assembly_text(), "gfx1100",
                     tmp_path / f"k{i}.o") for i in range(7)]
    whole = link(toolchain, objs, tmp_path / "whole.co").read_bytes()
    sliced = link(toolchain, objs, tmp_path / "sliced.co", batch=3).read_bytes()
    assert whole == sliced
    assert read_code_object(tmp_path / "sliced.co").names() == tuple(f"k{i}" for i in range(7))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_trivial_kernel_rejects_bad_symbol_and_version():
    with pytest.raises(ValueError):
        TrivialKernel("has space", "gfx942")
    with pytest.raises(ValueError):
        TrivialKernel("k", "gfx942", code_object_version=6)
