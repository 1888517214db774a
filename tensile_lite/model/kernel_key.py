"""A stable content key per kernel, used to build each distinct kernel once.

Two solutions get the same key exactly when they need the same machine code: same architecture, same
problem type (grouped or not is a launch detail), same code-shaping tuning values. Runtime arguments
(GSU, WorkGroupMapping, StaggerU, WGMXCC, ...) are left out as upstream does, except whether a
MultipleBuffer solution splits K at all (`splits_into_workspace`). The key is a SHA-256 over a
canonical msgpack encoding, so it is stable across runs, processes and Python versions (unlike `hash()`).
"""

from __future__ import annotations

import hashlib
from typing import Any

import attrs
import msgpack

from tensile_lite.model.datatypes import DataType
from tensile_lite.model.params import RUNTIME_ARG_KEYS, TUNING_DEFAULTS, Params, plain
from tensile_lite.model.problem import ProblemType
from tensile_lite.model.solution import Solution

_CODE_KEYS: tuple[str, ...] = tuple(sorted(k for k in TUNING_DEFAULTS if k not in RUNTIME_ARG_KEYS
                                           and k not in ("ISA", "NoReject", "MacroTile")))


def _canon(value: Any) -> Any:
    if isinstance(value, DataType):
        return value.value
    if isinstance(value, tuple):
        return [_canon(v) for v in value]
    if isinstance(value, Params):
        return plain(value)
    return value


# Typed fields added after keys were first recorded (ROCm 7.x's MX scaling): in the signature only when
# they differ from their default, so the keys of every problem type that does not use them stay as they were.
_ADDED_FIELDS = frozenset({"mx_block_a", "mx_block_b", "mx_scale_a", "mx_scale_b"})


def problem_signature(pt: ProblemType) -> list[Any]:
    """The problem type as a kernel sees it: every typed field but the launch-only grouped flag."""
    fields = attrs.fields(ProblemType)
    skip = {"params", "name", "operation_identifier", "grouped_gemm"}
    out: list[Any] = [[f.name, _canon(getattr(pt, f.name))] for f in fields if f.name not in skip
                      and not (f.name in _ADDED_FIELDS and getattr(pt, f.name) == f.default)]
    extra = {k: pt.params[k] for k in ("MirrorDimsA", "MirrorDimsB", "ComplexConjugateA", "ComplexConjugateB",
                                       "UseInitialStridesAB", "UseInitialStridesCD",
                                       "SilentHighPrecisionAccumulate") if pt.params.get(k)}
    out.append(["extra", _canon(Params(extra))])
    return out


def kernel_key(sol: Solution) -> str:
    """Hex SHA-256 (32 chars) of the kernel-defining content of a solution."""
    if sol.custom_kernel_name:
        # A custom kernel's code comes from its own file, whatever the logic file says around it: its
        # name and, once read (custom/merge.py), the digest of its text.
        text = [sol.custom_source.sha256] if sol.custom_source else []
        blob = msgpack.packb([1, sol.arch, "custom", sol.custom_kernel_name, *text], use_bin_type=True)
        return hashlib.sha256(blob).hexdigest()[:32]
    tuning = [[k, _canon(sol.tuning(k))] for k in _CODE_KEYS]
    mi = sol.matrix_instruction
    shape = [sol.macro_tile[0], sol.macro_tile[1], sol.depth_u,
             [mi.m, mi.n, mi.k, mi.b, mi.bm, mi.bn] if mi else [], list(sol.mi_wave_tile), list(sol.mi_wave_group)]
    content: list[Any] = [1, sol.arch, problem_signature(sol.problem_type), shape, tuning]
    if splits_into_workspace(sol):
        content.append("split-K into the workspace")
    blob = msgpack.packb(content, use_bin_type=True)
    return hashlib.sha256(blob).hexdigest()[:32]


def splits_into_workspace(sol: Solution) -> bool:
    """MultipleBuffer with GSU > 1: the kernel stores GSU slices for the runtime's conversion kernel, so it
    is not the kernel of the same solution with GSU 1 (upstream's kernels take any GSU at run time; ours
    split only where the logic file does, and the library lets the runtime change the GSU only there)."""
    return sol.global_split_u_algorithm == "MultipleBuffer" and sol.runtime.global_split_u > 1


def splits_in_kernel(sol: Solution) -> bool:
    """MultipleBufferSingleKernel (not StreamK): the kernel reduces its GSU slices itself, and its host
    sends dstD, Synchronizer and GSUSync (and a workspace) whatever the runtime GSU."""
    return sol.global_split_u_algorithm == "MultipleBufferSingleKernel" and not sol.tuning("StreamK")


def splits_for_conversion(sol: Solution) -> bool:
    """MultipleBuffer (not StreamK), the runtime's globalAccumulation 2 whatever the solution's GSU: a call
    with GSU > 1 (the solution's, or the user's override where the library allows one) sends the workspace
    in D's and C's place and runs the conversion kernel, which sums the slices and runs the epilogue."""
    return sol.global_split_u_algorithm == "MultipleBuffer" and not sol.tuning("StreamK")


def must_split(sol: Solution) -> bool:
    """The solution itself splits K: MultipleBufferSingleKernel, or MultipleBuffer with GSU > 1 (a kernel
    without split-K cannot serve it, whereas a GSU-1 MultipleBuffer solution may take a plain kernel)."""
    return splits_in_kernel(sol) or (splits_for_conversion(sol) and sol.runtime.global_split_u > 1)


def splits_k(sol: Solution) -> bool:
    """A call may split K (either algorithm), when its GSU is above 1."""
    return splits_in_kernel(sol) or splits_for_conversion(sol)
