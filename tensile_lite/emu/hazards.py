"""Wait states CDNA hardware does not enforce itself, as the emulator checks them.

A required count N means N wait states between the producing and the consuming instruction: N other
instructions, or `s_nop N-1` (each instruction is one wait state, `s_nop n` is n + 1). The emulator
counts them on the path the wave really executes (`Wave.clock`), so a kernel that relies on the
hardware to wait where it does not fails with a HazardError instead of computing garbage.

Sources (the numbers are facts; the code is ours): the "Manually inserted wait states" tables of
AMD's Vega and CDNA ISA manuals, and LLVM's AMDGPU backend, which encodes the same tables per target
(GCNHazardRecognizer: checkVMEMHazards, checkRWLaneHazards, checkVALUHazards with its gfx940-only
`hasVDecCoExecHazard` rules, checkMAIHazards90A, checkMAIVALUHazards) and the MFMA pass counts
(SISchedule.td: SIDPFullSpeedModel for gfx90a, SIDPGFX942FullSpeedModel, SIDPGFX950FullSpeedModel).
RDNA interlocks these cases in hardware (LLVM: `hasNoDataDepHazard`), so no table applies there.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import attrs

from tensile_lite.emu.arch import ArchInfo


@attrs.frozen(slots=True)
class WaitStates:
    """Required wait states of one CDNA generation; 0 where the generation has no such hazard."""

    family: str
    # a VALU writes an SGPR (or vcc) that a buffer/global/flat instruction then reads
    valu_sgpr_then_vmem: int
    # ... that v_readlane/v_writelane then uses as the lane select
    valu_sgpr_then_lane_select: int
    # a VALU writes vcc or exec, then a VALU reads src_vccz / src_execz as data
    valu_mask_then_z_source: int
    # a non-matrix VALU writes a VGPR/AGPR that an MFMA then reads (any source)
    valu_vgpr_then_mfma: int
    # a VALU writes exec, then an MFMA runs
    valu_exec_then_mfma: int
    # a store of more than 8 bytes (MUBUF without an SGPR soffset, or global/flat) is followed by a
    # VALU that overwrites its data registers: the store reads them over more than one cycle
    wide_store_data_then_valu: int
    # gfx940+ ("no interlock for VALU writing and then reading SGPRs"): a VALU reads an SGPR a
    # VALU wrote ...
    valu_sgpr_then_valu: int
    # ... v_readlane/v_readfirstlane/v_writelane run after a VALU wrote exec ...
    valu_exec_then_lane_access: int
    # ... v_readlane/v_readfirstlane read a VGPR a VALU just wrote
    valu_vgpr_then_readlane: int
    # ... a non-transcendental VALU reads the result of a transcendental one (v_exp, v_rcp, ...)
    trans_then_valu: int


_CDNA2 = WaitStates("cdna2", valu_sgpr_then_vmem=5, valu_sgpr_then_lane_select=4, valu_mask_then_z_source=5,
                    valu_vgpr_then_mfma=2,
                    valu_exec_then_mfma=4, wide_store_data_then_valu=1, valu_sgpr_then_valu=0,
                    valu_exec_then_lane_access=0, valu_vgpr_then_readlane=0, trans_then_valu=0)
_CDNA3 = attrs.evolve(_CDNA2, family="cdna3", wide_store_data_then_valu=2, valu_sgpr_then_valu=2,
                      valu_exec_then_lane_access=4, valu_vgpr_then_readlane=1, trans_then_valu=1)
_TABLES: Mapping[str, WaitStates] = MappingProxyType({
    "cdna2": _CDNA2, "cdna3": _CDNA3, "cdna4": attrs.evolve(_CDNA3, family="cdna4")})


def wait_states_for(arch: ArchInfo) -> WaitStates | None:
    """The table of a target, None where hardware interlocks every case (RDNA)."""
    return _TABLES.get(arch.family)


# ---------------------------------------------------------------------------------------------
# MFMA: results appear after the instruction's passes; until then nothing may read or overwrite them.

def mfma_passes(family: str, m: int, blocks: int, a_kind: str, f8f6f4_with_f8: bool | None = None) -> int:
    """Pass count of an MFMA (4 cycles each), as LLVM's scheduling models give it per target.

    `f8f6f4_with_f8`: for gfx950's f8f6f4 instructions, whether A or B is an 8-bit float (twice
    the passes of fp6/fp4); None for every other instruction.
    """
    if a_kind == "f64":
        if m == 4:
            return 4
        return 16 if family == "cdna4" else 8
    if m == 4:
        return 2
    if family == "cdna2":
        return 8 if m == 16 else 16
    if f8f6f4_with_f8 is not None:
        base = 4 if m == 16 else 8
        return 2 * base if f8f6f4_with_f8 else base
    # f32 inputs and the multi-block shapes run at the older rate; the rest are the doubled XDL ops
    if a_kind == "f32" or blocks > 1:
        return 8 if m == 16 else 16
    return 4 if m == 16 else 8


@attrs.frozen(slots=True)
class MatrixTiming:
    """What the hazard rules need to know about one MFMA."""

    family: str
    passes: int
    dgemm: bool  # f64 MFMA
    # gfx94x+ split non-f64 MFMAs into XDL (16-bit, 8-bit and xf32 inputs) and the f32 ones;
    # on gfx90a every non-f64 MFMA counts as XDL
    xdl: bool

    def result_read(self, memory: bool) -> int:
        """Wait states before a VALU (or, `memory`, a memory instruction) reads the result."""
        p = self.passes
        if self.dgemm:
            if p == 4:
                return 9 if memory else 6
            if memory:
                return 18
            return 19 if self.family == "cdna4" else 11
        if self.family == "cdna2" or self.xdl:
            # gfx950 added one for XDL ops of more than 2 passes
            return p + 3 + (1 if self.family == "cdna4" and p != 2 else 0)
        return p + 2

    def result_write(self) -> int:
        """Wait states before a VALU or a load overwrites the result (WAW)."""
        if self.dgemm:
            return 6 if self.passes == 4 else 11
        return self.result_read(False)

    def as_source_ab(self) -> int:
        """Wait states before a later MFMA reads the result as its A or B operand."""
        if self.dgemm:
            return 6 if self.passes == 4 else 11
        return self.result_read(False)

    def as_source_c(self, reader: MatrixTiming, same_registers: bool) -> int:
        """Wait states before MFMA `reader` reads the result as its C operand; `same_registers`: C
        is exactly this instruction's D (back-to-back accumulation, which the hardware chains)."""
        p = self.passes
        if self.family == "cdna2" and self.dgemm and not reader.dgemm:
            return 0
        if same_registers:
            if self.dgemm and reader.dgemm and p == 4:
                return 4
            return 2 if self.family != "cdna2" and p == 2 else 0
        if self.dgemm:
            if reader.xdl:
                return 0
            return 4 if p == 4 else 9
        if self.family == "cdna2":
            return p + 1 if reader.dgemm else p
        if reader.xdl and not self.xdl:
            return 0
        return p + 1 if self.xdl else p

    def c_overwrite(self) -> int:
        """Wait states before a VALU or a load overwrites a register this MFMA reads as C (WAR):
        only the XDL ops (every non-f64 op on gfx90a) read C late."""
        if self.dgemm or not self.xdl:
            return 0
        return self.passes - 1


def matrix_timing(family: str, m: int, blocks: int, a_kind: str, f8f6f4_with_f8: bool | None = None) -> MatrixTiming:
    dgemm = a_kind == "f64"
    xdl = not dgemm and (family == "cdna2" or a_kind != "f32")
    return MatrixTiming(family, mfma_passes(family, m, blocks, a_kind, f8f6f4_with_f8), dgemm, xdl)
