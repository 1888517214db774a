"""The 16-byte header the runtime puts before every GEMM kernel's arguments (KernArgsVersion 2,
spec/kernel_anatomy.md §1.5): gemm_count | argType << 30, internalArgs, internalArgs1, numWorkGroups."""

from __future__ import annotations

import struct

from tensile_lite.library import derived
from tensile_lite.model import Solution

HEADER_BYTES = 16
ARG_TYPE_INLINE = 0   # the arguments follow the header in the kernarg segment


def runtime_gsu(sol: Solution, gsu: int | None = None) -> int:
    """The GSU of one call: the user's override when given (> 0), else the solution's."""
    return gsu if gsu is not None and gsu > 0 else sol.runtime.global_split_u


def internal_args(sol: Solution, *, cu_count: int = 0, gsu: int | None = None) -> tuple[int, int]:
    """(internalArgs, internalArgs1) as the runtime derives them from the solution's library entry;
    `gsu` is the user's GSU override, `cu_count` fills a WGMXCCG of -1."""
    rt = sol.runtime
    stagger = ((derived.stagger_u_mapping(sol) & 0x7) << 13) | ((derived.stagger_stride_shift(sol) & 0x1F) << 8) \
        | (derived.stagger_u(sol) & 0xFF)
    info0 = (stagger << 16) | (int(rt.global_split_u_coalesced) << 15) \
        | (int(rt.global_split_u_wgm_round_robin) << 14) | (runtime_gsu(sol, gsu) & 0x3FFF)
    group = rt.workgroup_mapping_xcc_group
    if group == -1 and rt.workgroup_mapping_xcc > 1:
        group = cu_count
    info1 = ((group & 0x3FF) << 22) | ((rt.workgroup_mapping_xcc & 0x3F) << 16) | (rt.workgroup_mapping & 0xFFFF)
    return info0 & 0xFFFFFFFF, info1 & 0xFFFFFFFF


def pack_header(gemm_count: int, arg_type: int, info: tuple[int, int], workgroups: int) -> bytes:
    return struct.pack("<IIII", (gemm_count & 0x3FFFFFFF) | (arg_type << 30), info[0], info[1], workgroups)
