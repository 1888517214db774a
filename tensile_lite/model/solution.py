"""A solution: one tuned kernel configuration for a problem type, typed, validated and immutable.

Derived values (macro tile, thread counts, loop iterations) are computed once at construction and checked
against the values a logic file carries, so a contradictory file fails loudly instead of building wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from tensile_lite.errors import LogicError, Where
from tensile_lite.model.params import TUNING_DEFAULTS, Params
from tensile_lite.model.problem import ProblemType


@attrs.frozen(slots=True, cache_hash=True)
class MatrixInstruction:
    """An MFMA/WMMA shape: M x N x K over B blocks, with the blocks laid along M (bm) and N (bn)."""

    m: int
    n: int
    k: int
    b: int
    bm: int = 1
    bn: int = 1

    @property
    def name(self) -> str:
        return f"{self.m}x{self.n}x{self.k}x{self.b}"


@attrs.frozen(slots=True, cache_hash=True)
class RuntimeArgs:
    """Tuning values the runtime passes as kernel arguments; they never change a kernel's code."""

    global_split_u: int
    workgroup_mapping: int
    workgroup_mapping_xcc: int
    workgroup_mapping_xcc_group: int
    stagger_u: int
    stagger_u_stride: int
    stagger_u_mapping: int
    global_split_u_coalesced: bool
    global_split_u_wgm_round_robin: bool


@attrs.frozen(slots=True, cache_hash=True)
class CustomSource:
    """Where a custom kernel's hand-written assembly was read (tensile_lite/custom) and the SHA-256 of its
    bytes. Only the digest takes part in equality: the same text is the same kernel wherever it lives."""

    path: str = attrs.field(eq=False)
    sha256: str


def _get(params: Params, key: str) -> Any:
    return params[key] if key in params else TUNING_DEFAULTS.get(key)


# Shape-defining parameters every real logic file writes: a default would silently build another kernel.
REQUIRED_KEYS: frozenset[str] = frozenset(
    {"DepthU", "WorkGroup", "MatrixInstruction", "WavefrontSize", "ThreadTile", "KernelLanguage"}
)


def _need(params: Params, key: str, where: Where, check: Callable[[Any], bool], expect: str) -> Any:
    if key in REQUIRED_KEYS and key not in params:
        raise LogicError("required parameter is missing", attrs.evolve(where, parameter=key))
    value = _get(params, key)
    if value is None or not check(value):
        what = "missing" if key not in params else f"got {value!r}"
        raise LogicError(f"expected {expect}, {what}", attrs.evolve(where, parameter=key))
    return value


def _is_int(v: Any) -> bool:
    return isinstance(v, int)


def _is_pos(v: Any) -> bool:
    return isinstance(v, int) and v > 0


def _int_tuple(n: int) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, tuple) and len(v) == n and all(isinstance(x, int) and x > 0 for x in v)


# How each typed field is read: logic-file key and (check, what the check expects); None = any truthy flag.
_INT = (_is_int, "an integer")
_POS = (_is_pos, "a positive integer")
_SOLUTION_FIELDS: dict[str, tuple[str, Any]] = {
    "kernel_language": ("KernelLanguage", (lambda v: v in ("Assembly", "Source"), "'Assembly' or 'Source'")),
    "workgroup": ("WorkGroup", (_int_tuple(3), "[x, y, z] positive integers")),
    "thread_tile": ("ThreadTile", (_int_tuple(2), "[t0, t1] positive integers")),
    "depth_u": ("DepthU", _POS),
    "wavefront_size": ("WavefrontSize", (lambda v: v in (32, 64), "32 or 64")),
    "global_read_vector_width_a": ("GlobalReadVectorWidthA", _INT),
    "global_read_vector_width_b": ("GlobalReadVectorWidthB", _INT),
    "local_read_vector_width": ("LocalReadVectorWidth", _INT),
    "vector_width_a": ("VectorWidthA", _INT),
    "vector_width_b": ("VectorWidthB", _INT),
    "store_vector_width": ("StoreVectorWidth", _INT),
    "lds_pad_a": ("LdsPadA", _INT),
    "lds_pad_b": ("LdsPadB", _INT),
    "lds_block_size_per_pad_a": ("LdsBlockSizePerPadA", _INT),
    "lds_block_size_per_pad_b": ("LdsBlockSizePerPadB", _INT),
    "transpose_lds": ("TransposeLDS", _INT),
    "one_lds_buffer": ("1LDSBuffer", None),
    "prefetch_global_read": ("PrefetchGlobalRead", _INT),
    "prefetch_local_read": ("PrefetchLocalRead", _INT),
    "inner_unroll": ("InnerUnroll", _POS),
    "source_swap": ("SourceSwap", None),
    "global_split_u_algorithm": ("GlobalSplitUAlgorithm", (lambda v: isinstance(v, str), "a string")),
}
_RUNTIME_FIELDS: dict[str, tuple[str, Any]] = {
    "global_split_u": ("GlobalSplitU", _INT),
    "workgroup_mapping": ("WorkGroupMapping", _INT),
    "workgroup_mapping_xcc": ("WorkGroupMappingXCC", _INT),
    "workgroup_mapping_xcc_group": ("WorkGroupMappingXCCGroup", _INT),
    "stagger_u": ("StaggerU", _INT),
    "stagger_u_stride": ("StaggerUStride", _INT),
    "stagger_u_mapping": ("StaggerUMapping", _INT),
    "global_split_u_coalesced": ("GlobalSplitUCoalesced", None),
    "global_split_u_wgm_round_robin": ("GlobalSplitUWorkGroupMappingRoundRobin", None),
}


def _typed(params: Params, where: Where, table: dict[str, tuple[str, Any]]) -> dict[str, Any]:
    out = {}
    for field, (key, check) in table.items():
        out[field] = bool(_get(params, key)) if check is None else _need(params, key, where, *check)
    return out


@attrs.frozen(slots=True, cache_hash=True)
class Solution:
    """Everything needed to build one kernel and describe it in a library.

    `params` holds every key of the logic file's solution (minus its embedded ProblemType copy) in
    canonical form, so nothing is lost; the typed fields are the ones decisions are made on.
    """

    problem_type: ProblemType
    params: Params = attrs.field(repr=False)
    arch: str
    index: int
    name: str
    kernel_language: str
    custom_kernel_name: str
    matrix_instruction: MatrixInstruction | None
    mi_wave_tile: tuple[int, int]
    mi_wave_group: tuple[int, int]
    workgroup: tuple[int, int, int]
    thread_tile: tuple[int, int]
    depth_u: int
    wavefront_size: int
    global_read_vector_width_a: int
    global_read_vector_width_b: int
    local_read_vector_width: int
    vector_width_a: int
    vector_width_b: int
    store_vector_width: int
    lds_pad_a: int
    lds_pad_b: int
    lds_block_size_per_pad_a: int
    lds_block_size_per_pad_b: int
    transpose_lds: int
    one_lds_buffer: bool
    prefetch_global_read: int
    prefetch_local_read: int
    inner_unroll: int
    source_swap: bool
    global_split_u_algorithm: str
    runtime: RuntimeArgs
    # a custom kernel's assembly, once its custom.config has been merged over the solution (custom/merge.py)
    custom_source: CustomSource | None = None
    # derived, computed once
    macro_tile: tuple[int, int] = attrs.field(init=False, eq=False)
    num_threads: int = attrs.field(init=False, eq=False)
    num_waves: int = attrs.field(init=False, eq=False)
    loop_iters: int = attrs.field(init=False, eq=False)

    def __attrs_post_init__(self) -> None:
        where = Where(solution_index=self.index, solution_name=self.name or None)
        if self.matrix_instruction is not None:
            mi = self.matrix_instruction
            mt0 = mi.m * mi.bm * self.mi_wave_tile[0] * self.mi_wave_group[0]
            mt1 = mi.n * mi.bn * self.mi_wave_tile[1] * self.mi_wave_group[1]
            iters = self.depth_u // (mi.k * self.inner_unroll * self.workgroup[2])
        else:
            mt0 = self.workgroup[0] * self.thread_tile[0]
            mt1 = self.workgroup[1] * self.thread_tile[1]
            iters = self.depth_u // self.inner_unroll
        threads = self.workgroup[0] * self.workgroup[1] * self.workgroup[2]
        checks = [("MacroTile0", mt0), ("MacroTile1", mt1), ("NumThreads", threads)]
        if self.matrix_instruction is not None:
            checks.append(("LoopIters", iters))
        for key, value in checks:
            if key in self.params and self.params[key] != value:
                cause = {"NumThreads": "WorkGroup", "LoopIters": "DepthU, MatrixInstruction and WorkGroup"}.get(
                    key, "MatrixInstruction, MIWaveTile and MIWaveGroup")
                raise LogicError(f"{key} is {self.params[key]} but {cause} give {value}",
                                 attrs.evolve(where, parameter=key))
        if threads % self.wavefront_size:
            raise LogicError(f"{threads} threads is not a whole number of {self.wavefront_size}-lane waves",
                             attrs.evolve(where, parameter="WorkGroup"))
        # WorkGroup[2] is the local split of the summation: that many wave groups share one tile.
        waves_needed = self.mi_wave_group[0] * self.mi_wave_group[1] * self.workgroup[2]
        if self.matrix_instruction is not None and threads // self.wavefront_size != waves_needed:
            raise LogicError(f"MIWaveGroup {list(self.mi_wave_group)} with local split {self.workgroup[2]} "
                             f"needs {waves_needed} waves but WorkGroup {list(self.workgroup)} has "
                             f"{threads // self.wavefront_size}", attrs.evolve(where, parameter="MIWaveGroup"))
        object.__setattr__(self, "macro_tile", (mt0, mt1))
        object.__setattr__(self, "num_threads", threads)
        object.__setattr__(self, "num_waves", threads // self.wavefront_size)
        object.__setattr__(self, "loop_iters", iters)

    def tuning(self, key: str) -> Any:
        """Any tuning parameter by its logic-file name, the upstream default when the file omits it."""
        return _get(self.params, key)

    @property
    def is_custom(self) -> bool:
        return bool(self.custom_kernel_name)

    @classmethod
    def from_params(cls, problem_type: ProblemType, params: Params, arch: str, position: int,
                    where: Where | None = None) -> Solution:
        index = params.get("SolutionIndex", position)
        name = params.get("SolutionNameMin") or ""
        where = attrs.evolve(where or Where(), solution_index=index if isinstance(index, int) else position,
                             solution_name=name or None)
        if not isinstance(index, int):
            raise LogicError(f"SolutionIndex must be an integer, got {index!r}",
                             attrs.evolve(where, parameter="SolutionIndex"))
        mi_raw = _need(params, "MatrixInstruction", where, lambda v: True, "a list")
        if not isinstance(mi_raw, tuple):
            raise LogicError(f"expected a list, got {mi_raw!r}", attrs.evolve(where, parameter="MatrixInstruction"))
        if mi_raw:
            if len(mi_raw) not in (4, 9) or not all(_is_pos(v) for v in mi_raw):
                raise LogicError(f"expected [M, N, K, B] of positive integers, got {list(mi_raw)}",
                                 attrs.evolve(where, parameter="MatrixInstruction"))
            m, n, k, b = mi_raw[:4]
            block = params.get("MIBlock")
            if isinstance(block, tuple) and len(block) == 6:
                bm, bn = block[4], block[5]
            else:
                bm, bn = (b, 1) if b > 1 else (1, 1)
            mi: MatrixInstruction | None = MatrixInstruction(m, n, k, b, bm, bn)
            if len(mi_raw) == 9:  # the compact form also carries wave tile and wave group
                wave_tile, wave_group = (mi_raw[5], mi_raw[6]), (mi_raw[7], mi_raw[8])
            else:
                wave_tile = _need(params, "MIWaveTile", where, _int_tuple(2), "[tile0, tile1]")
                wave_group = _need(params, "MIWaveGroup", where, _int_tuple(2), "[waves0, waves1]")
        else:
            mi, wave_tile, wave_group = None, (1, 1), (1, 1)
        return cls(
            problem_type=problem_type, params=params, arch=arch, index=index, name=name,
            custom_kernel_name=str(_get(params, "CustomKernelName") or ""),
            matrix_instruction=mi, mi_wave_tile=wave_tile, mi_wave_group=wave_group,
            runtime=RuntimeArgs(**_typed(params, where, _RUNTIME_FIELDS)),
            **_typed(params, where, _SOLUTION_FIELDS),
        )
