"""Names of library files and kernels.

Placeholder (per problem type) library names follow upstream's grammar exactly, because the runtime's
preload looks for `TensileLibrary_*_<gfx>` and packagers know them. Kernel names are our own: the runtime
never recomputes an assembly kernel's name, it only looks up the `kernelName` a `.dat` gives, so any
deterministic name that is unique per kernel and a valid symbol will do. Ours is readable and short.
Custom kernels are the exception: their hand-written assembly defines its own symbol, which is kept.
"""

from __future__ import annotations

import functools
import re

import attrs

from tensile_lite.library.problem_view import ProblemView
from tensile_lite.library.spelling import SPELLING_2024, TypeSpelling
from tensile_lite.model.datatypes import DataType
from tensile_lite.model.kernel_key import kernel_key
from tensile_lite.model.problem import ProblemType
from tensile_lite.model.solution import Solution

PREFIX = "TensileLibrary"
DEFAULT_PERF_METRIC = "DeviceEfficiency"
# Characters of the content key kept in a kernel name: 48 bits. Among the ~14k kernels of a full gfx942
# build a clash has odds of ~3e-7; the plan checks names one to one with keys and fails clearly if so.
KEY_CHARS = 12

_SYMBOL_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _selection_part(v: ProblemView, names: TypeSpelling) -> str:
    t = names.token
    name = f"_{t(v.a_type)}{t(v.b_type)}_{t(v.c_type)}{t(v.compute_input_type)}"
    if v.activation != "none":
        name += {"all": "_A", "hipblaslt_all": "_HA"}.get(v.activation, "_" + v.activation.upper())
    if v.use_bias:
        name += "_Bias"
    if v.use_e:
        name += "_Grad" if v.gradient else "_Aux"
    if v.grouped_gemm:
        name += "_GG"
    elif not v.strided_batched:
        name += "_GB"
    name += {"Scalar": "_SAB", "Vector": "_SABV"}.get(v.use_scale_ab, "")
    if v.use_scale_cd:
        name += "_SCD"
    if v.use_scale_alpha_vec:
        name += "_SAV"
    if v.sparse:
        name += "_SPB" if v.sparse == 2 else "_SPA"
    if v.f32_xdl_math_op is not DataType.S and v.compute_input_type is DataType.S:
        name += "_M" + t(v.f32_xdl_math_op)
    if v.support_user_args:
        name += "_UA"
    return name


def placeholder_name(v: ProblemView, arch: str, cu_count: int | None, perf_metric: str = DEFAULT_PERF_METRIC,
                     fallback: bool = False, *, fallback_per_arch: bool = True,
                     names: TypeSpelling = SPELLING_2024) -> str:
    """`TensileLibrary_<types>_<features>_Type_<ac>[_HPA][_<metric>]_<operation>[_CU<n>]_<gfx>`.

    Files of the `fallback` architecture end in `_fallback_<gfx>` with `fallback_per_arch` (so their
    libraries still end in the architecture the runtime preloads and a per-architecture mapping lists
    them, as upstream's `renameFallbacksPerArch` does since 2026-04), else in a bare `_fallback` as
    upstream's older versions wrote. `names` spells the type tokens (spelling.py).
    """
    name = PREFIX + _selection_part(v, names)
    name += f"_Type_{names.token(v.a_type)}{names.token(v.c_type)}"
    if v.high_precision_accumulate:
        name += "_HPA"
    if perf_metric != DEFAULT_PERF_METRIC:
        name += "_" + perf_metric
    name += "_" + v.operation_identifier
    if cu_count:
        name += f"_CU{cu_count}"
    if fallback:
        name += "_fallback"
        if not fallback_per_arch:
            return name
    return f"{name}_{arch}"


@functools.lru_cache(maxsize=1024)
def _kernel_problem_name(pt: ProblemType) -> str:
    # Grouped and non-grouped solutions share kernels (grouping is a launch detail), so they share names.
    return attrs.evolve(pt, grouped_gemm=False).name if pt.grouped_gemm else pt.name


def kernel_name_for(solution: Solution, key: str | None = None) -> str:
    """`<problem>_MT<m>x<n>x<depthU>[_MI<m>x<n>x<k>x<b>]_K<content key>`: a function of the kernel key only.

    A custom kernel keeps its own name: its assembly comes from its own file, which defines that symbol.
    """
    if solution.custom_kernel_name:
        return solution.custom_kernel_name
    key = key or kernel_key(solution)
    mt0, mt1 = solution.macro_tile
    name = f"{_kernel_problem_name(solution.problem_type)}_MT{mt0}x{mt1}x{solution.depth_u}"
    mi = solution.matrix_instruction
    if mi is not None:
        name += f"_MI{mi.m}x{mi.n}x{mi.k}x{mi.b}"
    return f"{name}_K{key[:KEY_CHARS]}"


def _value(v: int | bool) -> str:
    return f"n{-int(v)}" if int(v) < 0 else str(int(v))


def solution_name_for(solution: Solution, kernel_name: str) -> str:
    """The kernel's name followed by the runtime arguments that tell its solutions apart (like upstream)."""
    r = solution.runtime
    parts = (("GSU", r.global_split_u), ("SU", r.stagger_u), ("SUM", r.stagger_u_mapping),
             ("SUS", r.stagger_u_stride), ("WGM", r.workgroup_mapping), ("WGMXCC", r.workgroup_mapping_xcc),
             ("WGMXCCG", r.workgroup_mapping_xcc_group), ("GSUC", r.global_split_u_coalesced),
             ("GSUWGMRR", r.global_split_u_wgm_round_robin))
    return kernel_name + "".join(f"_{abbrev}{_value(v)}" for abbrev, v in parts)


def is_symbol(name: str) -> bool:
    """A name the assembler accepts as a kernel symbol without quoting."""
    return bool(_SYMBOL_RE.match(name))
