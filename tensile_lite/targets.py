"""The target registry: one frozen record per GPU target, the only place that lists gfx names.

Every package reads its facts from here (the assembly layer, the kernel writer, the code-object
pipeline, the emulator, the verifier) and derives its own view from the record's fields, never from
the target's name. Sources: AMD's ISA manuals (Vega/CDNA1-4, RDNA3/3.5/4), LLVM's AMDGPUUsage
("Processors", the ELF `EF_AMDGPU_MACH` values), and the facts gathered in `spec/kernel_anatomy.md`,
`spec/matrix_instructions.md` and `spec/hardware_semantics.md`.

A target ID names a processor and optional features (`gfx90a:xnack+`, `gfx942:sramecc+:xnack-`, or the
`gfx90a-xnack+` spelling of some file names); `parse_target_id` is the one parser of that syntax.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

import attrs

from tensile_lite.errors import UnknownArchitecture

# Instruction-set generations: what the assembler's mnemonics, encodings and wait counters follow.
GFX9, GFX11, GFX12 = "gfx9", "gfx11", "gfx12"
MFMA, WMMA = "mfma", "wmma"


@attrs.frozen(slots=True)
class Target:
    """One `gfx` processor."""

    gfx: str
    version: tuple[int, int, int]
    family: str                     # marketing generation: CDNA2, RDNA3.5, ...
    isa: str                        # GFX9 | GFX11 | GFX12
    matrix: str                     # MFMA (CDNA) | WMMA (RDNA)
    elf_mach: int                   # EF_AMDGPU_MACH, ELF e_flags bits 7:0
    llvm_min: int                   # first LLVM major whose AMDGPU backend knows the target
    llvm_max: int | None = None     # last one (LLVM 21 dropped gfx940/gfx941), None: still known
    lds_bytes: int = 65536          # LDS a workgroup may allocate
    # LDS the resident workgroups of one CU share (RDNA: of one WGP, the mode LLVM builds kernels for),
    # None: the same as one workgroup may allocate (CDNA); it decides how many workgroups fit side by side
    lds_pool_bytes: int | None = None
    simds: int = 4                  # SIMDs per CU (RDNA: per WGP), each running its own waves
    # gfx90a and later CDNA: VGPRs and AGPRs share one 512-entry file; the kernel descriptor says
    # where the AGPRs start (`.amdhsa_accum_offset`)
    unified_agprs: bool = False
    # SRAM-ECC-capable parts write a whole VGPR on a D16 load, zeroing the other half
    # (hardware_semantics.md §1); one code object must be right with ECC on or off
    sram_ecc: bool = False
    fp8: str | None = None          # encoding of fp8/bf8: "fnuz" (gfx94x) | "ocp" (gfx950, gfx12)
    # one L2 per XCD (gfx94x, gfx950): agent-scope handoffs write back and invalidate L2 lines
    l2_per_xcd: bool = False
    # gfx940/gfx941 need sc1 on every global store for coherence (upstream's ForceStoreSC1)
    force_store_sc1: bool = False
    # gfx90a's MFMAs flush f16/bf16 subnormal inputs and f32 outputs (matrix_instructions.md §7.4)
    mfma_flushes_f16_denorms: bool = False
    # CU count of the common part, what a library without a CUCount predicate is checked against
    default_cu_count: int | None = None
    # the GEMM kernel writer builds kernels for it
    gemm_writer: bool = True
    # the assembly layer and the emulator describe its instruction set; without that, a library for the
    # target still builds (its solutions are reported and left out, its helper code object is the no-op)
    instruction_tables: bool = True

    @property
    def cdna(self) -> bool:
        return self.matrix == MFMA

    @property
    def lds_per_cu(self) -> int:
        return self.lds_pool_bytes if self.lds_pool_bytes is not None else self.lds_bytes

    @property
    def wavefront_size(self) -> int:
        """The wave size hipBLASLt builds: 64 on CDNA, 32 (WMMA) on RDNA."""
        return 64 if self.cdna else 32

    @property
    def wave_sizes(self) -> tuple[int, ...]:
        """The wave sizes the hardware runs: gfx10+ can run either."""
        return (64,) if self.isa == GFX9 else (32, 64)

    @property
    def d16_preserves_other_half(self) -> bool:
        return not self.sram_ecc

    @property
    def workgroup_ids_in_ttmp(self) -> bool:
        """gfx12's architected SGPRs: workgroup ids arrive in ttmp9/ttmp7, not in system SGPRs."""
        return self.isa == GFX12

    def llvm_range(self) -> str:
        hi = f"..{self.llvm_max}" if self.llvm_max is not None else "+"
        return f"LLVM {self.llvm_min}{hi}"

    def supported_by_llvm(self, major: int) -> bool:
        return self.llvm_min <= major and (self.llvm_max is None or major <= self.llvm_max)


def _cdna(gfx: str, version: tuple[int, int, int], family: str, mach: int, llvm: int, **kw: object) -> Target:
    return Target(gfx, version, family, GFX9, MFMA, mach, llvm, sram_ecc=True, **kw)  # type: ignore[arg-type]


def _rdna(gfx: str, version: tuple[int, int, int], family: str, mach: int, llvm: int, **kw: object) -> Target:
    isa = GFX12 if version[0] == 12 else GFX11
    kw.setdefault("lds_pool_bytes", 128 * 1024)
    return Target(gfx, version, family, isa, WMMA, mach, llvm, **kw)  # type: ignore[arg-type]


_XCD = {"unified_agprs": True, "l2_per_xcd": True}

TARGETS: Mapping[str, Target] = MappingProxyType({t.gfx: t for t in (
    _cdna("gfx908", (9, 0, 8), "CDNA1", 0x30, 10, gemm_writer=False),
    _cdna("gfx90a", (9, 0, 10), "CDNA2", 0x3F, 13, unified_agprs=True, mfma_flushes_f16_denorms=True,
          default_cu_count=104),
    _cdna("gfx940", (9, 4, 0), "CDNA3", 0x40, 16, llvm_max=20, fp8="fnuz", force_store_sc1=True, **_XCD),
    _cdna("gfx941", (9, 4, 1), "CDNA3", 0x4B, 16, llvm_max=20, fp8="fnuz", force_store_sc1=True, **_XCD),
    _cdna("gfx942", (9, 4, 2), "CDNA3", 0x4C, 16, fp8="fnuz", default_cu_count=304, **_XCD),
    _cdna("gfx950", (9, 5, 0), "CDNA4", 0x4F, 20, lds_bytes=160 * 1024, fp8="ocp", default_cu_count=256, **_XCD),
    _rdna("gfx1100", (11, 0, 0), "RDNA3", 0x41, 16),
    _rdna("gfx1101", (11, 0, 1), "RDNA3", 0x46, 16),
    _rdna("gfx1102", (11, 0, 2), "RDNA3", 0x47, 16),
    _rdna("gfx1150", (11, 5, 0), "RDNA3.5", 0x43, 18),
    _rdna("gfx1151", (11, 5, 1), "RDNA3.5", 0x4A, 18),
    _rdna("gfx1200", (12, 0, 0), "RDNA4", 0x48, 18, fp8="ocp"),
    _rdna("gfx1201", (12, 0, 1), "RDNA4", 0x4E, 18, fp8="ocp"),
    # ROCm 7.x's newest target (rocm7_delta.md §1.5): LLVM 22 assembles it (EF_AMDGPU_MACH 0x49, read from
    # clang-22's output); its tensor data mover and MX instructions are not described here yet
    _rdna("gfx1250", (12, 5, 0), "GFX12.5", 0x49, 22, fp8="ocp", gemm_writer=False, instruction_tables=False),
)})

_TARGET_ID = re.compile(r"^(gfx[0-9a-f]{3,4})((?:[:\-](?:xnack|sramecc)[+-])*)$")
_IN_TEXT = re.compile(r"gfx[0-9a-f]{3,4}")


def parse_target_id(text: str) -> tuple[str, tuple[str, ...]]:
    """`gfx942:sramecc+:xnack-` -> ("gfx942", ("sramecc+", "xnack-")); raises UnknownArchitecture on
    anything that is not a target ID (the gfx name itself is not checked against the registry)."""
    m = _TARGET_ID.match(text.strip().lower())
    if not m:
        raise UnknownArchitecture(f"{text!r} is not a GPU target such as gfx942 or gfx90a:xnack+")
    return m.group(1), tuple(re.findall(r"(?:xnack|sramecc)[+-]", m.group(2)))


def bare_gfx(text: str) -> str:
    """The processor of a target ID: `gfx90a:xnack+` -> `gfx90a` (we always build the "any" variant)."""
    return parse_target_id(text)[0]


def gfx_in(text: str) -> str | None:
    """The first gfx name inside a longer string (`amdgcn-amd-amdhsa--gfx942:sramecc+`), if any."""
    m = _IN_TEXT.search(text.lower())
    return m.group(0) if m else None


def get_target(name: str, where: str = "") -> Target:
    """The record of a target (features ignored); UnknownArchitecture names `where` it came from."""
    try:
        gfx = bare_gfx(name)
    except UnknownArchitecture as exc:
        raise UnknownArchitecture(f"{where}: {exc}" if where else str(exc)) from None
    target = TARGETS.get(gfx)
    if target is None:
        origin = f"{where}: " if where else ""
        raise UnknownArchitecture(f"{origin}unknown GPU target {name!r}; tensile-lite knows {', '.join(TARGETS)}")
    return target


def target_of_elf_mach(mach: int) -> Target | None:
    for t in TARGETS.values():
        if t.elf_mach == mach:
            return t
    return None
