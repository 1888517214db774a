"""The 64-byte AMDHSA kernel descriptor, decoded into what dispatch and register checks need.

Layout (AMDGPUUsage, "Kernel Descriptor"): group/private segment sizes, kernarg size, the entry
offset, COMPUTE_PGM_RSRC3/1/2, kernel_code_properties and (COV5) kernarg preload.
"""

from __future__ import annotations

import struct

import attrs

from tensile_lite.emu.arch import ArchInfo
from tensile_lite.emu.errors import CodeObjectError

_LAYOUT = struct.Struct("<IIIIq20xIIIHH4x")


def _bits(value: int, lo: int, width: int) -> int:
    return (value >> lo) & ((1 << width) - 1)


@attrs.frozen(slots=True)
class KernelDescriptor:
    group_segment_fixed_size: int
    private_segment_fixed_size: int
    kernarg_size: int
    entry_byte_offset: int
    rsrc3: int
    rsrc1: int
    rsrc2: int
    code_properties: int
    kernarg_preload: int

    @classmethod
    def from_bytes(cls, raw: bytes, kernel: str) -> KernelDescriptor:
        if len(raw) != _LAYOUT.size:
            raise CodeObjectError(f"kernel descriptor {kernel}.kd has {len(raw)} bytes, not 64")
        (group, private, kernarg, _r0, entry, rsrc3, rsrc1, rsrc2, props,
         preload) = _LAYOUT.unpack(raw)
        return cls(group, private, kernarg, entry, rsrc3, rsrc1, rsrc2, props, preload)

    # compute_pgm_rsrc1
    @property
    def granulated_vgprs(self) -> int:
        return _bits(self.rsrc1, 0, 6)

    @property
    def granulated_sgprs(self) -> int:
        return _bits(self.rsrc1, 6, 4)

    @property
    def float_round_mode_32(self) -> int:
        return _bits(self.rsrc1, 12, 2)

    @property
    def float_round_mode_16_64(self) -> int:
        return _bits(self.rsrc1, 14, 2)

    @property
    def float_denorm_mode_32(self) -> int:
        return _bits(self.rsrc1, 16, 2)

    @property
    def float_denorm_mode_16_64(self) -> int:
        return _bits(self.rsrc1, 18, 2)

    # compute_pgm_rsrc2
    @property
    def private_segment_enabled(self) -> bool:
        return bool(_bits(self.rsrc2, 0, 1))

    @property
    def user_sgpr_count(self) -> int:
        return _bits(self.rsrc2, 1, 5)

    @property
    def workgroup_id_enabled(self) -> tuple[bool, bool, bool]:
        return (bool(_bits(self.rsrc2, 7, 1)), bool(_bits(self.rsrc2, 8, 1)), bool(_bits(self.rsrc2, 9, 1)))

    @property
    def workgroup_info_enabled(self) -> bool:
        return bool(_bits(self.rsrc2, 10, 1))

    @property
    def workitem_id_dims(self) -> int:
        """0: v0 = x; 1: x, y; 2: x, y, z (packed in v0 on our targets)."""
        return _bits(self.rsrc2, 11, 2)

    # kernel_code_properties: which user SGPRs precede the kernarg pointer.
    @property
    def user_sgpr_flags(self) -> dict[str, bool]:
        p = self.code_properties
        return {"private_segment_buffer": bool(p & 1), "dispatch_ptr": bool(p & 2), "queue_ptr": bool(p & 4),
                "kernarg_segment_ptr": bool(p & 8), "dispatch_id": bool(p & 16),
                "flat_scratch_init": bool(p & 32), "private_segment_size": bool(p & 64)}

    @property
    def wave32(self) -> bool:
        return bool(self.code_properties & (1 << 10))

    @property
    def kernarg_preload_dwords(self) -> int:
        return _bits(self.kernarg_preload, 0, 7)

    @property
    def kernarg_preload_offset(self) -> int:
        return _bits(self.kernarg_preload, 7, 9)

    def accum_offset(self, arch: ArchInfo) -> int | None:
        """First AGPR in the unified file (gfx90a+), None where AGPRs are separate or absent."""
        if not arch.unified_agprs:
            return None
        return (_bits(self.rsrc3, 0, 6) + 1) * 4

    def allocated_vgprs(self, arch: ArchInfo, wave_size: int) -> int:
        return (self.granulated_vgprs + 1) * arch.vgpr_granule[wave_size]

    def allocated_sgprs(self, arch: ArchInfo) -> int:
        # gfx9 encodes (count / 8) - 1 in steps of two; gfx10+ always gives a wave 106 SGPRs.
        if arch.sgprs_from_descriptor:
            return min((self.granulated_sgprs + 2) * 8, 106)
        return 106
