"""One frozen record per GPU target: everything the assembly layer needs to know about it.

Sources: AMD's ISA manuals (Vega/CDNA1-4, RDNA3/3.5/4), LLVM's AMDGPUUsage and its assembler
(each value below is exercised by tests/asm against the real assembler), and the facts gathered in
`spec/kernel_anatomy.md` and `spec/matrix_instructions.md`. Nothing outside this module asks
"which gfx is this?": callers read fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import attrs

from tensile_lite.asm.errors import UnsupportedInstruction
from tensile_lite.asm.matrix import MatrixInstruction, matrix_instructions_for
from tensile_lite.asm.operands import EXEC, EXEC_LO, VCC, VCC_LO, Special
from tensile_lite.errors import UnknownArchitecture
from tensile_lite.targets import GFX11, GFX12, TARGETS, Target, get_target

# Memory events an instruction can leave outstanding; `Arch.wait_events` says which counter
# tracks each one.
LOAD = "load"     # vector memory read (and atomics that return a value)
STORE = "store"   # vector memory write (and atomics without return)
LDS = "lds"       # ds_* instructions
SMEM = "smem"     # scalar memory loads
MEM_EVENTS = (LOAD, STORE, LDS, SMEM)


@attrs.frozen(slots=True)
class Hazards:
    """Wait states software must insert (`s_nop n` gives n+1); None where we hold no documented value.

    gfx9/CDNA values: the "Manually inserted wait states" table of AMD's Vega and CDNA ISA manuals.
    `trans_use`: gfx94x/gfx950 need one wait state between a transcendental op (v_exp, v_rcp, ...)
    and a use of its result (upstream's `TransOpWait` capability).
    """

    valu_sgpr_then_vmem: int | None
    valu_vgpr_then_dpp: int | None
    valu_exec_then_dpp: int | None
    valu_sgpr_then_lane_select: int | None
    trans_use: int


@attrs.frozen(slots=True)
class Arch:
    """A GPU target as the assembly layer sees it."""

    name: str
    version: tuple[int, int, int]
    family: str
    tags: frozenset[str] = attrs.field(repr=False)
    wavefront_size: int
    max_sgprs: int
    max_vgprs: int
    max_agprs: int
    # gfx90a and later CDNA: AGPRs follow the VGPRs in one 512-entry file; the kernel descriptor
    # says where they start (`.amdhsa_accum_offset`, a multiple of 4 in 4..256).
    unified_vgprs: bool
    aligned_vgpr_tuples: bool      # gfx90a+: 64-bit and wider VGPR/AGPR tuples start even
    lds_bytes: int
    wait_counters: Mapping[str, int] = attrs.field(eq=False, repr=False)  # counter -> max value
    wait_events: Mapping[str, str] = attrs.field(eq=False, repr=False)    # event -> counter
    srd_word3: int                  # buffer resource word 3 for raw 32-bit-format buffers
    workgroup_id_source: str        # "sgpr": system SGPRs; "ttmp": ttmp9/ttmp7 (gfx12)
    cache_bits: Mapping[str, str] = attrs.field(eq=False, repr=False)  # logical bit -> spelling
    temporal_hints: bool            # gfx12 spells cache policy as th:/scope:
    constant_bus_limit: int
    vop3_literal: bool
    null_register: bool
    smem_offset: tuple[int, int]
    mubuf_offset: tuple[int, int]
    global_offset: tuple[int, int]
    mubuf_soffset_inline: bool      # gfx12 takes only an SGPR, m0 or null as MUBUF soffset
    fp8_format: str | None          # "fnuz" (gfx94x) | "ocp" (gfx950, gfx12) | None
    dpp_row_bcast: bool             # row_bcast:15/31 exist on gfx9 only
    hazards: Hazards = attrs.field(repr=False)
    matrix: tuple[MatrixInstruction, ...] = attrs.field(eq=False, repr=False)
    # gfx940/gfx941 need sc1 on every global store for coherence (upstream's ForceStoreSC1 arch
    # capability; gfx942 and later do not)
    force_store_sc1: bool = False
    # The command processor can copy leading kernarg dwords into user SGPRs (descriptor field
    # kernarg_preload; AMDGPUUsage "Preloaded Kernel Arguments"). LLVM accepts the directives on
    # gfx90a too; hipBLASLt enables the feature on gfx940 and later only, so do we.
    kernarg_preload: bool = False
    # A D16 load (`*_d16`, `*_d16_hi`) leaves the other half of its VGPR as it was. Not so on the
    # SRAM-ECC-capable CDNA parts, which write the other half with zeros (spec hardware_semantics.md
    # §1; LLVM's d16PreservesUnusedBits), and one code object must work with ECC on or off.
    d16_preserves_other_half: bool = False

    def __reduce__(self) -> tuple[object, tuple[str, int]]:
        # one record per target and wave size: unpickling looks it up again (its tables are read-only proxies)
        return get_arch, (self.name, self.wavefront_size)

    @property
    def lane_mask_width(self) -> int:
        """SGPRs in a lane mask (vcc, exec, v_cmp results): 2 in wave64, 1 in wave32."""
        return self.wavefront_size // 32

    @property
    def vcc(self) -> Special:
        return VCC if self.wavefront_size == 64 else VCC_LO

    @property
    def exec(self) -> Special:
        return EXEC if self.wavefront_size == 64 else EXEC_LO

    @property
    def has_agprs(self) -> bool:
        return self.max_agprs > 0

    @property
    def has_wave32(self) -> bool:
        """gfx10+ can run either wavefront size; the kernel descriptor must say which."""
        return self.version[0] >= 10

    @property
    def waitcnt_split(self) -> bool:
        """gfx12 replaced s_waitcnt by one instruction per counter."""
        return "loadcnt" in self.wait_counters

    def matrix_instruction(self, name: str) -> MatrixInstruction:
        """The MFMA/WMMA with this canonical name, or UnsupportedInstruction naming the target."""
        for mi in self.matrix:
            if mi.name == name:
                return mi
        raise UnsupportedInstruction(f"{name} is not available on {self.name}")

    def find_matrix(self, acc_type: str, a_type: str, m: int, n: int, k: int, blocks: int = 1,
                    b_type: str | None = None) -> MatrixInstruction:
        """The matrix instruction for a shape and types (as logic files give MatrixInstruction)."""
        b_type = b_type or a_type
        for mi in self.matrix:
            if ((mi.m, mi.n, mi.k, mi.blocks) == (m, n, k, blocks) and mi.acc_type == acc_type
                    and mi.a_type == a_type and mi.b_type == b_type):
                return mi
        raise UnsupportedInstruction(
            f"no {acc_type} <- {a_type}x{b_type} matrix instruction of shape {m}x{n}x{k} "
            f"with {blocks} block(s) on {self.name}")


_GFX9_HAZARDS = Hazards(valu_sgpr_then_vmem=5, valu_vgpr_then_dpp=2, valu_exec_then_dpp=5,
                        valu_sgpr_then_lane_select=4, trans_use=0)
_GFX94_HAZARDS = attrs.evolve(_GFX9_HAZARDS, trans_use=1)
_RDNA_HAZARDS = Hazards(None, None, None, None, 0)

_WAIT_GFX9 = MappingProxyType({"vmcnt": 63, "expcnt": 7, "lgkmcnt": 15})
_EVENTS_GFX9 = MappingProxyType({LOAD: "vmcnt", STORE: "vmcnt", LDS: "lgkmcnt", SMEM: "lgkmcnt"})
# gfx10/11 count stores separately (vscnt) and widened lgkmcnt to 6 bits.
_WAIT_GFX11 = MappingProxyType({"vmcnt": 63, "expcnt": 7, "lgkmcnt": 63, "vscnt": 63})
_EVENTS_GFX11 = MappingProxyType({LOAD: "vmcnt", STORE: "vscnt", LDS: "lgkmcnt", SMEM: "lgkmcnt"})
# gfx12: one counter per event class; kmcnt is 5 bits.
_WAIT_GFX12 = MappingProxyType({"loadcnt": 63, "storecnt": 63, "dscnt": 63, "kmcnt": 31, "expcnt": 7})
_EVENTS_GFX12 = MappingProxyType({LOAD: "loadcnt", STORE: "storecnt", LDS: "dscnt", SMEM: "kmcnt"})

_CACHE_GFX9 = MappingProxyType({"glc": "glc", "slc": "slc"})
_CACHE_GFX94 = MappingProxyType({"glc": "sc0", "slc": "sc1", "nt": "nt"})  # upstream's mapping
_CACHE_GFX11 = MappingProxyType({"glc": "glc", "slc": "slc", "dlc": "dlc"})
_CACHE_GFX12: Mapping[str, str] = MappingProxyType({})

# Buffer resource word 3 (bits 96..127) for a raw buffer of 32-bit elements:
# gfx9 DATA_FORMAT=4 (32) at bit 15; gfx10/11 FORMAT=4 at bit 12, RESOURCE_LEVEL=1 at bit 24,
# OOB_SELECT=3 at bit 28; gfx12 FORMAT=32 at bit 12, OOB_SELECT=3 (RDNA3/4 ISA manuals, "Buffer
# Resource"; the same values upstream writes as Srd127_96).
_SRD_GFX9 = 4 << 15
_SRD_GFX11 = (4 << 12) | (1 << 24) | (3 << 28)
_SRD_GFX12 = (32 << 12) | (3 << 28)


def _tags(t: Target) -> frozenset[str]:
    """The instruction table's tags of a target: its name, its generation and the ranges it is in."""
    if t.cdna:
        tags = {"all", "gfx9", "cdna", t.gfx}
        if t.version >= (9, 0, 10):
            tags.add("gfx90a+")
        if t.version >= (9, 4, 0):
            tags.add("gfx94x+")
            if t.version[:2] == (9, 4):
                tags.add("gfx94x")
        return frozenset(tags)
    tags = {"all", "rdna", "gfx11+", t.gfx, t.isa}
    if t.isa == GFX11:
        tags.add(f"gfx{t.version[0]}{t.version[1]}x")  # gfx110x, gfx115x
    return frozenset(tags)


def _cdna(t: Target) -> Arch:
    tags = _tags(t)
    gfx94_plus = "gfx94x+" in tags
    return Arch(
        name=t.gfx, version=t.version, family=t.family, tags=tags, wavefront_size=t.wavefront_size,
        # s0..s101 are addressable on gfx9; vcc, flat_scratch and xnack_mask sit above them.
        max_sgprs=102, max_vgprs=256, max_agprs=256, unified_vgprs=t.unified_agprs,
        aligned_vgpr_tuples=t.unified_agprs, lds_bytes=t.lds_bytes, wait_counters=_WAIT_GFX9,
        wait_events=_EVENTS_GFX9, srd_word3=_SRD_GFX9, workgroup_id_source="sgpr",
        cache_bits=_CACHE_GFX94 if gfx94_plus else _CACHE_GFX9, temporal_hints=False, constant_bus_limit=1,
        vop3_literal=False, null_register=False, smem_offset=(-(1 << 20), (1 << 20) - 1), mubuf_offset=(0, 4095),
        global_offset=(-4096, 4095), mubuf_soffset_inline=True, fp8_format=t.fp8, dpp_row_bcast=True,
        hazards=_GFX94_HAZARDS if gfx94_plus else _GFX9_HAZARDS, matrix=matrix_instructions_for(tags),
        force_store_sc1=t.force_store_sc1, kernarg_preload=gfx94_plus,
        d16_preserves_other_half=t.d16_preserves_other_half)


def _rdna(t: Target) -> Arch:
    tags = _tags(t)
    gfx12 = t.isa == GFX12
    return Arch(
        name=t.gfx, version=t.version, family=t.family, tags=tags, wavefront_size=t.wavefront_size,
        max_sgprs=106, max_vgprs=256, max_agprs=0, unified_vgprs=False, aligned_vgpr_tuples=False,
        lds_bytes=t.lds_bytes, wait_counters=_WAIT_GFX12 if gfx12 else _WAIT_GFX11,
        wait_events=_EVENTS_GFX12 if gfx12 else _EVENTS_GFX11,
        srd_word3=_SRD_GFX12 if gfx12 else _SRD_GFX11,
        # gfx12 keeps the 3-D grid and delivers the ids in ttmp9 / ttmp7 (spec kernel_anatomy §1.6).
        workgroup_id_source="ttmp" if t.workgroup_ids_in_ttmp else "sgpr",
        cache_bits=_CACHE_GFX12 if gfx12 else _CACHE_GFX11, temporal_hints=gfx12,
        constant_bus_limit=2, vop3_literal=True, null_register=True,
        smem_offset=(-(1 << 23), (1 << 23) - 1) if gfx12 else (-(1 << 20), (1 << 20) - 1),
        mubuf_offset=(0, (1 << 23) - 1) if gfx12 else (0, 4095),
        global_offset=(-(1 << 23), (1 << 23) - 1) if gfx12 else (-4096, 4095),
        mubuf_soffset_inline=not gfx12, fp8_format=t.fp8, dpp_row_bcast=False,
        hazards=_RDNA_HAZARDS, matrix=matrix_instructions_for(tags),
        d16_preserves_other_half=t.d16_preserves_other_half)


ARCHS: Mapping[str, Arch] = MappingProxyType({
    gfx: _cdna(t) if t.cdna else _rdna(t) for gfx, t in TARGETS.items() if t.instruction_tables})


# gfx10+ targets run in the other wave size too (wave64 on RDNA): its lane masks are SGPR pairs
_OTHER_WAVE: Mapping[tuple[str, int], Arch] = MappingProxyType({
    (gfx, wave): attrs.evolve(a, wavefront_size=wave) for gfx, a in ARCHS.items()
    for wave in TARGETS[gfx].wave_sizes if wave != a.wavefront_size})


def get_arch(name: str, wave: int | None = None) -> Arch:
    """The record of a target (`gfx942`; target-ID features such as `:xnack+` are ignored), in wave size
    `wave` (None: the target's usual one, the registry's `wavefront_size`)."""
    target = get_target(name)
    arch = ARCHS.get(target.gfx)
    if arch is None:
        raise UnknownArchitecture(f"{target.gfx}: the assembler layer does not describe its instruction set yet")
    if wave is None or wave == arch.wavefront_size:
        return arch
    other = _OTHER_WAVE.get((target.gfx, wave))
    if other is None:
        raise UnknownArchitecture(f"{target.gfx} does not run wave{wave}")
    return other
