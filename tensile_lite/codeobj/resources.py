"""What a built kernel occupies, read back from its code object, and the occupancy figure ROCm 7.x's
runtime ranks solutions by (`sizeMapping.CUOccupancy`).

Upstream's kernel writer computes that figure from its register pools and LDS at the end of code
generation (`KernelWriterAssembly.checkResources` -> `getOccupancy`, rocm-libraries @10b03bbf); we take the
same inputs from the code object as linked (metadata and kernel descriptor), so the figure describes the
kernel the library really holds, ours or a custom one.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from tensile_lite.codeobj.elf import CodeObjectInfo, KernelInfo
from tensile_lite.emu.descriptor import KernelDescriptor
from tensile_lite.targets import Target

# The ranking model's constants (upstream's, the same for every target): at most 10 resident waves per
# SIMD, counted in 256-thread workgroup units; 800 SGPRs per SIMD; LDS allocated in 256-byte blocks;
# VGPRs in blocks of 4 from a 256-entry file, or of 8 from the 512-entry file gfx90a+ shares with AGPRs.
MAX_WAVES = 10
WORKGROUP_UNIT = 256
SGPR_FILE = 800
LDS_BLOCK = 256
VGPR_FILE, VGPR_BLOCK = 256, 4
UNIFIED_FILE, UNIFIED_BLOCK = 512, 8


@attrs.frozen(slots=True)
class KernelResources:
    threads: int     # workgroup size (.max_flat_workgroup_size)
    vgprs: int       # architectural VGPRs (.vgpr_count)
    # accumulation registers; in a unified file, what the descriptor allocates beyond the VGPRs' 8-block
    agprs: int
    sgprs: int       # .sgpr_count
    lds_bytes: int   # .group_segment_fixed_size


def _resources(kernel: KernelInfo, target: Target) -> KernelResources:
    meta = kernel.metadata
    vgprs = int(meta.get(".vgpr_count", 0))
    agprs = int(meta.get(".agpr_count", 0))
    if target.unified_agprs and len(kernel.descriptor) >= 64:
        # the descriptor's VGPR allocation (8-register granules on these wave64 targets) covers both kinds
        allocated = (KernelDescriptor.from_bytes(kernel.descriptor, kernel.name).granulated_vgprs + 1) \
            * UNIFIED_BLOCK
        agprs = max(agprs, allocated - _up(vgprs, UNIFIED_BLOCK))
    return KernelResources(int(meta.get(".max_flat_workgroup_size", 256)), vgprs, agprs,
                           int(meta.get(".sgpr_count", 0)), int(meta.get(".group_segment_fixed_size", 0)))


def kernel_resources(info: CodeObjectInfo, target: Target) -> Mapping[str, KernelResources]:
    """Kernel name -> its resources, for every kernel of a code object for `target` that has metadata."""
    return {k.name: _resources(k, target) for k in info.kernels if k.metadata}


def _up(n: int, block: int) -> int:
    return -(-n // block) * block


def _register_limit(count: int, block: int, file: int, units: int, cap: int) -> int:
    if count <= 0:
        return cap
    need = _up(count, block) * units
    return 0 if need > file else min(file // need, cap)


def runtime_occupancy(res: KernelResources, target: Target) -> int:
    """Waves per SIMD the kernel's registers and LDS allow, in 256-thread workgroup units (so for a
    256-thread workgroup: workgroups per CU), at least 1: a kernel that assembled runs, and the runtime
    treats anything lower as 1."""
    units = -(-max(res.threads, WORKGROUP_UNIT) // WORKGROUP_UNIT)
    cap = MAX_WAVES // units
    if target.unified_agprs:
        regs = _register_limit(_up(res.vgprs, UNIFIED_BLOCK) + res.agprs, UNIFIED_BLOCK, UNIFIED_FILE, units, cap)
    else:
        regs = min(_register_limit(res.vgprs, VGPR_BLOCK, VGPR_FILE, units, cap),
                   _register_limit(res.agprs, VGPR_BLOCK, VGPR_FILE, units, cap))
    lds = target.lds_bytes // _up(min(res.lds_bytes, target.lds_bytes), LDS_BLOCK) if res.lds_bytes else cap
    sgprs = SGPR_FILE // res.sgprs if res.sgprs else cap
    return max(1, min(cap, regs, lds, sgprs))
