"""What each GPU target needs from the toolchain: one declarative table, no `if arch ==` elsewhere.

The LLVM bounds are what the AMDGPU backend documents (AMDGPUUsage, "Processors"); the probe in
`probe.py` checks them against the toolchain actually found, so a wrong row here shows up as a probe
finding rather than as a silent mis-build.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

import attrs

from tensile_lite.errors import ToolchainError


@attrs.frozen(slots=True)
class TargetInfo:
    """One `gfx` processor as the code-object pipeline sees it."""

    gfx: str
    wavefront_size: int
    min_llvm_major: int
    # LLVM 21 dropped gfx940/gfx941 (folded into gfx942); None means still supported.
    max_llvm_major: int | None = None
    family: str = ""
    # gfx90a and later CDNA parts share one VGPR/AGPR file, so every kernel descriptor must say
    # where the AGPRs start (`.amdhsa_accum_offset`); the assembler rejects it elsewhere.
    unified_agprs: bool = False

    @property
    def wave64(self) -> bool:
        return self.wavefront_size == 64

    def llvm_range(self) -> str:
        hi = f"..{self.max_llvm_major}" if self.max_llvm_major is not None else "+"
        return f"LLVM {self.min_llvm_major}{hi}"

    def supported_by_major(self, major: int) -> bool:
        if major < self.min_llvm_major:
            return False
        return self.max_llvm_major is None or major <= self.max_llvm_major


def _t(gfx: str, wave: int, lo: int, hi: int | None = None, family: str = "",
       unified: bool = False) -> tuple[str, TargetInfo]:
    return gfx, TargetInfo(gfx, wave, lo, hi, family, unified)


TARGETS: Mapping[str, TargetInfo] = MappingProxyType(dict([
    _t("gfx908", 64, 10, family="CDNA1"),
    _t("gfx90a", 64, 13, family="CDNA2", unified=True),
    _t("gfx940", 64, 16, 20, family="CDNA3", unified=True),
    _t("gfx941", 64, 16, 20, family="CDNA3", unified=True),
    _t("gfx942", 64, 16, family="CDNA3", unified=True),
    _t("gfx950", 64, 20, family="CDNA4", unified=True),
    _t("gfx1100", 32, 16, family="RDNA3"),
    _t("gfx1101", 32, 16, family="RDNA3"),
    _t("gfx1102", 32, 16, family="RDNA3"),
    _t("gfx1150", 32, 18, family="RDNA3.5"),
    _t("gfx1151", 32, 18, family="RDNA3.5"),
    _t("gfx1200", 32, 18, family="RDNA4"),
    _t("gfx1201", 32, 18, family="RDNA4"),
]))

_FEATURES = re.compile(r"[:\-](xnack|sramecc)[+-]")


def bare_gfx(arch: str) -> str:
    """`gfx90a:xnack+` or `gfx90a-xnack+` -> `gfx90a` (we always build the target-ID "any" variant)."""
    return _FEATURES.sub("", arch.strip()).lower()


def target_info(arch: str) -> TargetInfo:
    """The table row for an arch (features stripped), or a ToolchainError listing what we know."""
    gfx = bare_gfx(arch)
    try:
        return TARGETS[gfx]
    except KeyError:
        known = ", ".join(TARGETS)
        raise ToolchainError(f"unknown GPU target {arch!r}; tensile-lite knows {known}") from None
