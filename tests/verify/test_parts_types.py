"""The verifier's parts for 8-bit floats, int32 epilogues, the E output and MultipleBuffer split-K, without
an emulator run: element encodings against an independent model, the saturating and wrapping references,
E's layout and reference, the conversion kernel's workgroups and the runtime's view of such entries."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tensile_lite.emu.numeric import FP8_FORMATS
from tensile_lite.host import GemmProblem
from tensile_lite.host import conversion as host_conversion
from tensile_lite.library.solution_entry import solution_entry
from tensile_lite.model import DataType, Params, ProblemType, Solution
from tensile_lite.model.elements import float8_spec
from tensile_lite.verify import compare, contract, conversion, epilogue, launch
from tensile_lite.verify.elements import ELEMENTS, FLOAT8_ELEMENTS, element, operand_types
from tensile_lite.verify.errors import NotVerifiable
from tensile_lite.verify.mapping import Grid
from tensile_lite.verify.problems import cases
from tensile_lite.verify.reference import check_types, expected
from tensile_lite.verify.runtime_view import runtime_solution
from tensile_lite.verify.splitk import POISON
from tensile_lite.verify.tensors import make_tensor, read_back


def _pt(data: str, dest: str, compute: str = "S", **extra: Any) -> ProblemType:
    raw: dict[str, Any] = {"OperationType": "GEMM", "DataType": data, "DestDataType": dest, "ComputeDataType": compute,
                           "HighPrecisionAccumulate": True, "TransposeA": False, "TransposeB": True, "Batched": True,
                           "UseBeta": True, **extra}
    return ProblemType.from_params(Params.from_mapping(raw))


def _solution(pt: ProblemType, arch: str = "gfx942", **tuning: Any) -> Solution:
    raw: dict[str, Any] = {
        "KernelLanguage": "Assembly", "MatrixInstruction": [16, 16, 16, 1], "MIWaveTile": [2, 1],
        "MIWaveGroup": [2, 2], "WorkGroup": [16, 16, 1], "ThreadTile": [1, 1], "DepthU": 32, "WavefrontSize": 64,
        "GlobalSplitU": 1, "WorkGroupMapping": 8, "StaggerU": 0, "SolutionIndex": 0, **tuning,
    }
    return Solution.from_params(pt, Params.from_mapping(raw), arch, 0)


def _entry(sol: Solution) -> dict[str, Any]:
    return solution_entry(sol, index=3, kernel_name="k", name="k_sol", arch=sol.arch, cu_count=None)


# ---- 8-bit floats -------------------------------------------------------------------------------------
@pytest.mark.parametrize("encoding", ["fnuz", "ocp"])
@pytest.mark.parametrize("dt", [DataType.F8, DataType.B8])
def test_float8_elements_match_the_emulator_codec(encoding: str, dt: DataType) -> None:
    """The verifier's codec and the emulator's (two implementations written apart, sharing only the
    registry's field layout) agree: every code decodes alike, the largest finite value is the
    registry's, and quantising (RNE, saturating) gives the instruction's saturating conversion;
    representable values round-trip through their bits; the sentinel is a NaN."""
    el = FLOAT8_ELEMENTS[(dt, encoding)]
    fmt = str(dt.isa_format)
    hw = FP8_FORMATS[encoding][0 if dt is DataType.F8 else 1]
    codes = np.arange(256, dtype=np.uint8)
    values = hw.decode(codes).astype(np.float64)
    assert np.array_equal(el.from_bits(codes), values, equal_nan=True)
    assert el.max_value == hw.max_value == float8_spec(fmt, encoding).max_finite
    top = el.max_value
    x = np.concatenate([np.random.default_rng(3).uniform(-1.5 * top, 1.5 * top, 20000),
                        np.random.default_rng(4).normal(scale=0.05, size=20000), values[np.isfinite(values)]])
    # the midpoints between neighbouring codes: ties go to the even code
    finite = np.unique(el.float8.values[np.isfinite(el.float8.values)])
    # f32 values, as the instruction reads (the midpoints are exact in f32)
    x = np.concatenate([x, (finite[1:] + finite[:-1]) / 2]).astype(np.float32).astype(np.float64)
    rounded = el.round(x)
    assert np.array_equal(rounded, hw.decode(hw.encode(x, saturate=True)).astype(np.float64))
    assert np.array_equal(el.from_bits(el.to_bits(rounded)), rounded)
    assert np.isnan(el.from_bits(np.array([el.sentinel])))[0]
    # OCP keeps -0, FNUZ has none (0x80 is its NaN)
    assert int(el.to_bits(np.array([-0.0]))[0]) == (0x80 if encoding == "ocp" else 0)
    with pytest.raises(ValueError, match="exactly"):
        el.to_bits(np.array([top * 1.01 if dt is DataType.F8 else 1.1]))


def test_float8_elements_follow_the_target() -> None:
    assert element(DataType.F8, "gfx942").max_value == 240 and element(DataType.F8, "gfx940").float8.encoding == "fnuz"
    assert element(DataType.F8, "gfx1200").max_value == 448 and element(DataType.B8, "gfx950").float8.encoding == "ocp"
    assert element(DataType.F8, "gfx90a") is None and element(DataType.F8) is None
    assert element(DataType.H, "gfx90a") is ELEMENTS[DataType.H]
    assert operand_types(_pt("F8B8", "S")) == (DataType.F8, DataType.B8)
    assert operand_types(_pt("B8F8", "S")) == (DataType.B8, DataType.F8)
    assert operand_types(_pt("H", "H", DataTypeA="F8")) == (DataType.F8, DataType.H)
    check_types(_pt("F8B8", "F8"), "gfx942")
    check_types(_pt("H", "H", DataTypeB="B8"), "gfx1201")
    with pytest.raises(NotVerifiable, match=r"F8 of A .* on gfx90a"):
        check_types(_pt("F8B8", "S"), "gfx90a")
    # random inputs are representable and never subnormal
    el = element(DataType.B8, "gfx942")
    values = el.random(np.random.default_rng(0), (400,))
    assert np.array_equal(el.round(values), values) and not np.any((values != 0) & (np.abs(values) < 2.0 ** -15))


def test_saturating_fp8_output_reference() -> None:
    """fp8 D saturates: the reference is clamped to +-240 (FNUZ), so a kernel storing 240 for a sum far
    beyond it passes, and one storing the next value down (224) fails."""
    pt = _pt("F8", "F8")
    el = element(DataType.F8, "gfx942")
    p = GemmProblem(4, 3, 8, 1)
    a = make_tensor(pt, p, "A", el, np.random.default_rng(0))
    b = make_tensor(pt, p, "B", el, np.random.default_rng(1))
    d = make_tensor(pt, p, "D", el, None)
    want = expected(pt, a, b, None, d.letters, d.shape, p.k, 4000.0, 0.0, out=el)
    raw = 4000.0 * np.einsum("ilk,jlk->ijk", a.values, b.values)
    big = np.abs(raw) > 300
    assert big.any() and np.array_equal(want.exact[big], np.sign(raw[big]) * 240)
    got = el.round(raw)
    mask = np.ones(got.shape, dtype=bool)
    assert compare.mismatches(el.to_bits(got), got, want, el, mask) is None
    wrong = np.where(got == 240, 224.0, got)
    assert "differ" in (compare.mismatches(el.to_bits(wrong), wrong, want, el, mask) or "")
    # the relative tolerance of one fp8 rounding: half an ulp, at most 2^-4
    small = (np.abs(want.exact) > 1) & ~big
    assert np.all(want.tolerance[small] <= 2.0 ** -4 * np.abs(want.exact[small]) + 1e-3)


# ---- int32 epilogue ------------------------------------------------------------------------------------
def _int_pt(selector: str = "all") -> ProblemType:
    return _pt("I8", "I", "I", UseScaleAlphaVec=1, Activation=True, ActivationType=selector,
               ActivationComputeDataType="I")


def test_integer_epilogue_inputs() -> None:
    """int32 ScaleAlphaVec (never 0) and one i32 activation per case, with its arguments as the kernel
    takes them (activationType, then alpha / beta packed as i32)."""
    pt = _int_pt()
    epilogue.check_supported(pt)
    p = GemmProblem(6, 5, 8, 2)
    made = {c: epilogue.make(pt, p, c, np.random.default_rng(0)) for c in ("full", "edges", "small", "alpha0", "k0")}
    assert {c: ep.activation for c, ep in made.items() if ep} == {
        "full": "none", "edges": "relu", "small": "abs", "alpha0": "leakyrelu", "k0": "clippedrelu"}
    assert [made[c].args.activation for c in ("full", "edges", "small", "alpha0", "k0")] == [0, 5, 1, 4, 2]
    vec = made["full"].buffers["scaleAlphaVec"].view(np.int32)
    assert vec.size == 6 and np.all(vec != 0) and np.all(np.abs(vec) <= 4)
    assert np.array_equal(made["full"].row, vec) and np.all(made["full"].col == 1)
    # hipblaslt_all has relu only: the relu cases run it, the others none
    relu_only = epilogue.make(_int_pt("hipblaslt_all"), p, "small", np.random.default_rng(0))
    assert relu_only is not None and relu_only.activation == "relu"
    assert epilogue.make(_int_pt("hipblaslt_all"), p, "alpha0", np.random.default_rng(0)).activation == "none"
    with pytest.raises(NotVerifiable, match="bias with integer compute"):
        epilogue.check_supported(_pt("I8", "I", "I", UseBias=1, BiasDataTypeList=["I"]))


@pytest.mark.parametrize("case", ["edges", "small", "alpha0", "k0"])
def test_integer_epilogue_reference_wraps(case: str) -> None:
    """alpha * acc wraps to 32 bits, then the int vector, beta * C, the activation: element by element."""
    pt = _int_pt()
    p = GemmProblem(6, 5, 8, 2)
    i8, i32 = ELEMENTS[DataType.I8], ELEMENTS[DataType.I]
    a = make_tensor(pt, p, "A", i8, np.random.default_rng(1))
    b = make_tensor(pt, p, "B", i8, np.random.default_rng(2))
    c = make_tensor(pt, p, "C", i32, np.random.default_rng(3))
    d = make_tensor(pt, p, "D", i32, None)
    ep = epilogue.make(pt, p, case, np.random.default_rng(0))
    alpha, beta = 1 << 27, -3
    want = expected(pt, a, b, c, d.letters, d.shape, p.k, alpha, beta, ep)
    assert not want.tolerance.any()

    def wrap(v: int) -> int:
        return (v + 2 ** 31) % 2 ** 32 - 2 ** 31

    wrapped = 0
    for i, j, k in np.ndindex(6, 5, 2):
        acc = int(sum(int(a.values[i, q, k]) * int(b.values[j, q, k]) for q in range(8)))
        t = wrap(wrap(wrap(acc) * alpha) * int(ep.row[i]))
        t = wrap(t + wrap(beta * int(c.values[i, j, k])))
        wrapped += t != acc * alpha * int(ep.row[i]) + beta * int(c.values[i, j, k])
        kind, (x, y) = ep.activation, ep.activation_args
        t = {"relu": max(t, 0), "abs": wrap(max(-t, t)), "leakyrelu": t if t >= 0 else wrap(int(x) * t),
             "clippedrelu": min(int(y), t) if t > x else 0}[kind]
        assert want.exact[i, j, k] == t, (i, j, k)
    assert wrapped, "alpha 2^27 wraps some products"


# ---- UseE ----------------------------------------------------------------------------------------------
def test_e_output_layout_and_reference() -> None:
    """E has strides of its own (M + 5, then 7 more between batches), passed as StrideE, starts as the
    sentinel of its type, and its reference is the value after the bias and before relu and scaleD."""
    pt = _pt("H", "H", UseE=True, DataTypeE="B", UseBias=1, BiasDataTypeList=["S"], UseScaleCD=True,
             Activation=True, ActivationType="hipblaslt_all")
    epilogue.check_supported(pt)
    p = GemmProblem(7, 3, 5, 2)
    ep = epilogue.make(pt, p, "edges", np.random.default_rng(0))
    assert ep is not None and ep.e is not None and ep.relu
    assert ep.args.strides_e == (12, 12 * 3 + 7) and ep.e.element is ELEMENTS[DataType.B]
    assert ep.buffers["E"] is ep.e.flat and (ep.e.flat == ELEMENTS[DataType.B].sentinel).all()
    assert ep.e.flat.size == (12 * 3 + 7) + 2 * 12 + 6 + 1  # one past (m 6, n 2, batch 1)
    h = ELEMENTS[DataType.H]
    a = make_tensor(pt, p, "A", h, np.random.default_rng(1))
    b = make_tensor(pt, p, "B", h, np.random.default_rng(2))
    d = make_tensor(pt, p, "D", h, None)
    want = expected(pt, a, b, None, d.letters, d.shape, p.k, 1.0, 0.0, ep)
    assert want.e is not None
    assert (want.e.exact < 0).any()
    assert np.allclose(want.exact, np.maximum(want.e.exact, 0) * ep.scale_d, rtol=1e-12, atol=0)
    assert np.all(want.e.tolerance >= ELEMENTS[DataType.B].half_ulp(np.abs(want.e.exact)))
    # read back at E's strides: a value at E's elements is seen, the padding is not
    flat = ep.e.flat.copy()
    flat[ep.e.offsets[2, 1, 1]] = ELEMENTS[DataType.B].to_bits(np.array([1.0]))[0]
    _, values, outside = read_back(ep.e, flat)
    assert values[2, 1, 1] == 1.0 and (outside == ELEMENTS[DataType.B].sentinel).all()


# ---- MultipleBuffer split-K ----------------------------------------------------------------------------
def _mb_solution(gsu: int = 4, **tuning: Any) -> Solution:
    return _solution(_pt("H", "H"), GlobalSplitU=gsu, GlobalSplitUAlgorithm="MultipleBuffer", **tuning)


def test_multiple_buffer_entries_are_driven() -> None:
    """globalAccumulation 2 with GSU > 1 runs through the conversion kernel: launchable, cases at the
    solution's GSU with padded C/D kept, a poisoned workspace of GSU f32 slices."""
    entry = _entry(_mb_solution())
    assert entry["sizeMapping"]["globalAccumulation"] == 2
    rs = runtime_solution(entry, "gfx942")
    assert rs.multiple_buffer and not rs.split_k
    contract.check_launchable(rs)
    todo, _ = cases(rs, entry["problemPredicate"])
    by = {c.name: c for c in todo}
    assert by["full"].gsu == by["edges"].gsu == 4 and by["edges"].problem.strides_d is not None
    assert by["small"].problem.strides_d is not None
    assert by["full"].problem.k >= 4 * rs.solution.depth_u
    ws = launch.make_inputs(rs, by["edges"], np.random.default_rng(0)).extras["workspace"]
    p = by["edges"].problem
    assert ws.size == 4 * p.m * p.n * p.batch and (ws == POISON).all()
    assert conversion.needed(rs, 4) and not conversion.needed(rs, 1)
    grouped = _entry(_solution(_pt("H", "H", GroupedGemm=True, SupportUserArgs=True), GlobalSplitU=4,
                               GlobalSplitUAlgorithm="MultipleBuffer"))
    with pytest.raises(NotVerifiable, match="grouped GEMM with MultipleBuffer"):
        contract.check_launchable(runtime_solution(grouped, "gfx942"))


def test_conversion_variant_slices_and_workgroups() -> None:
    rs = runtime_solution(_entry(_mb_solution()), "gfx942")
    p = GemmProblem(70, 40, 64, 2)
    mt0, mt1 = rs.solution.macro_tile
    v = conversion.variant(rs, p, None, 3)
    assert v.gsu_bucket == 4 and v.vw == host_conversion.launch_vector_width(rs.problem_type, [p])
    assert v.name == host_conversion.conversion_name(rs.problem_type, None, 4, v.vw)
    # the tiles whose slices were written, from a workspace where only slice 2 of one element changed
    ws = np.full(3 * 70 * 40 * 2, POISON, np.uint32)
    ws[2 * 70 * 40 * 2 + 1 * 70 * 40 + 35 * 70 + 69] = 0  # (m 69, n 35, batch 1) of slice 2
    assert conversion.slices_written(rs, p, 3, ws) == {(69 // mt0, 35 // mt1, 1)}
    # the conversion workgroups of some tiles hold every element of them, and not all workgroups
    tiles = [(0, 0, 0), (69 // mt0, 35 // mt1, 1)]
    ids = conversion.workgroups(rs, p, v.vw, tiles)
    per = host_conversion.THREADS * v.vw
    covered = {e for w, _, _ in ids for e in range(w * per, (w + 1) * per)}
    mask = compare.tile_mask((70, 40, 2), rs.solution.macro_tile, tiles)
    i, j, b = np.nonzero(mask)
    assert set((i + 70 * j + 70 * 40 * b).tolist()) <= covered
    assert 0 < len(ids) < host_conversion.work_groups(rs.problem_type, p, v.vw)
    assert len(conversion.workgroups(rs, p, v.vw, None)) == host_conversion.work_groups(rs.problem_type, p, v.vw)
    assert launch.grid_of(rs, launch.Case("full", p, 1.0, 0.0, 3)) == Grid(-(-70 // mt0), -(-40 // mt1), 2, gsu=3)
