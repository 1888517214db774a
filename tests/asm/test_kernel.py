"""Kernel header, descriptor and metadata: assembled and linked for every target, read back."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from tensile_lite.asm import (
    ARCHS,
    AsmError,
    AsmWriter,
    KernelArgument,
    KernelSpec,
    Registers,
    entry_registers,
    isa_for,
    kernel_epilogue,
    kernel_header,
    kernel_prologue,
    kernel_trailer,
    pack_arguments,
    reserve_entry_registers,
    sgpr,
)
from tensile_lite.asm.kernel import descriptor_counts
from tensile_lite.asm.writer import has_comment_marker
from tensile_lite.codeobj.assemble import assemble, link
from tensile_lite.codeobj.elf import read_code_object
from tensile_lite.codeobj.toolchain import Toolchain
from tests.asm.llvm_roundtrip import toolchain_knows

U32 = KernelArgument.value


def _hhs_arguments() -> list[KernelArgument]:
    """The worked example of spec kernel_anatomy.md §1.5 (HHS TN batched, KernArgsVersion 2)."""
    header = [U32("gemm_count", "u32"), U32("internalArgs", "u32"), U32("internalArgs1", "u32"),
              U32("numWorkGroups", "u32")]
    sizes = [U32(n, "u32") for n in ("SizesFree0", "SizesFree1", "SizesFree2", "SizesSum0")]
    ptrs = [KernelArgument.pointer(n, "f16") for n in ("D", "C", "A", "B")]
    strides = [U32(f"stride{m}{i}", "u32") for m in "DCAB" for i in (1, 2)]
    return header + sizes + ptrs + strides + [U32("alpha", "f32"), U32("beta", "f32")]


def test_packing_matches_the_runtime_worked_example() -> None:
    layout = pack_arguments(_hhs_arguments())
    offsets = {p.argument.name: p.offset for p in layout.arguments}
    assert [offsets[n] for n in ("SizesFree0", "SizesFree1", "SizesFree2", "SizesSum0")] == [16, 20, 24, 28]
    assert [offsets[n] for n in "DCAB"] == [32, 40, 48, 56]
    assert [offsets[f"stride{m}1"] for m in "DCAB"] == [64, 72, 80, 88]
    assert (offsets["alpha"], offsets["beta"]) == (96, 100)
    assert layout.segment_size == 104


def test_packing_has_no_alignment_padding() -> None:
    args = [U32("h", "f16"), KernelArgument.pointer("p"), U32("b", "i8"), U32("d", "f64")]
    layout = pack_arguments(args)
    assert [p.offset for p in layout.arguments] == [0, 2, 10, 11]
    assert (layout.size, layout.segment_size) == (19, 24)
    assert layout.offset_of("d") == 11


def _kernel_text(spec: KernelSpec, vgprs: int = 3, agprs: int = 0) -> tuple[str, Registers]:
    regs = Registers(spec.arch, spec.name)
    entry = reserve_entry_registers(spec, regs)
    isa = isa_for(spec.arch.name)
    lines: list[str] = []
    with AsmWriter(lines) as w:
        w.lines_of(kernel_header(spec))
        tmp = regs.s.alloc(2)
        w.emit(isa.s_load_dwordx2(tmp, entry.kernarg, 0))
        regs.v.alloc(vgprs)
        if agprs:
            assert regs.a is not None
            regs.a.alloc(agprs)
        w.emit(isa.s_endpgm())
        w.lines_of(kernel_trailer(spec, regs.counts()))
    return "\n".join(lines) + "\n", regs


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_kernel_assembles_links_and_reads_back(arch: str, toolchain: Toolchain, tmp_path: Path) -> None:
    if not toolchain_knows(toolchain, arch):
        pytest.skip(f"{toolchain.describe()} does not know {arch}")
    a = ARCHS[arch]
    cov = 5 if arch in ("gfx942", "gfx1201") else 4
    spec = KernelSpec(f"Cijk_test_{arch}", arch, _hhs_arguments(), workgroup_size=256,
                      lds_bytes=min(a.lds_bytes, 40960), workgroup_ids=(True, True, True),
                      code_object_version=cov,
                      extra_metadata={"custom.config": {"InternalSupportParams": {"KernArgsVersion": 2}}})
    text, regs = _kernel_text(spec, vgprs=9, agprs=16 if a.has_agprs else 0)
    assert not has_comment_marker(text)
    counts = regs.counts()
    obj = assemble(toolchain, text, arch, tmp_path / "k.o", code_object_version=cov)
    info = read_code_object(link(toolchain, [obj], tmp_path / "k.co"))

    assert info.code_object_version == cov
    assert info.metadata_version == ((1, 2) if cov == 5 else (1, 1))
    kernel = info.kernel(spec.name)
    md = kernel.metadata
    layout = spec.layout
    got = [(x[".name"], x[".offset"], x[".size"], x[".value_kind"]) for x in md[".args"]]
    want = [(p.argument.name, p.offset, p.argument.size, p.argument.value_kind) for p in layout.arguments]
    assert got == want
    assert all(".address_space" in x for x in md[".args"] if x[".value_kind"] == "global_buffer")
    assert not any(x[".value_kind"].startswith("hidden") for x in md[".args"])
    assert md[".kernarg_segment_size"] == layout.segment_size == 104
    assert md[".group_segment_fixed_size"] == spec.lds_bytes
    assert md[".wavefront_size"] == a.wavefront_size
    assert md[".max_flat_workgroup_size"] == 256
    assert md[".vgpr_count"] == counts.vgprs  # AGPRs are not counted here

    desc = kernel.descriptor
    group, private, kernarg = struct.unpack_from("<III", desc, 0)
    assert (group, private, kernarg) == (spec.lds_bytes, 0, 104)
    rsrc3, rsrc1, rsrc2 = struct.unpack_from("<III", desc, 44)
    properties = struct.unpack_from("<H", desc, 56)[0]
    assert (rsrc2 >> 1) & 0x1F == 2                      # USER_SGPR_COUNT: the kernarg pointer
    assert (rsrc2 >> 7) & 0x7 == 0b111                   # workgroup ids x, y, z
    assert properties & (1 << 3)                         # ENABLE_SGPR_KERNARG_SEGMENT_PTR
    c = descriptor_counts(spec, counts)
    if a.unified_vgprs:
        assert (rsrc3 & 0x3F) == c["accum_offset"] // 4 - 1
        assert c["next_free_vgpr"] == c["accum_offset"] + 16
    if a.has_wave32:
        assert bool(properties & (1 << 10)) == (a.wavefront_size == 32)
    assert (rsrc1 >> 16) & 0xF == 0xF                    # FLOAT_DENORM_MODE_32 and _16_64 both 3


@pytest.mark.parametrize("arch", ["gfx90a", "gfx1201"])
def test_prologue_first_order_gives_the_same_kernel(arch: str, toolchain: Toolchain, tmp_path: Path) -> None:
    spec = KernelSpec(f"k_{arch}", arch, _hhs_arguments(), workgroup_size=128, lds_bytes=1024)
    trailer_text, regs = _kernel_text(spec, vgprs=5, agprs=8 if ARCHS[arch].has_agprs else 0)
    isa = isa_for(arch)
    body = [isa.s_load_dwordx2(sgpr(2, 2), sgpr(0, 2), 0).text, isa.s_endpgm().text]
    first = [*kernel_prologue(spec, regs.counts()), *body, *kernel_epilogue(spec)]
    infos = []
    for name, text in (("trailer", trailer_text), ("prologue", "\n".join(first) + "\n")):
        obj = assemble(toolchain, text, arch, tmp_path / f"{name}.o")
        infos.append(read_code_object(link(toolchain, [obj], tmp_path / f"{name}.co")).kernel(spec.name))
    assert infos[0].descriptor[:16] == infos[1].descriptor[:16]
    assert infos[0].descriptor[44:64] == infos[1].descriptor[44:64]
    assert infos[0].metadata == infos[1].metadata


def test_entry_registers_follow_the_hardware_order() -> None:
    spec = KernelSpec("k", "gfx942", [], 64, workgroup_ids=(True, False, True))
    regs = Registers("gfx942", "k")
    reserved = reserve_entry_registers(spec, regs)
    fixed = entry_registers(spec)
    assert reserved == fixed
    assert fixed.kernarg.text == "s[0:1]"
    assert [r.text if r else None for r in fixed.workgroup_ids] == ["s2", None, "s3"]
    assert fixed.workitem_id.text == "v0"
    assert regs.s.alloc(1).text == "s4"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"name": "bad name"}, "not a valid symbol"),
    ({"lds_bytes": 65537}, "exceed the 65536"),
    ({"wavefront_size": 32}, "not available on gfx942"),
    ({"workgroup_size": 96}, "multiple of the wavefront size 64"),
    ({"code_object_version": 3}, "code object version 3"),
])
def test_bad_kernel_specs_raise(kwargs: dict, message: str) -> None:
    base = {"name": "k", "arch": "gfx942", "arguments": [], "workgroup_size": 256}
    with pytest.raises(AsmError, match=message):
        KernelSpec(**(base | kwargs))


def test_gfx950_has_160k_of_lds_and_gfx11_runs_wave32() -> None:
    assert KernelSpec("k", "gfx950", [], 256, lds_bytes=160 * 1024).lds_bytes == 163840
    spec = KernelSpec("k", "gfx1100", [], 128)
    trailer = kernel_trailer(spec, Registers("gfx1100", "k").counts())
    assert "  .amdhsa_wavefront_size32 1" in trailer
    assert not any("accum_offset" in line for line in trailer)
    assert "    .wavefront_size: 32" in trailer


def test_metadata_version_follows_code_object_version() -> None:
    for cov, minor in ((4, 1), (5, 2), (6, 3)):
        spec = KernelSpec("k", "gfx942", [U32("x", "u32")], 64, code_object_version=cov)
        trailer = kernel_trailer(spec, Registers("gfx942", "k").counts())
        i = trailer.index("amdhsa.version:")
        assert trailer[i + 1:i + 3] == ["  - 1", f"  - {minor}"]


def test_argument_names_cannot_smuggle_comments() -> None:
    with pytest.raises(AsmError, match="comment"):
        U32("a // b", "u32")
    with pytest.raises(AsmError, match="unknown value type"):
        U32("a", "f128")
