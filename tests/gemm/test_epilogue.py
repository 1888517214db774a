"""The fused epilogue on the emulator against numpy: scalar and vector scales, ScaleAlphaVec and bias
along M, N or the run-time factor dimension, every bias type (and an unknown one), batched bias
strides, each activation, scaleC/scaleD, beta zero and not, full and edge tiles, and the output
conversions' rounding and overflow.

Kernels are built once per module and run on several problems and argument sets; `-m slow` adds
dev-set sweeps.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from tensile_lite.asm.gemm.activation import KINDS
from tensile_lite.host import GemmProblem
from tensile_lite.model import DataType, Solution
from tests.gemm import harness
from tests.gemm.devset import supported_kernels
from tests.gemm.epilogue_ref import Epilogue
from tests.gemm.solutions import problem_type, solution

EPILOGUE = {"UseBias": 1, "BiasDataTypeList": [0, 4, 7], "Activation": True, "ActivationType": "hipblaslt_all",
            "UseScaleAlphaVec": 1}



def _run(build, sol: Solution, cases: list[tuple[GemmProblem, float, float, Epilogue]]) -> None:
    built, emu = build(sol)
    for problem, alpha, beta, ep in cases:
        result = harness.run(built, problem, alpha=alpha, beta=beta, emulator=emu, epilogue=ep, seed=problem.m)
        try:
            result.check()
        except AssertionError as exc:
            raise AssertionError(f"{built.name} on {problem}, alpha {alpha}, beta {beta}, {ep}: {exc}") from None


def _edge(pt, sol: Solution, batch: int = 2) -> GemmProblem:
    """Edges in M and N, a K remainder, batches and padded leading dimensions."""
    mt0, mt1 = sol.macro_tile
    return harness.padded(pt, mt0 + 5, mt1 + 3, sol.depth_u + 7, batch if pt.num_indices_c == 3 else 1)


def _full(sol: Solution) -> GemmProblem:
    mt0, mt1 = sol.macro_tile
    return GemmProblem(2 * mt0, mt1, sol.depth_u, 1)


@pytest.mark.parametrize("types", ["HHS", "BBS", "HSS"])
def test_bias_types_and_hipblaslt_activations(types: str, build) -> None:
    """hipblaslt_all kernels: bias of each accepted type chosen at run time, gelu/relu/none, with
    ScaleAlphaVec, in full and edge tiles, beta zero and not, bias shared or strided per batch."""
    pt = problem_type(types, True, False, **EPILOGUE)
    sol = solution(pt, wave_tile=(2, 1))
    edge = _edge(pt, sol)
    stride = edge.m + 4
    _run(build, sol, [
        (_full(sol), 1.0, 0.0, Epilogue(bias=DataType.S, activation="relu")),
        (edge, 0.5, -1.5, Epilogue(bias=DataType.H, activation="gelu", stride_bias=stride)),
        (edge, 1.5, 0.0, Epilogue(bias=DataType.B, activation="none")),
        (edge, 1.0, 2.0, Epilogue(bias=DataType.S, activation="relu", stride_bias=stride, vectors=False)),
        (edge, 1.0, 0.0, Epilogue(bias=None, activation="gelu")),
    ])


def test_unlisted_activation_and_bias_type_apply_nothing(build) -> None:
    """hipblaslt_all lists none/gelu/relu: silu (10) applies nothing; a biasType outside the list
    adds nothing."""
    pt = problem_type("HSS", False, False, UseBias=1, BiasDataTypeList=[0], Activation=True,
                      ActivationType="hipblaslt_all")
    sol = solution(pt)
    built, emu = build(sol)
    problem = _edge(pt, sol)
    plain = harness.run(built, problem, alpha=1.0, beta=0.5, emulator=emu, epilogue=Epilogue())
    plain.check()
    for ep in (Epilogue(activation="silu"), Epilogue(bias=DataType.H, bias_type=DataType.H)):
        # run with the kernel's arguments, compare with the identity epilogue
        result = harness.run(built, problem, alpha=1.0, beta=0.5, emulator=emu, epilogue=ep)
        assert np.array_equal(result.got, plain.got, equal_nan=True)


@cache
def _all_kernel() -> Solution:
    pt = problem_type("HSS", False, True, UseBias=2, BiasDataTypeList=[0], Activation=True, ActivationType="all")
    return solution(pt, wave_tile=(1, 2))


@pytest.mark.parametrize("kind", [k.name for k in KINDS])
def test_each_activation(kind: str, build) -> None:
    """An `all` kernel (bias along N) applies every forward activation, its arguments included."""
    sol = _all_kernel()
    args = {"clippedrelu": (0.25, 3.0), "leakyrelu": (0.1, 0.0), "tanh": (0.75, 1.5),
            "geluscaling": (1.25, 0.0)}.get(kind, (0.0, 0.0))
    _run(build, sol, [(_edge(sol.problem_type, sol, 1), 0.75, 0.5,
                       Epilogue(bias=DataType.S, activation=kind, activation_args=args))])


@pytest.mark.parametrize("use_bias, use_sav, factor_dims", [
    (2, 2, (0,)),          # both along N
    (1, 2, (0,)),          # upstream's shared factor dimension: max(1, 2) = N for both
    (3, 0, (0, 1)),        # run-time choice: M then N
    (0, 3, (0, 1)),
])
def test_factor_dimensions(use_bias: int, use_sav: int, factor_dims: tuple[int, ...], build) -> None:
    extra = {"UseScaleAlphaVec": use_sav}
    if use_bias:
        extra.update(UseBias=use_bias, BiasDataTypeList=[0, 7])
    pt = problem_type("BSS", False, False, **extra)
    sol = solution(pt, mi=(32, 32, 8), wave_tile=(1, 2), wave_group=(2, 1))
    _run(build, sol, [(_edge(pt, sol), 1.0, 0.5, Epilogue(bias=DataType.B if use_bias else None, factor_dim=f,
                                                          stride_bias=0))
                      for f in factor_dims])


def test_scale_ab_scalar_and_scale_cd(build) -> None:
    """alpha' = (alpha * scaleA) * scaleB, beta' = beta * scaleC, scaleD after the activation; null
    pointers mean 1.0, and scaleC = 0 makes beta' zero (C not read)."""
    pt = problem_type("HSS", True, True, UseScaleAB="Scalar", UseScaleCD=True, UseBias=1, BiasDataTypeList=[0],
                      Activation=True, ActivationType="hipblaslt_all")
    sol = solution(pt)
    edge = _edge(pt, sol)
    _run(build, sol, [
        (edge, 0.5, 1.5, Epilogue(scale_a=1.5, scale_b=-0.75, scale_c=0.5, scale_d=2.0, bias=DataType.S,
                                  activation="relu")),
        (edge, 1.0, -1.0, Epilogue(activation="gelu")),
        (edge, 1.0, 1.0, Epilogue(scale_a=0.25, scale_c=0.0, scale_d=-1.0)),
    ])


def test_scale_ab_vector(build) -> None:
    pt = problem_type("BBS", False, True, UseScaleAB="Vector", UseScaleAlphaVec=1)
    sol = solution(pt, wave_tile=(1, 3))
    edge = _edge(pt, sol)
    _run(build, sol, [(edge, 0.5, -0.5, Epilogue()), (edge, 1.0, 0.0, Epilogue(vectors=False))])


@pytest.mark.parametrize("types", ["HHS", "BBS"])
def test_conversion_rounds_to_nearest_even_and_overflows(types: str, build) -> None:
    """K = 1: alpha * a * b is exact in f32 (f16: alpha a power of two; bf16: the reference rounds
    through f32 as the kernel does), so D must be its RNE rounding bit for bit, and values past the
    largest finite must become infinities."""
    pt = problem_type(types, False, False, **EPILOGUE)
    sol = solution(pt)
    built, emu = build(sol)
    big = 2.0 ** 17 if types == "HHS" else float(np.finfo(np.float32).max)
    for alpha in (1.0, big):
        result = harness.run(built, GemmProblem(37, 21, 1, 1), alpha=alpha, emulator=emu,
                             epilogue=Epilogue(vectors=False))
        result.check_exact()
    assert np.isinf(result.got).any() and np.isfinite(result.got).any()


def _dev_epilogue_kernels() -> list[Solution]:
    try:
        sols = [s for s in supported_kernels() if s.problem_type.use_bias]
    except BaseException:  # shared material absent: the test itself will skip
        return []
    return sorted(sols, key=lambda s: (s.macro_tile[0] * s.macro_tile[1] * s.depth_u, s.index))


def _dev_cases(sol: Solution) -> list[tuple[GemmProblem, float, float, Epilogue]]:
    """Each of the kernel's bias types (the last one strided per batch), gelu and relu."""
    pt = sol.problem_type
    edge = _edge(pt, sol)
    first, last = pt.bias_data_types[0], pt.bias_data_types[-1]
    return [(edge, 0.5, -1.0, Epilogue(bias=last, activation="gelu", stride_bias=edge.m + 1)),
            (_full(sol), 1.0, 0.0, Epilogue(bias=first, activation="relu"))]


@pytest.mark.parametrize("index", range(3))
def test_dev_set_epilogue_sample(index: int, build) -> None:
    """The smallest dev-set kernels with the fused epilogue (bf16 bias, ScaleAlphaVec, hipblaslt_all)."""
    sols = _dev_epilogue_kernels()
    if len(sols) <= index:
        pytest.skip("no dev-set epilogue kernels")
    sol = sols[index]
    _run(build, sol, _dev_cases(sol))


@pytest.mark.slow
def test_dev_set_epilogue_all(build) -> None:
    sols = _dev_epilogue_kernels()
    assert sols
    for sol in sols:
        _run(build, sol, _dev_cases(sol))


@pytest.mark.parametrize("arch, types, e_type", [("gfx942", "HHS", "H"), ("gfx942", "BBS", "B"),
                                                 ("gfx90a", "HSS", "S"), ("gfx942", "HHS", "S")])
def test_e_output(arch: str, types: str, e_type: str, build) -> None:
    """UseE: E = the value after the bias and before the activation, in DataTypeE, at E's own strides;
    D gets the activation. Full tiles (vector stores) and edges (element stores, nothing outside)."""
    pt = problem_type(types, True, False, UseE=True, DataTypeE=e_type, UseBias=1, BiasDataTypeList=[0, 4],
                      Activation=True, ActivationType="hipblaslt_all", UseScaleAlphaVec=1)
    mi = (32, 32, 8) if arch == "gfx90a" else (16, 16, 16)
    sol = solution(pt, arch=arch, mi=mi, wave_tile=(2, 2) if arch == "gfx942" else (1, 1))
    edge = _edge(pt, sol)
    _run(build, sol, [
        (_full(sol), 1.0, 0.0, Epilogue(bias=DataType.S, activation="relu")),
        (edge, 0.5, -1.5, Epilogue(bias=DataType.H, activation="gelu", stride_bias=edge.m + 4)),
        (edge, 1.0, 0.0, Epilogue(activation="none")),
    ])
