"""What the emulator needs to know per GPU target: one declarative table, no `if arch ==` elsewhere."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

import attrs

from tensile_lite.emu.errors import CodeObjectError

# Memory-operation classes, mapped per family to the wait counters they increment (s_waitcnt fields).
VMEM_LOAD = "vmem_load"
VMEM_STORE = "vmem_store"
LDS = "lds"
SMEM = "smem"
FLAT = "flat"


@attrs.frozen(slots=True)
class ArchInfo:
    gfx: str
    family: str  # "cdna2", "cdna3", "cdna4", "rdna3", "rdna4"
    wave_sizes: tuple[int, ...]
    # gfx90a+: one file for VGPRs and AGPRs; a[n] is unified register accum_offset + n.
    unified_agprs: bool
    # Encoding of the `fp8`/`bf8` formats: "fnuz" (gfx94x), "ocp" (gfx950, gfx12) or None.
    fp8: str | None
    # "cdna" for MFMA, "gfx11"/"gfx12" for the WMMA register layouts, None when neither.
    matrix: str | None
    # gfx12 "architected SGPRs": workgroup ids live in ttmp9 / ttmp7, not in system SGPRs.
    wg_ids_in_ttmp: bool
    # gfx90a MFMA f16/bf16 flush subnormal inputs and f32 outputs (matrix_instructions.md §7.4).
    mfma_flushes_f16_denorms: bool
    # Wait counter names incremented by each memory-operation class.
    counters: Mapping[str, tuple[str, ...]]
    # GRANULATED_WORKITEM_VGPR_COUNT unit, per wave size.
    vgpr_granule: Mapping[int, int]
    # SGPRs a wave may name: gfx9 takes them from the descriptor, gfx10+ always has 106.
    sgprs_from_descriptor: bool
    # 16-bit VALU results: gfx9 zeroes the other half, gfx10+ keeps it.
    f16_write_zeroes_high: bool
    max_lds_bytes: int
    # SRAM-ECC-capable targets (hardware_semantics.md §1): a D16 load writes the whole VGPR, so the
    # other half becomes 0; without ECC (RDNA) the other half is kept, as the ISA text says.
    d16_zeroes_other_half: bool

    def counter_names(self) -> tuple[str, ...]:
        seen: list[str] = []
        for names in self.counters.values():
            for n in names:
                if n not in seen:
                    seen.append(n)
        return tuple(seen)


_GFX9_COUNTERS = MappingProxyType({VMEM_LOAD: ("vmcnt",), VMEM_STORE: ("vmcnt",), LDS: ("lgkmcnt",),
                                   SMEM: ("lgkmcnt",), FLAT: ("vmcnt", "lgkmcnt")})
_GFX11_COUNTERS = MappingProxyType({VMEM_LOAD: ("vmcnt",), VMEM_STORE: ("vscnt",), LDS: ("lgkmcnt",),
                                    SMEM: ("lgkmcnt",), FLAT: ("vmcnt", "lgkmcnt")})
_GFX12_COUNTERS = MappingProxyType({VMEM_LOAD: ("loadcnt",), VMEM_STORE: ("storecnt",), LDS: ("dscnt",),
                                    SMEM: ("kmcnt",), FLAT: ("loadcnt", "dscnt")})


def _cdna(gfx: str, family: str, fp8: str | None, flush: bool, lds: int) -> ArchInfo:
    return ArchInfo(gfx, family, (64,), True, fp8, "cdna", False, flush, _GFX9_COUNTERS,
                    MappingProxyType({64: 8}), True, True, lds, True)


def _rdna(gfx: str, family: str, matrix: str, fp8: str | None, ttmp: bool, counters) -> ArchInfo:
    return ArchInfo(gfx, family, (32, 64), False, fp8, matrix, ttmp, False, counters,
                    MappingProxyType({32: 8, 64: 4}), False, False, 65536, False)


ARCHS: Mapping[str, ArchInfo] = MappingProxyType({
    "gfx90a": _cdna("gfx90a", "cdna2", None, True, 65536),
    "gfx940": _cdna("gfx940", "cdna3", "fnuz", False, 65536),
    "gfx941": _cdna("gfx941", "cdna3", "fnuz", False, 65536),
    "gfx942": _cdna("gfx942", "cdna3", "fnuz", False, 65536),
    "gfx950": _cdna("gfx950", "cdna4", "ocp", False, 163840),
    **{g: _rdna(g, "rdna3", "gfx11", None, False, _GFX11_COUNTERS)
       for g in ("gfx1100", "gfx1101", "gfx1102", "gfx1150", "gfx1151")},
    **{g: _rdna(g, "rdna4", "gfx12", "ocp", True, _GFX12_COUNTERS) for g in ("gfx1200", "gfx1201")},
})

# EF_AMDGPU_MACH values (ELF e_flags bits 7:0), used when a code object carries no metadata note.
_MACH = MappingProxyType({0x30: "gfx908", 0x3F: "gfx90a", 0x40: "gfx940", 0x4B: "gfx941", 0x4C: "gfx942", 0x4F: "gfx950",
                          0x41: "gfx1100", 0x46: "gfx1101", 0x47: "gfx1102", 0x43: "gfx1150",
                          0x4A: "gfx1151", 0x48: "gfx1200", 0x4E: "gfx1201"})


def gfx_from_target(target: str) -> str:
    """`amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-` -> `gfx942`."""
    m = re.search(r"gfx[0-9a-f]+", target.lower())
    return m.group(0) if m else target


def gfx_from_e_flags(e_flags: int) -> str | None:
    return _MACH.get(e_flags & 0xFF)


def arch_info(gfx: str) -> ArchInfo:
    try:
        return ARCHS[gfx]
    except KeyError:
        raise CodeObjectError(f"the emulator does not know target {gfx!r}; it knows "
                              + ", ".join(ARCHS)) from None
