"""What the emulator needs to know per GPU target, derived from the target registry (`tensile_lite.targets`)
by ISA generation and the records' facts: no gfx name is listed here, and no `if arch ==` elsewhere."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import attrs

from tensile_lite.emu.errors import CodeObjectError
from tensile_lite.targets import GFX12, TARGETS, Target, gfx_in, target_of_elf_mach

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


def _info(t: Target) -> ArchInfo:
    """The emulator's view of a registry record, derived from its ISA generation and facts."""
    family = t.family.lower().split(".")[0]  # RDNA3.5 runs RDNA3's rules here
    if t.cdna:
        return ArchInfo(t.gfx, family, t.wave_sizes, True, t.fp8, "cdna", False, t.mfma_flushes_f16_denorms,
                        _GFX9_COUNTERS, MappingProxyType({64: 8}), True, True, t.lds_bytes, t.sram_ecc)
    counters = _GFX12_COUNTERS if t.isa == GFX12 else _GFX11_COUNTERS
    return ArchInfo(t.gfx, family, t.wave_sizes, False, t.fp8, t.isa, t.workgroup_ids_in_ttmp, False, counters,
                    MappingProxyType({32: 8, 64: 4}), False, False, t.lds_bytes, t.sram_ecc)


# gfx908 (CDNA1: separate AGPR file, its own MFMA set) is not emulated.
ARCHS: Mapping[str, ArchInfo] = MappingProxyType({
    gfx: _info(t) for gfx, t in TARGETS.items() if t.family != "CDNA1" and t.instruction_tables})


def gfx_from_target(target: str) -> str:
    """`amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-` -> `gfx942`."""
    return gfx_in(target) or target


def gfx_from_e_flags(e_flags: int) -> str | None:
    """The target of an ELF's EF_AMDGPU_MACH (e_flags bits 7:0), for code objects without metadata."""
    t = target_of_elf_mach(e_flags & 0xFF)
    return t.gfx if t is not None else None


def arch_info(gfx: str) -> ArchInfo:
    try:
        return ARCHS[gfx]
    except KeyError:
        raise CodeObjectError(f"the emulator does not know target {gfx!r}; it knows "
                              + ", ".join(ARCHS)) from None
