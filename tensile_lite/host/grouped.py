"""A grouped launch's arguments (spec/epilogue_semantics.md §4): the 40-byte kernarg segment (header,
the table's device address, Synchronizer, workspace) and the table it points to.

- argType 1, the table the library builds: `u32 wgTable[gemm_count]` (each GEMM's first workgroup),
  then each GEMM's argType-0 arguments after the header, packed (args.pack_gemm_args).
- argType 2, hipBLASLt's `UserArguments`: one fixed struct per GEMM (`user_struct`).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence

import attrs

from tensile_lite.errors import BuildError
from tensile_lite.host import values
from tensile_lite.host.args import gemm_fields, pack_gemm_args
from tensile_lite.host.call import EpilogueArgs, GemmProblem
from tensile_lite.host.epilogue import FACTOR_DIM_RUNTIME
from tensile_lite.host.grid import tiles
from tensile_lite.host.header import internal_args, pack_header
from tensile_lite.model import ProblemType, Solution

ARG_TYPE_TABLE = 1     # the library's table in device memory (copied there before the launch)
ARG_TYPE_USER = 2      # hipBLASLt's device UserArguments array
SCALAR_SLOT = 16       # alpha[16] and beta[16] of a UserArguments struct
GROUPED_KERNARG_BYTES = 16 + 3 * 8
_SCALE_POINTERS = ("scaleA", "scaleB", "scaleC", "scaleD", "scaleAlphaVec")


@attrs.frozen(slots=True)
class UserStruct:
    """Where each field sits in one UserArguments struct (by the runtime's argument names) and its size."""

    offsets: Mapping[str, int]
    size: int


def user_struct(pt: ProblemType) -> UserStruct:
    """hipBLASLt's `UserArguments` (196 bytes for a batched problem type): sizes, d/c/a/b, the strides,
    alpha and beta in 16-byte slots, the five scale pointers, bias, biasType, the reserved word the
    kernel reads as strideBias, e and its strides, two float activation values and activationType.
    Problem types with a run-time factor dimension extend it with `factorDim` before `e` (spec §4.3 #2:
    the C++ struct has no such field; our kernels and this host agree on the extension)."""
    out: dict[str, int] = {}
    pos = 0
    for i in range(pt.num_indices_c + 1):
        out[f"size_{i}"] = pos
        pos += 4
    for name in "dcab":
        out[name] = pos
        pos += 8
    ranks = {"D": pt.num_indices_c, "C": pt.num_indices_c, "A": len(pt.index_assignments_a),
             "B": len(pt.index_assignments_b)}
    for tensor in "DCAB":
        for i in range(1, ranks[tensor]):
            out[f"stride{tensor}{i}"] = pos
            pos += 4
    out["alpha"], out["beta"] = pos, pos + SCALAR_SLOT
    pos += 2 * SCALAR_SLOT
    for name in (*_SCALE_POINTERS, "bias"):
        out[name] = pos
        pos += 8
    out["bias_type"], out["strideBias"] = pos, pos + 4
    pos += 8
    if FACTOR_DIM_RUNTIME in (pt.use_scale_alpha_vec, pt.use_bias):
        out["factorDim"] = pos
        pos += 4
    out["e"] = pos
    pos += 8
    for i in range(1, pt.num_indices_c):
        out[f"strideE{i}"] = pos
        pos += 4
    out["activation_0"], out["activation_1"], out["activationType"] = pos, pos + 4, pos + 8
    return UserStruct(out, pos + 12)


# argType-0 arguments a UserArguments struct has no place for: a grouped user launch runs split-K
# kernels unsplit and without amax
_NOT_IN_STRUCT = frozenset({"dstD", "Synchronizer", "GSUSync", "AddrAmaxOut", "AmaxWS", "AmaxSync"})


def pack_user_args(sol: Solution, problem: GemmProblem, buffers: Mapping[str, int], alpha: float,
                   beta: float = 0.0, *, epilogue: EpilogueArgs | None = None) -> bytes:
    """One UserArguments struct for a GEMM: each argument of the call at its struct offset, every other
    field 0."""
    pt = sol.problem_type
    layout = user_struct(pt)
    ep = epilogue or EpilogueArgs()
    out = bytearray(layout.size)
    for f in gemm_fields(sol, problem, buffers, alpha, beta, epilogue=ep, gsu=1):
        if f.name in _NOT_IN_STRUCT:
            continue
        if f.name not in layout.offsets:
            raise BuildError(f"argument {f.name} of {pt.name} has no place in the UserArguments struct")
        data = f.data
        if f.name.startswith("activation_"):
            # the struct's activation values are floats whatever the compute type
            index = int(f.name.rsplit("_", 1)[1])
            data = struct.pack("<f", ep.activation_args[index] if index < len(ep.activation_args) else 0.0)
        start = layout.offsets[f.name]
        out[start:start + len(data)] = data
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
    calls = list(zip(problems, buffers, alphas, betas, eps, strict=True))
    if arg_type == ARG_TYPE_TABLE:
        starts = [sum(per[:i]) for i in range(count)]
        table = struct.pack(f"<{count}I", *starts) + b"".join(
            pack_gemm_args(sol, p, b, a, be, epilogue=ep) for p, b, a, be, ep in calls)
    else:
        table = b"".join(pack_user_args(sol, p, b, a, be, epilogue=ep) for p, b, a, be, ep in calls)
    kernarg = pack_header(count, arg_type, internal_args(sol, cu_count=cu_count), sum(per)) \
        + values.pointer(table_address) + values.pointer(synchronizer) + values.pointer(workspace)
    return kernarg, table
