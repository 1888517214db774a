"""The kernel arguments the runtime packs for one call, driven by the `.dat` entry's
`internalArgsSupport` exactly as hipBLASLt's `ContractionSolution::kernelArgs` does.

The body (sizes, pointers, strides, alpha, beta, the epilogue's arguments) comes from the host's packer
(`tensile_lite.host.pack_kernel_args`), written apart from the kernel writer. The header depends on what the library declares:
- version >= 1: gemm_count, internalArgs, internalArgs1, numWorkGroups (16 bytes);
  version 0: gemm_count and internalArgs only (8 bytes);
- internalArgs1 carries WorkGroupMapping alone in version 1, WGM | WGMXCC << 16 | WGMXCCG << 22 in
  version 2, and 0 when the library does not declare WGM support;
- GSUC / GSUWGMRR bits only from version 2; StaggerU bits only with StaggerU support;
- GSU (bits 0-13) is the solution's, or the user's override when the library declares `gsu` support
  (a call's `gsu` argument stands for that override).
So a library that declares something its kernel does not implement is run the way the runtime would
run it, and fails.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence

from tensile_lite.errors import TensileLiteError
from tensile_lite.host import ARG_TYPE_INLINE, ARG_TYPE_TABLE, EpilogueArgs, GemmProblem, pack_kernel_args
from tensile_lite.host import pack_grouped as host_grouped
from tensile_lite.host.args import layout as host_layout
from tensile_lite.targets import get_target
from tensile_lite.verify.errors import NotVerifiable
from tensile_lite.verify.mapping import TileOrder
from tensile_lite.verify.runtime_view import RuntimeSolution

_HEADER_V2_ONLY = ("internalArgs1", "numWorkGroups")


def _support(rs: RuntimeSolution, key: str, default: object) -> object:
    return rs.internal_support.get(key, default)


def version(rs: RuntimeSolution) -> int:
    return int(_support(rs, "version", 2))  # type: ignore[call-overload]


def launch_gsu(rs: RuntimeSolution, gsu: int | None = None) -> int:
    """The GSU of a call asking for `gsu` (None: the solution's): the override only when the library
    lets the runtime override GSU."""
    own = int(rs.size_mapping.get("globalSplitU", 1))
    if gsu is None or gsu <= 0 or not _support(rs, "gsu", True):
        return own
    return gsu


def header_words(rs: RuntimeSolution, gsu: int | None = None) -> tuple[int, int]:
    """(internalArgs, internalArgs1) as the runtime computes them from the entry, for a call asking
    for GSU `gsu` (see launch_gsu)."""
    sm, v = rs.size_mapping, version(rs)
    wgm = int(sm.get("workGroupMapping", 1))
    gsu = launch_gsu(rs, gsu)
    info0 = info1 = 0
    if _support(rs, "wgm", True):
        if v == 0:
            info0 |= (min(wgm, 255) & 0xFF) << 8
            gsu = min(gsu, 255)
        elif v == 1:
            info1 = wgm & 0xFFFFFFFF
        else:
            xcc = int(sm.get("workGroupMappingXCC", 1))
            group = int(sm.get("workGroupMappingXCCGroup", -1))
            if xcc > 1 and group == -1:
                # the device the verifier stands for: the target's common part
                group = get_target(rs.solution.arch).default_cu_count or 0
            info1 = ((group << 22) | (xcc << 16) | (wgm & 0xFFFF)) & 0xFFFFFFFF
    if v >= 2:
        info0 |= int(bool(sm.get("globalSplitUCoalesced"))) << 15
        info0 |= int(bool(sm.get("globalSplitUWorkGroupMappingRoundRobin"))) << 14
    info0 |= gsu & 0x3FFF
    if _support(rs, "staggerU", True):
        stagger = (int(sm.get("staggerUMapping", 0)) << 13) | ((int(sm.get("staggerStrideShift", 0)) << 8) & 0x1F00) \
            | (int(sm.get("staggerU", 0)) & 0xFF)
        info0 |= stagger << 16
    return info0 & 0xFFFFFFFF, info1


def layout(rs: RuntimeSolution) -> list[tuple[str, int, int]]:
    """(runtime name, offset, size) of every argument the runtime appends, in order."""
    if not _support(rs, "useUniversalArgs", True):
        raise NotVerifiable("the library declares the legacy argument layout (useUniversalArgs false)")
    try:
        args = [(name, size) for name, _, size in host_layout(rs.solution)]
    except TensileLiteError as exc:
        raise NotVerifiable(exc.one_line()) from None
    if version(rs) == 0:
        args = [a for a in args if a[0] not in _HEADER_V2_ONLY]
    out, offset = [], 0
    for name, size in args:
        out.append((name, offset, size))
        offset += size
    return out


def pack(rs: RuntimeSolution, problem: GemmProblem, buffers: Mapping[str, int], alpha: float,
         beta: float, epilogue: EpilogueArgs | None = None, gsu: int | None = None, *, gemm_count: int = 1,
         arg_type: int = ARG_TYPE_INLINE) -> bytes:
    """The kernarg bytes the runtime sends for this call (`buffers` also holds the epilogue's pointers,
    by `host.epilogue.POINTERS`' keys, and a split-K call's 'workspace' and 'synchronizer'); `gsu`
    is the user's GSU override (see launch_gsu). `gemm_count` and `arg_type` go into the first header
    word as given (a test may make the header claim what the body is not)."""
    gsu = launch_gsu(rs, gsu)
    try:
        blob = pack_kernel_args(rs.solution, problem, buffers, alpha, beta, epilogue=epilogue, gsu=gsu,
                                gemm_count=gemm_count, arg_type=arg_type, own_split_strides=rs.own_split_strides)
    except TensileLiteError as exc:
        raise NotVerifiable(f"kernel arguments cannot be packed: {exc.one_line()}") from None
    layout(rs)  # the legacy layout is not packed
    info0, info1 = header_words(rs, gsu)
    if version(rs) == 0:
        return blob[:4] + struct.pack("<I", info0) + blob[16:]
    return blob[:4] + struct.pack("<II", info0, info1) + blob[12:]


def pack_grouped(rs: RuntimeSolution, problems: Sequence[GemmProblem], buffers: Sequence[Mapping[str, int]],
                 alphas: Sequence[float], betas: Sequence[float], epilogues: Sequence[EpilogueArgs | None],
                 *, arg_type: int = ARG_TYPE_TABLE, table_address: int = 0) -> tuple[bytes, bytes]:
    """(kernarg bytes, table bytes to place at `table_address`) of one grouped launch: the host's
    records (`host.pack_grouped`), with the header words the runtime derives from the entry."""
    try:
        kernarg, table = host_grouped(rs.solution, problems, buffers, alphas, betas, table_address=table_address,
                                      arg_type=arg_type, epilogues=epilogues)
    except TensileLiteError as exc:
        raise NotVerifiable(f"grouped arguments cannot be packed: {exc.one_line()}") from None
    return kernarg[:4] + struct.pack("<II", *header_words(rs)) + kernarg[12:], table


def tile_order(rs: RuntimeSolution) -> TileOrder:
    """The tile order the runtime's arguments ask for (spec/epilogue_semantics.md §6.1)."""
    info0, info1 = header_words(rs)
    v = version(rs)
    if v >= 2:
        return TileOrder.from_info1(info1)
    wgm = (info0 >> 8) & 0xFF if v == 0 else info1 - (1 << 32) if info1 & 0x80000000 else info1
    return TileOrder("WorkGroupMapping", wgm)
