"""The argType-0 argument bytes of one GEMM call, appended in the runtime's order with no padding
(`ContractionSolution::generateSingleCall`, spec/kernel_anatomy.md §1.5): sizes, D/C/A/B, strides,
alpha, beta, the epilogue's arguments, then the split-K arguments of a GA-3 solution."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from tensile_lite.errors import BuildError
from tensile_lite.host import values
from tensile_lite.host.call import EpilogueArgs, GemmProblem
from tensile_lite.host.epilogue import epilogue_fields
from tensile_lite.host.grid import num_workgroups
from tensile_lite.host.header import ARG_TYPE_INLINE, HEADER_BYTES, internal_args, pack_header
from tensile_lite.host.splitk import splits_for_conversion, splits_in_kernel, uses_workspace
from tensile_lite.model import ProblemType, Solution


@attrs.frozen(slots=True)
class Field:
    """One appended argument: the runtime's name for it, its offset from the start of the kernarg
    segment (header included) and its bytes."""

    name: str
    offset: int
    data: bytes


def _refuse_unsent(pt: ProblemType) -> None:
    # arguments this host does not send yet (their presence changes every offset after them)
    extras = [what for what, on in (("sparse metadata", pt.sparse), ("batched pointer arrays", not pt.strided_batched),
                                    ("initial strides", pt.params.get("UseInitialStridesAB")
                                     or pt.params.get("UseInitialStridesCD")),
                                    ("RNDSeed", pt.stochastic_rounding)) if on]
    if extras:
        raise BuildError(f"problem type {pt.name}: the host does not pack {', '.join(extras)}")


def _named(sol: Solution, problem: GemmProblem, buffers: Mapping[str, int], alpha: float, beta: float,
           ep: EpilogueArgs, gsu: int | None, own_split_strides: bool) -> list[tuple[str, bytes]]:
    pt = sol.problem_type
    _refuse_unsent(pt)
    split = uses_workspace(sol, gsu)
    out = [(f"size_{i}", values.u32(s)) for i, s in enumerate(problem.free_sizes(pt))]
    out.append((f"size_{pt.num_indices_c}", values.u32(problem.k)))
    # GA 3 sends ws_d and the real c, GA 2 ws_d and ws_c
    d = buffers["workspace"] if split else buffers["D"]
    c = buffers["workspace"] if split and splits_for_conversion(sol) else buffers["C"]
    out += [("d", values.pointer(d)), ("c", values.pointer(c)), ("a", values.pointer(buffers["A"])),
            ("b", values.pointer(buffers["B"]))]
    # the workspace's packed strides stand in for D's and C's, except for 7.x's single-kernel calls
    packed = split and not (own_split_strides and splits_in_kernel(sol))
    for tensor in "DCAB":
        strides = problem.packed_output_strides(pt) if packed and tensor in "DC" else problem.tensor_strides(pt, tensor)
        out += [(f"stride{tensor}{i + 1}", values.u32(s)) for i, s in enumerate(strides)]
    out.append(("alpha", values.scalar(pt.compute_type, alpha)))
    if pt.use_beta:
        out.append(("beta", values.scalar(pt.compute_type, beta)))
    out += epilogue_fields(sol, buffers, ep)
    if splits_in_kernel(sol):
        out += [("dstD", values.pointer(buffers["D"])), ("Synchronizer", values.pointer(buffers.get("synchronizer", 0))),
                ("GSUSync", values.u32(0))]
    return out


def gemm_fields(sol: Solution, problem: GemmProblem, buffers: Mapping[str, int], alpha: float, beta: float = 0.0,
                *, epilogue: EpilogueArgs | None = None, gsu: int | None = None,
                own_split_strides: bool = False) -> tuple[Field, ...]:
    """Every argument after the header, placed at its kernarg offset (the header takes the first 16 bytes).

    `buffers` maps 'A', 'B', 'C', 'D' to device addresses, and the epilogue's pointers by their
    `epilogue.POINTERS` keys (a missing one is null); a split-K call adds 'workspace' and 'synchronizer'.
    `gsu` is the user's GSU override (None: the solution's). `own_split_strides`: pack as ROCm 7.x does, a
    single-kernel split-K call with D's and C's own strides (the 2024 runtime sends the workspace's packed
    ones; ContractionSolution.cpp, rocm-libraries, "Pass wsStride if it's not in MBSK mode").
    """
    out, offset = [], HEADER_BYTES
    for name, data in _named(sol, problem, buffers, alpha, beta, epilogue or EpilogueArgs(), gsu,
                             own_split_strides):
        out.append(Field(name, offset, data))
        offset += len(data)
    return tuple(out)


def pack_gemm_args(sol: Solution, problem: GemmProblem, buffers: Mapping[str, int], alpha: float,
                   beta: float = 0.0, *, epilogue: EpilogueArgs | None = None, gsu: int | None = None,
                   own_split_strides: bool = False) -> bytes:
    """The arguments after the header: the inline argType-0 body, and one record of an argType-1 table."""
    return b"".join(f.data for f in gemm_fields(sol, problem, buffers, alpha, beta, epilogue=epilogue, gsu=gsu,
                                                own_split_strides=own_split_strides))


def pack_kernel_args(sol: Solution, problem: GemmProblem, buffers: Mapping[str, int], alpha: float,
                     beta: float = 0.0, *, gemm_count: int = 1, arg_type: int = ARG_TYPE_INLINE,
                     cu_count: int = 0, epilogue: EpilogueArgs | None = None, gsu: int | None = None,
                     own_split_strides: bool = False) -> bytes:
    """The kernarg bytes of one argType-0 call of `sol` on `problem` (see gemm_fields)."""
    header = pack_header(gemm_count, arg_type, internal_args(sol, cu_count=cu_count, gsu=gsu),
                         num_workgroups(sol, problem, gsu=gsu))
    return header + pack_gemm_args(sol, problem, buffers, alpha, beta, epilogue=epilogue, gsu=gsu,
                                   own_split_strides=own_split_strides)


HEADER_FIELDS = ("gemm_count", "internalArgs", "internalArgs1", "numWorkGroups")
_NULL_BUFFERS: Mapping[str, int] = {"A": 0, "B": 0, "C": 0, "D": 0, "workspace": 0}


def layout(sol: Solution, *, gsu: int | None = None) -> tuple[tuple[str, int, int], ...]:
    """(runtime name, offset, size) of every argument of an argType-0 call, header included. The layout
    does not depend on the values, only on the solution (and on whether the call splits K, which moves
    no argument)."""
    header = tuple((name, 4 * i, 4) for i, name in enumerate(HEADER_FIELDS))
    return header + tuple((f.name, f.offset, len(f.data))
                          for f in gemm_fields(sol, GemmProblem(1, 1, 1), _NULL_BUFFERS, 0.0, 0.0, gsu=gsu))
