"""The verifier's parts without an emulator run: element rounding, tile orders, the reference and its
tolerance, problem sizing under predicates, and the runtime's view of a `.dat` entry."""

from __future__ import annotations

import struct
from typing import Any

import attrs
import numpy as np
import pytest

from tensile_lite.host import GemmProblem, internal_args, pack_kernel_args
from tensile_lite.library.solution_entry import solution_entry
from tensile_lite.model import DataType, Params, ProblemType, Solution
from tensile_lite.targets import get_target
from tensile_lite.verify import amax, epilogue, launch, runtime_args, splitk
from tensile_lite.verify.elements import ELEMENTS
from tensile_lite.verify.errors import NotVerifiable
from tensile_lite.verify.mapping import (
    ROW_MAJOR,
    Grid,
    TileOrder,
    launch_table,
    representative_tiles,
    workgroups_of,
)
from tensile_lite.verify.predicates import Call, evaluate
from tensile_lite.verify.problems import cases
from tensile_lite.verify.reference import expected
from tensile_lite.verify.runner import case_rng
from tensile_lite.verify.runtime_view import from_model, runtime_solution
from tensile_lite.verify.tensors import make_tensor


def _problem_type(data: str = "H", dest: str = "H", trans_a: bool = False, trans_b: bool = True,
                  batched: bool = True, **extra: Any) -> ProblemType:
    raw: dict[str, Any] = {"OperationType": "GEMM", "DataType": data, "DestDataType": dest, "ComputeDataType": "S",
                           "HighPrecisionAccumulate": data != "S", "TransposeA": trans_a, "TransposeB": trans_b,
                           "Batched": batched, "UseBeta": True, **extra}
    if not batched:
        raw.update(NumIndicesC=2, IndexAssignmentsA=[2, 0] if trans_a else [0, 2],
                   IndexAssignmentsB=[1, 2] if trans_b else [2, 1])
    return ProblemType.from_params(Params.from_mapping(raw))


def _solution(pt: ProblemType, **tuning: Any) -> Solution:
    raw: dict[str, Any] = {
        "KernelLanguage": "Assembly", "MatrixInstruction": [16, 16, 16, 1], "MIWaveTile": [2, 1],
        "MIWaveGroup": [2, 2], "WorkGroup": [16, 16, 1], "ThreadTile": [1, 1], "DepthU": 32, "WavefrontSize": 64,
        "GlobalSplitU": 1, "WorkGroupMapping": 8, "StaggerU": 0, "SolutionIndex": 0, **tuning,
    }
    return Solution.from_params(pt, Params.from_mapping(raw), "gfx942", 0)


def _entry(sol: Solution) -> dict[str, Any]:
    return solution_entry(sol, index=7, kernel_name="k", name="k_sol", arch="gfx942", cu_count=None)


# ---- elements -------------------------------------------------------------------------------------
def test_rounding_matches_hardware_conversions() -> None:
    x = np.random.default_rng(1).normal(scale=3.0, size=4000)
    assert np.array_equal(ELEMENTS[DataType.H].round(x), x.astype(np.float16).astype(np.float64))
    assert np.array_equal(ELEMENTS[DataType.S].round(x), x.astype(np.float32).astype(np.float64))
    bf = ELEMENTS[DataType.B]
    # ties go to even: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7
    assert list(bf.round(np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, -(1 + 2 ** -9)]))) == [1.0, 1 + 2 ** -6, -1.0]
    vals = bf.round(x)
    assert np.array_equal(bf.from_bits(bf.to_bits(vals)), vals)
    assert np.all(np.abs(vals - x) <= bf.half_ulp(np.abs(x)))


def test_half_ulp_and_random_inputs() -> None:
    h = ELEMENTS[DataType.H]
    assert h.half_ulp(np.array([1.0, 1.5, 2.0 ** -20]))[0] == 2.0 ** -11
    assert h.half_ulp(np.array([2.0 ** -20]))[0] == 2.0 ** -25  # subnormal spacing
    a = h.random(case_rng(5, "kernel", "full"), (64, 64))
    b = h.random(case_rng(5, "kernel", "full"), (64, 64))
    assert np.array_equal(a, b) and np.array_equal(h.round(a), a)
    assert not np.any((a != 0) & (np.abs(a) < 2.0 ** -14)), "no subnormal inputs"
    assert not np.array_equal(a, h.random(case_rng(6, "kernel", "full"), (64, 64)))


# ---- tile orders ----------------------------------------------------------------------------------
def test_row_major_and_one_to_one_orders() -> None:
    grid = Grid(4, 3, 2)
    assert [ROW_MAJOR.tile(grid, (w, 0, 0)) for w in (0, 1, 4, 12, 23)] == [
        (0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (3, 2, 1)]
    for wgm in (2, 3, 8, -2, -5):
        for n0, n1 in ((4, 3), (5, 7), (1, 6), (9, 1)):
            g = Grid(n0, n1, 2)
            order = TileOrder("wgm", wgm)
            tiles = [order.tile(g, w) for w in g.ids()]
            assert sorted(tiles) == sorted(ROW_MAJOR.tile(g, w) for w in g.ids()), (wgm, n0, n1)
    # WGM 2 on a 3x3 grid: the first two workgroups walk down a column of a 2-wide block
    g = Grid(3, 3, 1)
    assert [TileOrder("wgm", 2).tile(g, (w, 0, 0)) for w in range(4)] == [(0, 0, 0), (0, 1, 0), (1, 0, 0),
                                                                          (1, 1, 0)]


def test_order_from_header_word_and_xcc() -> None:
    order = TileOrder.from_info1(0xFFFD | (4 << 16) | (0x3FF << 22))
    assert (order.wgm, order.xcc, order.cu) == (-3, 4, 0x3FF)
    xcc = TileOrder("xcc", 1, xcc=2, cu=0)
    g = Grid(4, 2, 1)
    assert xcc.tile(g, (1, 0, 0)) == ROW_MAJOR.tile(g, (4, 0, 0))  # odd ids go to the second half
    assert sorted(xcc.tile(g, w) for w in g.ids()) == sorted(ROW_MAJOR.tile(g, w) for w in g.ids())
    assert len(launch_table(xcc, g)) == g.count


def test_representative_tiles() -> None:
    assert representative_tiles(Grid(3, 3, 2)) == [(0, 0, 0), (2, 0, 0), (0, 2, 0), (2, 2, 0), (2, 2, 1), (1, 1, 1)]
    assert representative_tiles(Grid(1, 1, 1)) == [(0, 0, 0)]


# ---- reference --------------------------------------------------------------------------------------
def test_reference_follows_the_index_layout_and_beta() -> None:
    pt = _problem_type("S", "S", trans_a=True, trans_b=False, batched=False)  # D[i,j] = sum_k A[k,i] B[k,j]
    p = GemmProblem(3, 2, 4)
    s = ELEMENTS[DataType.S]
    a = make_tensor(pt, p, "A", s, np.random.default_rng(0))
    b = make_tensor(pt, p, "B", s, np.random.default_rng(1))
    c = make_tensor(pt, p, "C", s, np.random.default_rng(2))
    d = make_tensor(pt, p, "D", s, None)
    assert a.letters == "ki" and a.shape == (4, 3) and b.letters == "kj"
    want = expected(pt, a, b, c, d.letters, d.shape, p.k, 0.5, -2.0)
    assert np.allclose(want.exact, 0.5 * a.values.T @ b.values - 2.0 * c.values, rtol=1e-15)
    mag = np.abs(a.values.T) @ np.abs(b.values)
    assert np.all(want.tolerance >= (4 + 3) * 2.0 ** -24 * 0.5 * mag)
    assert np.all(want.tolerance < 1e-5)
    zero_beta = expected(pt, a, b, None, d.letters, d.shape, p.k, 0.5, 0.0)
    assert np.allclose(zero_beta.exact, 0.5 * a.values.T @ b.values, rtol=1e-15)


def test_integer_reference_wraps_and_saturates() -> None:
    pt = ProblemType.from_params(Params.from_mapping({
        "OperationType": "GEMM", "DataType": "I8", "DestDataType": "I8", "ComputeDataType": "I",
        "HighPrecisionAccumulate": True, "TransposeA": False, "TransposeB": False, "Batched": True}))
    p = GemmProblem(2, 2, 3)
    i8 = ELEMENTS[DataType.I8]
    a = make_tensor(pt, p, "A", i8, np.random.default_rng(0))
    b = make_tensor(pt, p, "B", i8, np.random.default_rng(1))
    d = make_tensor(pt, p, "D", i8, None)
    want = expected(pt, a, b, None, d.letters, d.shape, p.k, 50, 0)
    raw = 50 * np.einsum("ilk,ljk->ijk", a.values, b.values)
    assert np.array_equal(want.exact, np.clip(raw, -128, 127)) and not want.tolerance.any()


# ---- problems and predicates -----------------------------------------------------------------------
def _predicate(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"type": "And", "value": list(parts)}


def test_cases_cover_the_required_shapes() -> None:
    rs = runtime_solution(_entry(_solution(_problem_type())), "gfx942")
    todo, notes = cases(rs, _entry(_solution(_problem_type())).get("problemPredicate"))
    by = {c.name: c for c in todo}
    # a GSU-1 MultipleBuffer kernel whose library lets the runtime override GSU: one more case, at GSU 2
    assert list(by) == ["full", "edges", "small", "alpha0", "k0", "override"]
    assert notes == ["case override runs with a user's GSU override of 2 (slices for the conversion kernel)"]
    assert {n: c.gsu for n, c in by.items()} == dict.fromkeys(by, None) | {"override": 2}
    assert by["override"].problem.k > 2 * rs.solution.depth_u and by["override"].beta != 0
    mt0, mt1 = rs.solution.macro_tile
    edges = by["edges"].problem
    assert edges.m % mt0 and edges.n % mt1 and edges.m > 2 * mt0 and edges.n > 2 * mt1
    assert edges.k % rs.solution.depth_u and edges.batch == 2 and edges.strides_a is not None
    assert by["full"].beta == 0 and by["edges"].beta != 0 and by["alpha0"].alpha == 0 and by["k0"].problem.k == 0
    assert by["small"].problem.m < mt0 and by["small"].problem.k < rs.solution.depth_u


def test_cases_respect_size_predicates() -> None:
    rs = runtime_solution(_entry(_solution(_problem_type())), "gfx942")
    pred = _predicate({"type": "Free0SizeMultiple", "index": 0, "value": 8},
                      {"type": "BoundSizeMultiple", "index": -1, "value": 32},
                      {"type": "LeadingFree1SizesGreaterOrEqual", "value": 40},
                      {"type": "BetaZero"}, {"type": "MysteryCheck", "value": 1})
    todo, notes = cases(rs, pred)
    assert todo and all(c.problem.m % 8 == 0 and c.problem.k % 32 == 0 and c.problem.n >= 40 and c.beta == 0
                        for c in todo)
    assert any("no K tail" in n for n in notes)
    unknown: set[str] = set()
    assert evaluate(pred, Call(rs.problem_type, todo[0].problem, 0.0), unknown) and unknown == {"MysteryCheck"}
    assert not evaluate(pred, Call(rs.problem_type, GemmProblem(12, 64, 64, 1), 0.0), set())


# ---- the runtime's view of a .dat entry ----------------------------------------------------------------
@pytest.mark.parametrize("data, dest, trans_a, trans_b, batched", [
    ("H", "H", False, True, True), ("S", "S", True, False, True), ("B", "S", True, True, False),
    ("H", "S", False, False, True)])
def test_runtime_view_packs_like_the_solution(data: str, dest: str, trans_a: bool, trans_b: bool,
                                              batched: bool) -> None:
    sol = _solution(_problem_type(data, dest, trans_a, trans_b, batched), StaggerU=4, StaggerUStride=1024,
                    WorkGroupMapping=-3, WorkGroupMappingXCC=2)
    rs = runtime_solution(_entry(sol), "gfx942")
    assert rs.solution.macro_tile == sol.macro_tile and rs.solution.num_threads == sol.num_threads
    assert rs.problem_type.name == sol.problem_type.name
    problem = GemmProblem(77, 45, 19, 3 if batched else 1)
    buffers = {"A": 0x1000, "B": 0x2000, "C": 0x3000, "D": 0x4000}
    assert pack_kernel_args(rs.solution, problem, buffers, 1.5, -0.5) == \
        pack_kernel_args(sol, problem, buffers, 1.5, -0.5)


def test_runtime_view_rejects_what_it_cannot_rebuild() -> None:
    entry = _entry(_solution(_problem_type()))
    entry["problemType"]["operationIdentifier"] = "Convolution_x"
    with pytest.raises(NotVerifiable, match="Convolution_x"):
        runtime_solution(entry, "gfx942")


def test_runtime_header_follows_the_declared_support() -> None:
    sol = _solution(_problem_type(), StaggerU=4, StaggerUStride=1024, WorkGroupMapping=-3, WorkGroupMappingXCC=2,
                    GlobalSplitUCoalesced=1)
    entry = _entry(sol)
    problem = GemmProblem(77, 45, 19, 2)
    buffers = {"A": 0x1000, "B": 0x2000, "C": 0x3000, "D": 0x4000}
    v2 = runtime_solution(entry, "gfx942")
    # version 2 with everything supported: what the writer's packer sends, with the device's CU count
    assert runtime_args.header_words(v2) == internal_args(sol, cu_count=get_target("gfx942").default_cu_count)
    assert runtime_args.tile_order(v2).wgm == -3 and runtime_args.tile_order(v2).xcc == 2
    entry["internalArgsSupport"].update(version=1)
    v1 = runtime_solution(entry, "gfx942")
    info0, info1 = runtime_args.header_words(v1)
    assert info1 == (-3) & 0xFFFFFFFF and not info0 & (1 << 15)  # WGM alone, no GSUC bit before version 2
    assert runtime_args.tile_order(v1).wgm == -3 and runtime_args.tile_order(v1).xcc == 1
    entry["internalArgsSupport"].update(version=2, wgm=False, staggerU=False)
    bare = runtime_solution(entry, "gfx942")
    assert runtime_args.header_words(bare) == (1 | (1 << 15), 0)
    entry["internalArgsSupport"].update(version=0)
    v0 = runtime_solution(entry, "gfx942")
    full = runtime_args.pack(v2, problem, buffers, 1.0, 0.5)
    short = runtime_args.pack(v0, problem, buffers, 1.0, 0.5)
    assert len(short) == len(full) - 8 and short[8:] == full[16:]
    assert [name for name, _, _ in runtime_args.layout(v0)][:3] == ["gemm_count", "internalArgs", "size_0"]
    entry["internalArgsSupport"].update(useUniversalArgs=False)
    with pytest.raises(NotVerifiable, match="legacy"):
        runtime_args.layout(runtime_solution(entry, "gfx942"))


def test_cd_strides_equal_keeps_c_and_d_alike() -> None:
    rs = runtime_solution(_entry(_solution(_problem_type())), "gfx942")
    pt = rs.problem_type
    free, _ = cases(rs, None)
    tied, _ = cases(rs, _predicate({"type": "CDStridesEqual"}))
    edges = next(c.problem for c in free if c.name == "edges")
    assert edges.tensor_strides(pt, "C") != edges.tensor_strides(pt, "D")
    edges = next(c.problem for c in tied if c.name == "edges")
    assert edges.tensor_strides(pt, "C") == edges.tensor_strides(pt, "D")


def test_from_model_goes_through_the_library_entry() -> None:
    sol = _solution(_problem_type("B", "S", True, False), WorkGroupMapping=4)
    rs = from_model(sol)
    assert rs.solution.macro_tile == sol.macro_tile and rs.size_mapping["workGroupMapping"] == 4
    assert rs.problem_type.name == sol.problem_type.name


def test_epilogue_inputs_and_their_reference() -> None:
    pt = _problem_type("S", "S", UseBias=3, UseScaleAlphaVec=3, UseScaleAB="Scalar", UseScaleCD=True,
                       BiasDataTypeList=["S", "H"], Activation=True, ActivationType="hipblaslt_all")
    p = GemmProblem(5, 3, 4, 2)
    s = ELEMENTS[DataType.S]
    ep_m = epilogue.make(pt, p, "full", np.random.default_rng(0))      # factor dimension M, bias type S
    ep_n = epilogue.make(pt, p, "edges", np.random.default_rng(0))     # factor dimension N, bias type H
    assert ep_m.args.factor_dim == 0 and ep_m.args.bias_type is DataType.S and ep_m.args.stride_bias == 5
    assert ep_n.args.factor_dim == 1 and ep_n.args.bias_type is DataType.H and ep_n.args.stride_bias == 3
    assert ep_m.buffers["bias"].size == 2 * 5 and ep_n.buffers["bias"].dtype == np.uint16
    assert set(ep_m.buffers) == {"scaleA", "scaleB", "scaleC", "scaleD", "scaleAlphaVec", "bias"}
    a = make_tensor(pt, p, "A", s, np.random.default_rng(1))
    b = make_tensor(pt, p, "B", s, np.random.default_rng(2))
    c = make_tensor(pt, p, "C", s, np.random.default_rng(3))
    d = make_tensor(pt, p, "D", s, None)
    want = expected(pt, a, b, c, d.letters, d.shape, p.k, 1.5, -0.5, ep_n)
    alpha_vec = s.from_bits(ep_n.buffers["scaleAlphaVec"])  # along N
    bias = ELEMENTS[DataType.H].from_bits(ep_n.buffers["bias"]).reshape(2, 3)  # [batch, n]
    for i, j, batch in ((0, 0, 0), (4, 2, 1), (2, 1, 1)):
        acc = sum(a.values[i, q, batch] * b.values[j, q, batch] for q in range(4))
        t = 1.5 * ep_n.scale_a * ep_n.scale_b * alpha_vec[j] * acc - 0.5 * ep_n.scale_c * c.values[i, j, batch]
        # `edges` runs relu (hipblaslt_all), after the bias and before scaleD
        assert want.exact[i, j, batch] == pytest.approx(max(t + bias[batch, j], 0.0) * ep_n.scale_d, rel=1e-12)
    with pytest.raises(NotVerifiable, match="gradient"):
        epilogue.check_supported(_problem_type("S", "S", UseE=True, Gradient=True))
    assert epilogue.make(_problem_type(), p, "full", np.random.default_rng(0)) is None


def test_xf32_inputs_widen_the_tolerance_by_their_rounding() -> None:
    """F32XdlMathOp X: the MFMA multiplies inputs rounded to 11 significant bits, so each product may be
    off by (1 + 2^-11)^2 - 1 of its magnitude; plain f32 keeps the accumulation bound alone."""
    f32 = _problem_type("S", "S", trans_a=True, trans_b=False, batched=False)
    xf32 = _problem_type("S", "S", trans_a=True, trans_b=False, batched=False, F32XdlMathOp="X")
    p = GemmProblem(6, 5, 40)
    s = ELEMENTS[DataType.S]
    a = make_tensor(f32, p, "A", s, np.random.default_rng(0))
    b = make_tensor(f32, p, "B", s, np.random.default_rng(1))
    d = make_tensor(f32, p, "D", s, None)
    plain = expected(f32, a, b, None, d.letters, d.shape, p.k, -1.5, 0.0)
    wide = expected(xf32, a, b, None, d.letters, d.shape, p.k, -1.5, 0.0)
    assert np.array_equal(plain.exact, wide.exact)
    mag = 1.5 * np.abs(a.values.T) @ np.abs(b.values)
    extra = wide.tolerance - plain.tolerance
    assert np.all(extra >= 2 * 2.0 ** -11 * mag) and np.all(extra <= 2.1 * 2.0 ** -11 * mag + 1e-7)
    # what the products of xf32-rounded inputs really give stays inside
    rounded_a = _to_xf32(a.values)
    rounded_b = _to_xf32(b.values)
    assert np.all(np.abs(-1.5 * rounded_a.T @ rounded_b - wide.exact) <= wide.tolerance)
    assert not np.all(np.abs(-1.5 * rounded_a.T @ rounded_b - plain.exact) <= plain.tolerance)


def _to_xf32(x: np.ndarray) -> np.ndarray:
    """f32 values rounded to nearest even at 11 significant bits (what an xf32 MFMA multiplies)."""
    mant, exp = np.frexp(x)
    return np.ldexp(np.round(mant * 2.0 ** 11) / 2.0 ** 11, exp)


def test_relu_cases_and_reference() -> None:
    """hipblaslt_all kernels run relu (activationType 5) in the `edges` and `small` cases; the reference
    clamps after the bias; a kernel whose activation is not fused takes none."""
    pt = _problem_type("S", "S", UseBias=1, BiasDataTypeList=["S"], Activation=True, ActivationType="hipblaslt_all")
    p = GemmProblem(7, 3, 5, 2)
    edges = epilogue.make(pt, p, "edges", np.random.default_rng(0))
    full = epilogue.make(pt, p, "full", np.random.default_rng(0))
    assert edges is not None and edges.relu and edges.args.activation == epilogue.RELU
    assert full is not None and not full.relu and full.args.activation == 0
    unfused = epilogue.make(pt, p, "edges", np.random.default_rng(0), activation_fused=False)
    assert unfused is not None and not unfused.relu and unfused.args.activation == 0
    only_act = _problem_type("S", "S", Activation=True, ActivationType="hipblaslt_all")
    assert epilogue.make(only_act, p, "small", np.random.default_rng(0)).relu  # type: ignore[union-attr]
    assert epilogue.make(only_act, p, "alpha0", np.random.default_rng(0)) is None
    s = ELEMENTS[DataType.S]
    a = make_tensor(pt, p, "A", s, np.random.default_rng(1))
    b = make_tensor(pt, p, "B", s, np.random.default_rng(2))
    d = make_tensor(pt, p, "D", s, None)
    with_relu = expected(pt, a, b, None, d.letters, d.shape, p.k, 1.0, 0.0, edges)
    without = expected(pt, a, b, None, d.letters, d.shape, p.k, 1.0, 0.0, attrs.evolve(edges, activation="none"))
    assert (without.exact < 0).any() and (without.exact > 0).any()
    assert np.array_equal(with_relu.exact, np.maximum(without.exact, 0.0))
    # the accumulated error carries over; only D's final rounding follows the clamped value
    kept = without.exact > 0
    assert np.array_equal(with_relu.tolerance[kept], without.tolerance[kept])
    assert np.all(with_relu.tolerance[~kept] > 0)


# ---- split-K and OutputAmaxD ----------------------------------------------------------------------
def _split_k_solution(gsu: int = 3, **tuning: Any) -> Solution:
    pt = _problem_type("H", "H", UseScaleCD=True)
    return _solution(pt, GlobalSplitU=gsu, GlobalSplitUAlgorithm="MultipleBufferSingleKernel",
                     NumElementsPerThread=8, **tuning)


@pytest.mark.parametrize("round_robin", [False, True])
def test_split_k_grid_runs_every_slice_of_a_tile(round_robin: bool) -> None:
    """GSU workgroups per tile, sliced as the kernel does (spec §5.5): per batch, wg0 = id % nwg0 and
    wg1' = id / nwg0 in [0, nwg1 x GSU), split as (wg1' / GSU, wg1' % GSU), or (wg1' % nwg1, wg1' / nwg1)
    round robin. Every (tile, slice) pair is one workgroup."""
    grid = Grid(3, 2, 2, gsu=4, gsu_round_robin=round_robin)
    assert (grid.tiles, grid.count, grid.launch_grid) == (12, 48, (48, 1, 1))
    pairs = [ROW_MAJOR.tile_and_slice(grid, w) for w in grid.ids()]
    assert sorted(pairs) == sorted(((i, j, b), g) for i in range(3) for j in range(2) for b in range(2)
                                   for g in range(4))
    for w in (0, 5, 7, 23, 30, 47):
        batch, rest = divmod(w, 3 * 2 * 4)
        wg1 = rest // 3
        tile1, g = (wg1 % 2, wg1 // 2) if round_robin else divmod(wg1, 4)
        assert ROW_MAJOR.tile_and_slice(grid, (w, 0, 0)) == ((rest % 3, tile1, batch), g)
    table = workgroups_of(ROW_MAJOR, grid)
    assert all(sorted(ROW_MAJOR.tile_and_slice(grid, w)[1] for w in ws) == [0, 1, 2, 3] for ws in table.values())
    assert Grid(3, 2, 2, three_d=True, gsu=4).launch_grid == (3, 8, 2)


def test_split_k_entry_packs_the_runtime_arguments() -> None:
    """globalAccumulation 3 in the entry: the runtime appends dstD, Synchronizer and GSUSync; with GSU > 1
    the workspace goes in D's place with packed D/C strides, and the header carries the call's GSU when the
    library lets the runtime override it."""
    sol = _split_k_solution()
    entry = _entry(sol)
    assert entry["sizeMapping"]["globalAccumulation"] == 3
    rs = runtime_solution(entry, "gfx942")
    assert rs.split_k and [n for n, _, _ in runtime_args.layout(rs)][-3:] == ["dstD", "Synchronizer", "GSUSync"]
    problem = GemmProblem(30, 20, 64, 2, strides_c=(31, 700), strides_d=(32, 800))
    buffers = {"A": 0x1000, "B": 0x2000, "C": 0x3000, "D": 0x4000, "workspace": 0x5000, "synchronizer": 0x6000}
    at = {name: offset for name, offset, _ in runtime_args.layout(rs)}

    def fields(blob: bytes) -> tuple[int, int, int, int, int]:
        return (struct.unpack_from("<I", blob, at["internalArgs"])[0] & 0x3FFF,
                struct.unpack_from("<Q", blob, at["d"])[0], struct.unpack_from("<I", blob, at["strideD1"])[0],
                struct.unpack_from("<Q", blob, at["dstD"])[0], struct.unpack_from("<Q", blob, at["Synchronizer"])[0])

    assert fields(runtime_args.pack(rs, problem, buffers, 1.0, 0.0)) == (3, 0x5000, 30, 0x4000, 0x6000)
    assert fields(runtime_args.pack(rs, problem, buffers, 1.0, 0.0, gsu=1)) == (1, 0x4000, 32, 0x4000, 0x6000)
    entry["internalArgsSupport"]["gsu"] = False
    fixed = runtime_solution(entry, "gfx942")
    assert runtime_args.launch_gsu(fixed, 1) == 3
    assert fields(runtime_args.pack(fixed, problem, buffers, 1.0, 0.0, gsu=1))[:2] == (3, 0x5000)


def test_split_k_cases() -> None:
    """K gives every slice a block and passes GlobalSplitUCheckMinK; edges keeps C/D packed (it runs split);
    small (padded C/D) and k0 (K 0) run with GSU 1, as the runtime's GSU override allows."""
    sol = _split_k_solution(gsu=5)
    entry = _entry(sol)
    rs = runtime_solution(entry, "gfx942")
    todo, notes = cases(rs, entry["problemPredicate"])
    by = {c.name: c for c in todo}
    assert list(by) == ["full", "edges", "small", "alpha0", "k0"]
    assert {n: c.gsu for n, c in by.items()} == {"full": 5, "edges": 5, "small": 1, "alpha0": 5, "k0": 1}
    du = sol.depth_u
    assert by["full"].problem.k == 5 * du and by["edges"].problem.k > 6 * du
    edges = by["edges"].problem
    assert edges.strides_a is not None and edges.strides_c is None and edges.strides_d is None
    assert by["small"].problem.strides_d is not None
    assert any("small ran with GSU 1 (padded C/D" in n for n in notes)
    assert any("k0 ran with GSU 1 (K below GlobalSplitUCheckMinK" in n for n in notes)
    assert launch.grid_of(rs, by["edges"]).count == 5 * launch.grid_of(rs, by["edges"]).tiles
    assert launch.grid_of(rs, by["small"]).gsu == 1
    # the inputs: a poisoned workspace only for GSU > 1, always a zeroed Synchronizer
    full = launch.make_inputs(rs, by["full"], np.random.default_rng(0)).extras
    small = launch.make_inputs(rs, by["small"], np.random.default_rng(0)).extras
    assert set(full) == {"workspace", "synchronizer"} and set(small) == {"synchronizer"}
    assert (full["workspace"] == splitk.POISON).all() and not full["synchronizer"].any()
    assert full["workspace"].size * 4 >= 5 * 128 * 64 * 4


def test_counters_left_and_amax_checks() -> None:
    assert splitk.check({"synchronizer": np.zeros(8, np.uint32)}) is None
    left = splitk.check({"synchronizer": np.array([0, 2, 0, 1], np.uint32)})
    assert left is not None and left.startswith("2 Synchronizer counters are not back to 0") and "[1] = 2" in left
    assert amax.sync_left(np.array([3, 0, 1], np.uint32), np.array([False, True, True])) is not None
    assert amax.sync_left(np.array([3, 0, 0], np.uint32), np.array([False, True, True])) is None
    pt = _problem_type("S", "S", UseScaleCD=True, OutputAmaxD=True)
    p = GemmProblem(5, 3, 4, 2)
    s = ELEMENTS[DataType.S]
    a = make_tensor(pt, p, "A", s, np.random.default_rng(1))
    b = make_tensor(pt, p, "B", s, np.random.default_rng(2))
    d = make_tensor(pt, p, "D", s, None)
    ep = epilogue.make(pt, p, "full", np.random.default_rng(0))
    assert ep is not None and abs(ep.scale_d) != 1
    want = expected(pt, a, b, None, d.letters, d.shape, p.k, 1.5, 0.0, ep)
    value, tolerance = want.amax()
    # the max of |D before scaleD|, within the largest error bound before scaleD
    assert value == pytest.approx(np.abs(want.exact / ep.scale_d).max(), rel=1e-12)
    assert 0 < tolerance < 1e-5 and tolerance == want.unscaled_error.max()
    out = amax.output_buffers(4)
    assert amax.mismatch(out[amax.OUT], want) == "AddrAmaxOut was never written"
    assert amax.untouched(out[amax.OUT]) is None
    assert (out[amax.WORKSPACE] == splitk.POISON).all() and out[amax.WORKSPACE].size == 4
    good = s.to_bits(np.array([value]))
    assert amax.mismatch(good, want) is None and amax.untouched(good) is not None
    off = s.to_bits(s.round(np.array([value + 2 * tolerance])))
    assert (amax.mismatch(off, want) or "").startswith("amax of D before scaleD = ")


def test_negative_scale_c_with_beta_zero_reads_c() -> None:
    """beta' = beta x scaleC is -0.0 for beta 0 and a negative scaleC: the kernel (like upstream's) reads C."""
    pt = _problem_type("S", "S", UseScaleCD=True)
    p = GemmProblem(5, 3, 4, 1)
    ep = epilogue.make(pt, p, "full", np.random.default_rng(0))
    assert ep is not None
    assert not epilogue.reads_c(0.0, attrs.evolve(ep, scale_c=0.5)) and not epilogue.reads_c(0.0, None)
    assert epilogue.reads_c(0.0, attrs.evolve(ep, scale_c=-0.5)) and epilogue.reads_c(0.5, None)
