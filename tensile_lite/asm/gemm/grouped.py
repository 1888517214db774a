"""Grouped GEMM from the kernel's side: where a kernel finds each GEMM's arguments in the tables of
argType 1 and 2 (spec/epilogue_semantics.md §4). The host builds the tables (`tensile_lite.host.grouped`).

- argType 1 (the table the library builds): `u32 wgTable[gemm_count]` (first workgroup of each GEMM,
  which kernels skip), then one record per GEMM: exactly the kernel's argType-0 arguments after the
  header (`record_bytes`).
- argType 2 (hipBLASLt's `UserArguments`): one fixed struct per GEMM, whose layout depends only on
  the kernel (`user_argument_offsets`): the GEMM part in argument order with alpha and beta in
  16-byte slots, then every epilogue field whether the kernel uses it or not. For batched kernels
  without a run-time factor dimension that is hipBLASLt's 196-byte struct; `factorDim` adds 4
  bytes before `e` (spec §4.3: do not combine those kernels with hipBLASLt's struct).
"""

from __future__ import annotations

from tensile_lite.asm.gemm.abi import AMAX_ARGUMENTS, HEADER_BYTES, SPLIT_K_ARGUMENTS, solution_layout
from tensile_lite.asm.gemm.features import epilogue_features
from tensile_lite.errors import BuildError
from tensile_lite.model import Solution

SCALAR_SLOT = 16       # alpha and beta slots of a user-arguments struct

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
