"""Grouped GEMM: the argument tables of argType 1 and 2 (spec/epilogue_semantics.md §4).

A grouped launch sends a 40-byte kernarg segment: the header (gemm_count | argType << 30,
internalArgs, internalArgs1, the total workgroups), the table's device address, the Synchronizer
and the workspace. Each workgroup scans the table's GEMMs in order, counting their tiles, until
it finds the GEMM its flattened id falls in (setup.find_gemm).

- argType 1 (the table the library builds): `u32 wgTable[gemm_count]` (first workgroup of each GEMM,
  which kernels skip), then one record per GEMM: exactly the bytes of its argType-0 arguments after
  the header (`abi.pack_gemm_args`), packed.
- argType 2 (hipBLASLt's `UserArguments`): one fixed struct per GEMM, whose layout depends only on
  the kernel (`user_argument_offsets`): the GEMM part in argument order with alpha and beta in
  16-byte slots, then every epilogue field whether the kernel uses it or not. For batched kernels
  without a run-time factor dimension that is hipBLASLt's 196-byte struct; `factorDim` adds 4
  bytes before `e` (spec §4.3: do not combine those kernels with hipBLASLt's struct).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping, Sequence

from tensile_lite.asm.gemm.abi import (
    AMAX_ARGUMENTS,
    HEADER_BYTES,
    SPLIT_K_ARGUMENTS,
    EpilogueArgs,
    GemmProblem,
    internal_args,
    pack_gemm_args,
    scalar_bytes,
    scalar_type,
    solution_layout,
)
from tensile_lite.asm.gemm.features import epilogue_features
from tensile_lite.errors import BuildError
from tensile_lite.model import Solution

ARG_TYPE_TABLE = 1     # the library's table in device memory (hipMemcpy'd before the launch)
ARG_TYPE_USER = 2      # hipBLASLt's device UserArguments array
SCALAR_SLOT = 16       # alpha and beta slots of a user-arguments struct
GROUPED_KERNARG_BYTES = HEADER_BYTES + 3 * 8

_EPILOGUE_SLOTS = (("AddressScaleA", 0), ("AddressScaleB", 8), ("AddressScaleC", 16), ("AddressScaleD", 24),
                   ("AddressScaleAlphaVec", 32), ("bias", 40), ("biasType", 48), ("StrideBias", 52))


def user_argument_offsets(sol: Solution) -> tuple[dict[str, int], int]:
    """(argument name -> byte offset in one user-arguments struct, the struct's size) for `sol`'s
    kernel, for every argument after the header."""
    pt = sol.problem_type
    layout = solution_layout(sol)
    out: dict[str, int] = {}
    gemm_end = None
    for placed in layout.arguments[4:]:
        name = placed.argument.name
        if name == "alpha":
            gemm_end = placed.offset - HEADER_BYTES
            break
        out[name] = placed.offset - HEADER_BYTES
    assert gemm_end is not None
    out["alpha"] = gemm_end
    if pt.use_beta:
        out["beta"] = gemm_end + SCALAR_SLOT
    base = gemm_end + 2 * SCALAR_SLOT
    out.update({name: base + off for name, off in _EPILOGUE_SLOTS})
    pos = base + 56
    if epilogue_features(pt).has_factor_dim_arg:
        out["factorDim"] = pos
        pos += 4
    out["E"] = pos
    e_strides = pt.num_indices_c - 1
    for i in range(e_strides):
        out[f"StrideE{i}"] = pos + 8 + 4 * i
    pos += 8 + 4 * e_strides
    out.update({"activationAlpha": pos, "activationBeta": pos + 4, "activationType": pos + 8})
    size = pos + 12
    # hipBLASLt's struct has no split-K or amax arguments: an argType-2 launch runs such kernels
    # unsplit (splitk.py) and without amax (amax.py)
    missing = [p.argument.name for p in layout.arguments[4:]
               if p.argument.name not in out and p.argument.name not in (*SPLIT_K_ARGUMENTS, *AMAX_ARGUMENTS)]
    if missing:
        raise BuildError(f"{', '.join(missing)} have no place in the user-arguments struct")
    return out, size


def record_bytes(sol: Solution) -> int:
    """Bytes of one argType-1 record (the arguments after the header)."""
    return solution_layout(sol).size - HEADER_BYTES


def tiles(sol: Solution, problem: GemmProblem) -> int:
    """Workgroups of one GEMM of a grouped launch (GSU 1)."""
    mt0, mt1 = sol.macro_tile
    batch = problem.batch if sol.problem_type.num_indices_c == 3 else 1
    return math.ceil(problem.m / mt0) * math.ceil(problem.n / mt1) * batch * sol.runtime.global_split_u


def pack_user_args(sol: Solution, problem: GemmProblem, buffers: Mapping[str, int], alpha: float,
                   beta: float = 0.0, *, epilogue: EpilogueArgs | None = None) -> bytes:
    """One `UserArguments` struct: the argType-0 values placed at `user_argument_offsets`, every
    field the kernel does not read left 0."""
    offsets, size = user_argument_offsets(sol)
    # the user's struct holds the real D and strides: split-K kernels run it unsplit (splitk.py)
    body = pack_gemm_args(sol, problem, buffers, alpha, beta, epilogue=epilogue, gsu=1)
    out = bytearray(size)
    for placed in solution_layout(sol).arguments[4:]:
        arg = placed.argument
        if arg.name in SPLIT_K_ARGUMENTS or arg.name in AMAX_ARGUMENTS:
            continue
        start = placed.offset - HEADER_BYTES
        value = body[start:start + arg.size]
        if arg.name in ("alpha", "beta"):
            scalar = scalar_type(sol.problem_type.compute_type)
            value = scalar_bytes(scalar, alpha if arg.name == "alpha" else beta)
        out[offsets[arg.name]:offsets[arg.name] + len(value)] = value
    return bytes(out)


def pack_grouped(sol: Solution, problems: Sequence[GemmProblem], buffers: Sequence[Mapping[str, int]],
                 alphas: Sequence[float], betas: Sequence[float], *, table_address: int,
                 arg_type: int = ARG_TYPE_TABLE, epilogues: Sequence[EpilogueArgs | None] | None = None,
                 synchronizer: int = 0, workspace: int = 0, cu_count: int = 0) -> tuple[bytes, bytes]:
    """(kernarg bytes, table bytes to place at `table_address`) of one grouped launch."""
    count = len(problems)
    if not count or not len(buffers) == len(alphas) == len(betas) == count:
        raise BuildError("a grouped launch needs one buffers/alpha/beta entry per problem, and one problem")
    if arg_type not in (ARG_TYPE_TABLE, ARG_TYPE_USER):
        raise BuildError(f"grouped launches use argType 1 or 2, not {arg_type}")
    eps = list(epilogues) if epilogues is not None else [None] * count
    per = [tiles(sol, p) for p in problems]
    if arg_type == ARG_TYPE_TABLE:
        starts = [sum(per[:i]) for i in range(count)]
        table = struct.pack(f"<{count}I", *starts) + b"".join(
            pack_gemm_args(sol, p, b, a, be, epilogue=ep)
            for p, b, a, be, ep in zip(problems, buffers, alphas, betas, eps, strict=True))
    else:
        table = b"".join(pack_user_args(sol, p, b, a, be, epilogue=ep)
                         for p, b, a, be, ep in zip(problems, buffers, alphas, betas, eps, strict=True))
    info0, info1 = internal_args(sol, cu_count=cu_count)
    kernarg = struct.pack("<IIIIQQQ", (count & 0x3FFFFFFF) | (arg_type << 30), info0, info1, sum(per),
                          table_address, synchronizer, workspace)
    return kernarg, table
