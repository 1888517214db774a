"""Model <-> plain dicts in the logic-file vocabulary, and <-> msgpack bytes.

Plain dicts use canonical values (booleans as 0/1, lists), so `from_dict(to_dict(x)) == x` for every
solution, and `to_dict(from_dict(d))` equals `d` up to that canonical spelling.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgpack

from tensile_lite.errors import LogicError
from tensile_lite.model.params import Params, plain
from tensile_lite.model.problem import ProblemType
from tensile_lite.model.solution import Solution

_FORMAT = 1


def problem_type_to_dict(pt: ProblemType) -> dict[str, Any]:
    out: dict[str, Any] = plain(pt.params)
    return out


def problem_type_from_dict(raw: Mapping[str, Any]) -> ProblemType:
    return ProblemType.from_params(Params.from_mapping(raw))


def solution_to_dict(sol: Solution) -> dict[str, Any]:
    """The solution as a logic file writes it, with its problem type embedded."""
    out: dict[str, Any] = plain(sol.params)
    out["ProblemType"] = problem_type_to_dict(sol.problem_type)
    return out


def solution_from_dict(raw: Mapping[str, Any], arch: str, position: int = 0,
                       problem_type: ProblemType | None = None) -> Solution:
    """Build a solution from a logic-file dict; `problem_type` (the file's) wins over the embedded one."""
    if problem_type is None:
        if "ProblemType" not in raw:
            raise LogicError("a solution needs a ProblemType when none is given")
        problem_type = problem_type_from_dict(raw["ProblemType"])
    params = Params.from_mapping({k: v for k, v in raw.items() if k != "ProblemType"})
    return Solution.from_params(problem_type, params, arch, position)


def encode_solution(sol: Solution) -> bytes:
    """Compact bytes: [format, arch, index, solution params, problem-type params]."""
    try:
        packed: bytes = msgpack.packb([_FORMAT, sol.arch, sol.index, plain(sol.params),
                                       plain(sol.problem_type.params)], use_bin_type=True)
        return packed
    except OverflowError as exc:  # msgpack holds 64-bit integers; logic files never need more
        raise LogicError(f"a parameter value does not fit in 64 bits: {exc}") from None


def decode_solution(blob: bytes) -> Solution:
    fmt, arch, index, params, pt = msgpack.unpackb(blob, raw=False, strict_map_key=False)
    if fmt != _FORMAT:
        raise LogicError(f"unknown solution encoding version {fmt}")
    return Solution.from_params(ProblemType.from_params(Params.from_mapping(pt)), Params.from_mapping(params),
                                arch, index)
