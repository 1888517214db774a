"""Property tests: generated problem types and solutions survive every encoding, and the kernel key
depends on content only (not key order, not how booleans are spelled)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from tensile_lite.model import DataType, kernel_key
from tensile_lite.model.kernel_key import splits_into_workspace
from tensile_lite.model.serialize import (
    decode_solution,
    encode_solution,
    problem_type_from_dict,
    problem_type_to_dict,
    solution_from_dict,
    solution_to_dict,
)

TYPES = [(4, 4, 0), (4, 0, 0), (7, 7, 0), (7, 0, 0), (0, 0, 0), (1, 1, 1), (8, 6, 6), (11, 4, 0)]
BOOL_PT_KEYS = ["UseBeta", "HighPrecisionAccumulate", "UseE", "Gradient", "GroupedGemm", "SupportUserArgs",
                "UseScaleCD", "ActivationNoGuard", "StridedBatched", "TransposeA", "TransposeB"]
BOOL_SOL_KEYS = ["SourceSwap", "1LDSBuffer", "BufferLoad", "BufferStore", "StorePriorityOpt", "GroupLoadStore",
                 "ExpandPointerSwap", "ActivationFused"]


@st.composite
def problem_dicts(draw):
    dtype, dest, compute = draw(st.sampled_from(TYPES))
    ta, tb = draw(st.booleans()), draw(st.booleans())
    return {
        "OperationType": "GEMM", "DataType": dtype, "DestDataType": dest, "ComputeDataType": compute,
        "TransposeA": ta, "TransposeB": tb,
        "IndexAssignmentsA": [3, 0, 2] if ta else [0, 3, 2], "IndexAssignmentsB": [1, 3, 2] if tb else [3, 1, 2],
        "NumIndicesC": 3, "IndicesSummation": [3], "UseBeta": draw(st.booleans()),
        "HighPrecisionAccumulate": dtype != dest or draw(st.booleans()), "UseBias": draw(st.sampled_from([0, 1])),
        "ActivationType": draw(st.sampled_from(["none", "hipblaslt_all", "relu"])),
        "UseScaleAB": draw(st.sampled_from(["", "Scalar", "Vector"])), "UseScaleCD": draw(st.booleans()),
        "UseScaleAlphaVec": draw(st.sampled_from([0, 1])), "UseE": draw(st.booleans()),
        "Gradient": draw(st.booleans()), "GroupedGemm": draw(st.booleans()),
        "SupportUserArgs": draw(st.booleans()), "StridedBatched": True, "ActivationNoGuard": False,
    }


@st.composite
def solution_dicts(draw):
    pt = draw(problem_dicts())
    mi = draw(st.sampled_from([[16, 16, 4, 1], [32, 32, 2, 1], [16, 16, 16, 1], [32, 32, 8, 1], [4, 4, 4, 16]]))
    wt = [draw(st.integers(1, 4)), draw(st.integers(1, 4))]
    wg = draw(st.sampled_from([[1, 1], [2, 2], [1, 2], [2, 1], [4, 1]]))
    lsu = draw(st.sampled_from([1, 1, 2]))
    depth_u = mi[2] * lsu * draw(st.sampled_from([1, 2, 4, 8]))
    bm = 16 if mi[3] > 1 else 1
    sol = {
        "KernelLanguage": "Assembly", "MatrixInstruction": mi, "MIBlock": [*mi, bm, 1], "MIWaveTile": wt,
        "MIWaveGroup": wg, "WorkGroup": [64 * wg[0], wg[1], lsu], "ThreadTile": [1, 1], "DepthU": depth_u,
        "WavefrontSize": 64, "MacroTile0": mi[0] * bm * wt[0] * wg[0], "MacroTile1": mi[1] * wt[1] * wg[1],
        "GlobalReadVectorWidthA": draw(st.sampled_from([1, 2, 4, 8])), "GlobalReadVectorWidthB": 4,
        "LocalReadVectorWidth": draw(st.sampled_from([1, 2, 4, 8])), "PrefetchGlobalRead": draw(st.sampled_from([1, 2])),
        "LdsPadA": draw(st.sampled_from([0, 4, 8, 16])), "LdsPadB": 0, "TransposeLDS": draw(st.sampled_from([0, 1])),
        "GlobalSplitU": draw(st.sampled_from([1, 2, 8])), "WorkGroupMapping": draw(st.sampled_from([1, 8, -8])),
        "StaggerU": draw(st.sampled_from([0, 4, 32])), "SolutionIndex": draw(st.integers(0, 10_000)),
        "SolutionNameMin": draw(st.text("abcdefgh_0123", min_size=0, max_size=20)),
        "CustomField": draw(st.one_of(st.none(), st.integers(-(2**63), 2**64 - 1), st.text(max_size=5),
                                       st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3))),
        "InternalSupportParams": {"KernArgsVersion": 2, "SupportUserGSU": draw(st.booleans())},
        "ProblemType": pt,
    }
    for key in BOOL_SOL_KEYS:
        sol[key] = draw(st.booleans())
    return sol


def _respell(d: dict, bool_keys: list[str], rng: random.Random) -> dict:
    """Same content: shuffled key order, booleans written as 0/1 where they were True/False."""
    items = list(d.items())
    rng.shuffle(items)
    out = {}
    for k, v in items:
        if k in bool_keys and isinstance(v, bool):
            v = int(v)
        if isinstance(v, dict):
            v = _respell(v, bool_keys, rng)
        out[k] = v
    return out


@settings(max_examples=150, deadline=None)
@given(solution_dicts())
def test_solution_round_trips(raw):
    sol = solution_from_dict(raw, "gfx942", 0)
    assert decode_solution(encode_solution(sol)) == sol
    assert solution_from_dict(solution_to_dict(sol), "gfx942", 0) == sol


@settings(max_examples=100, deadline=None)
@given(solution_dicts(), st.integers(0, 2**32 - 1))
def test_kernel_key_ignores_order_and_bool_spelling(raw, seed):
    sol = solution_from_dict(raw, "gfx942", 0)
    respelled = _respell(raw, BOOL_SOL_KEYS + BOOL_PT_KEYS, random.Random(seed))
    other = solution_from_dict(respelled, "gfx942", 0)
    assert other == sol
    assert kernel_key(other) == kernel_key(sol)


@settings(max_examples=100, deadline=None)
@given(solution_dicts(), st.integers(1, 64), st.sampled_from([1, 4, 16, -8]))
def test_kernel_key_ignores_runtime_arguments_only(raw, gsu, wgm):
    base = solution_from_dict(raw, "gfx942", 0)
    runtime = dict(raw, GlobalSplitU=gsu, WorkGroupMapping=wgm, StaggerU=0, SolutionIndex=1)
    changed = solution_from_dict(runtime, "gfx942", 0)
    # whether a MultipleBuffer solution splits K at all shapes its kernel; any other GSU change does not
    same_split = splits_into_workspace(changed) == splits_into_workspace(base)
    assert (kernel_key(changed) == kernel_key(base)) == same_split
    grouped = dict(raw, ProblemType=dict(raw["ProblemType"], GroupedGemm=not raw["ProblemType"]["GroupedGemm"]))
    assert kernel_key(solution_from_dict(grouped, "gfx942", 0)) == kernel_key(base)
    # ... but code-shaping values and the architecture do change it.
    assert kernel_key(solution_from_dict(dict(raw, LdsPadB=2), "gfx942", 0)) != kernel_key(base)
    assert kernel_key(solution_from_dict(raw, "gfx90a", 0)) != kernel_key(base)


@settings(max_examples=100, deadline=None)
@given(problem_dicts())
def test_problem_type_round_trips(raw):
    pt = problem_type_from_dict(raw)
    assert problem_type_from_dict(problem_type_to_dict(pt)) == pt
    assert pt.a_type is DataType(raw["DataType"])
    assert pt.name.startswith("Cijk_A")
