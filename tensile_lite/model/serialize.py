"""Model <-> plain dicts in the logic-file vocabulary, and <-> msgpack bytes.

Plain dicts use canonical values (booleans as 0/1, lists), so `from_dict(to_dict(x)) == x` for every
solution, and `to_dict(from_dict(d))` equals `d` up to that canonical spelling.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import attrs
import msgpack

from tensile_lite.errors import LogicError
from tensile_lite.model.params import Params, plain
from tensile_lite.model.problem import ProblemType
from tensile_lite.model.solution import CustomSource, Solution

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
        custom = [[sol.custom_source.path, sol.custom_source.sha256]] if sol.custom_source else []
        packed: bytes = msgpack.packb([_FORMAT, sol.arch, sol.index, plain(sol.params),
                                       plain(sol.problem_type.params), *custom], use_bin_type=True)
        return packed
    except OverflowError as exc:  # msgpack holds 64-bit integers; logic files never need more
        raise LogicError(f"a parameter value does not fit in 64 bits: {exc}") from None


def decode_solution(blob: bytes) -> Solution:
    fmt, arch, index, params, pt, *custom = msgpack.unpackb(blob, raw=False, strict_map_key=False)
    if fmt != _FORMAT:
        raise LogicError(f"unknown solution encoding version {fmt}")
    sol = Solution.from_params(ProblemType.from_params(Params.from_mapping(pt)), Params.from_mapping(params),
                               arch, index)
    # a custom kernel's file, as the reader attached it (an optional sixth element)
    return attrs.evolve(sol, custom_source=CustomSource(*custom[0])) if custom else sol


def identity_bytes(value: Any) -> bytes:
    """Canonical bytes of a model value: every field an attrs class is constructed from (recursively, derived
    fields follow from them), Params in key order, enums by class and value, and plain scalars as msgpack
    keeps them apart (True is not 1, 1.0 is not 1). Equal bytes mean equal content, so anything computed
    from the value alone may be keyed by them (the kernel cache, codeobj/cache.py). A value of any other
    type is a TypeError: it cannot be named this way."""
    packed: bytes = msgpack.packb(_identity(value), use_bin_type=True)
    return packed


def _identity(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, str, bytes)):
        return v
    if isinstance(v, enum.Enum):
        return ["enum", type(v).__qualname__, _identity(v.value)]
    if isinstance(v, Params):
        return ["params", [[k, _identity(x)] for k, x in v.items()]]
    if isinstance(v, Mapping) and all(isinstance(k, str) for k in v):
        return ["map", [[k, _identity(v[k])] for k in sorted(v)]]
    if isinstance(v, (tuple, list)):
        return ["seq", [_identity(x) for x in v]]
    if attrs.has(type(v)):
        return ["obj", type(v).__qualname__,
                [[f.name, _identity(getattr(v, f.name))] for f in attrs.fields(type(v)) if f.init]]
    raise TypeError(f"{type(v).__qualname__} has no canonical identity")
