"""Hand-made v1 solutions for the writer's tests: a problem type and a solution built through the
model's own constructors, so they are validated exactly like logic-file solutions."""

from __future__ import annotations

from typing import Any

from tensile_lite.model import Params, ProblemType, Solution

# (DataType, DestDataType) letters per v1 type name
TYPES = {"HHS": ("H", "H"), "HSS": ("H", "S"), "BBS": ("B", "B"), "BSS": ("B", "S"), "SS": ("S", "S")}
# f32 data on the xf32 MFMAs (F32XdlMathOp X, gfx94x)
XF32 = {"F32XdlMathOp": "X"}


def problem_type(types: str = "HHS", trans_a: bool = False, trans_b: bool = False, *, batched: bool = True,
                 use_beta: bool = True, **extra: Any) -> ProblemType:
    """A v1 problem type; `extra` adds raw ProblemType keys (UseBias, ActivationType, ...)."""
    data, dest = TYPES[types]
    raw: dict[str, Any] = {
        "OperationType": "GEMM", "DataType": data, "DestDataType": dest, "ComputeDataType": "S",
        "HighPrecisionAccumulate": data != "S", "TransposeA": trans_a, "TransposeB": trans_b,
        "Batched": batched, "UseBeta": use_beta, "SupportUserArgs": True,
    }
    if not batched:
        raw["NumIndicesC"] = 2
        raw["IndexAssignmentsA"] = [2, 0] if trans_a else [0, 2]
        raw["IndexAssignmentsB"] = [1, 2] if trans_b else [2, 1]
    raw.update(extra)
    return ProblemType.from_params(Params.from_mapping(raw))


def solution(pt: ProblemType, *, arch: str = "gfx942", mi: tuple[int, int, int] = (16, 16, 16),
             wave_tile: tuple[int, int] = (1, 1), wave_group: tuple[int, int] = (2, 2), depth_u: int = 32,
             index: int = 0, **tuning: Any) -> Solution:
    waves = wave_group[0] * wave_group[1]
    raw: dict[str, Any] = {
        "KernelLanguage": "Assembly", "MatrixInstruction": [mi[0], mi[1], mi[2], 1],
        "MIWaveTile": list(wave_tile), "MIWaveGroup": list(wave_group), "WorkGroup": [16, 4 * waves, 1],
        "ThreadTile": [1, 1], "DepthU": depth_u, "WavefrontSize": 64, "GlobalSplitU": 1,
        "WorkGroupMapping": 8, "WorkGroupMappingXCC": 1, "WorkGroupMappingXCCGroup": -1, "StaggerU": 0,
        "StaggerUStride": 256, "StaggerUMapping": 0, "GlobalReadVectorWidthA": 8,
        "GlobalReadVectorWidthB": 8, "LocalReadVectorWidth": 8, "VectorWidthA": 1, "VectorWidthB": 1,
        "StoreVectorWidth": 4, "LdsPadA": 8, "LdsPadB": 8, "LdsBlockSizePerPadA": 128,
        "LdsBlockSizePerPadB": 128, "TransposeLDS": 1, "PrefetchGlobalRead": 2, "PrefetchLocalRead": 1,
        "InnerUnroll": 1, "SolutionIndex": index,
    }
    raw.update(tuning)
    sol = Solution.from_params(pt, Params.from_mapping(raw), arch, index)
    if "NumElementsPerThread" in raw:
        return sol
    # what a logic file carries and the library entry needs (the split-K Synchronizer size predicate)
    raw["NumElementsPerThread"] = sol.macro_tile[0] * sol.macro_tile[1] // sol.num_threads
    return Solution.from_params(pt, Params.from_mapping(raw), arch, index)
