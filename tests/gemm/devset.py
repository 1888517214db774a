"""The dev-set logic files, read once per test session and shared by this folder's tests."""

from __future__ import annotations

from functools import cache

from tensile_lite.asm.gemm import unsupported_reasons
from tensile_lite.logic import read_logic_file
from tensile_lite.model import LogicFile, Solution, kernel_key
from tests.shared import dev_logic_files


@cache
def logic_files() -> tuple[LogicFile, ...]:
    return tuple(read_logic_file(p) for p in dev_logic_files())


@cache
def supported_kernels() -> tuple[Solution, ...]:
    """One solution per distinct kernel the writer supports, in file order (custom kernels are
    hipBLASLt's own assembly, not the writer's: tests/custom covers them). Decided once per session:
    many test modules parametrize over it at collection."""
    seen: set[str] = set()
    out = []
    for lf in logic_files():
        for sol in lf.solutions:
            if sol.is_custom or unsupported_reasons(sol):
                continue
            key = kernel_key(sol)
            if key not in seen:
                seen.add(key)
                out.append(sol)
    return tuple(out)
