"""The kernel-argument contract: our layout equals upstream's kernels' metadata for the problem types
we build, and the packed bytes sit exactly where our kernels' metadata says."""

from __future__ import annotations

import json
import struct
from functools import cache
from pathlib import Path

import pytest

from tensile_lite.asm.gemm import argument_layout, kernel_arguments
from tensile_lite.asm.gemm.abi import solution_layout
from tensile_lite.errors import BuildError
from tensile_lite.host import EpilogueArgs, GemmProblem, internal_args, num_workgroups, pack_kernel_args
from tensile_lite.logic import read_logic_file
from tensile_lite.model import DataType
from tests.gemm.solutions import problem_type, solution
from tests.shared import dev_logic_files, shared_dir


@cache
def _reference_kernels(arch: str) -> list[dict]:
    return json.loads((shared_dir("reference", "kernels") / f"{arch}.json").read_text())


@cache
def _upstream_kernel_of(arch: str) -> dict[tuple[str, int], dict]:
    """(logic file name, index in it) -> upstream's kernel for that solution (its `.args` and name),
    through the reference's match table and the kernel names of its `.dat` files."""
    kernels = {k["name"]: k for k in _reference_kernels(arch)}
    names: dict[int, str] = {}
    for dat in (shared_dir("reference", "dat") / arch).glob("TensileLibrary_*.dat.json"):
        if "_lazy_" in dat.name:
            continue
        for entry in json.loads(dat.read_text()).get("solutions", []):
            names[entry["index"]] = entry["kernelName"]
    table = json.loads((shared_dir("reference", "match_table") / f"{arch}.json").read_text())
    return {(Path(row["logic_file"]).name, row["index_in_logic_file"]): kernels[names[row["solution_index"]]]
            for row in table if names.get(row["solution_index"]) in kernels}


def _ours(sol) -> list[tuple]:
    return [(p.offset, p.argument.size, p.argument.value_kind, p.argument.value_type)
            for p in solution_layout(sol).arguments]


def test_layout_matches_upstream_kernels() -> None:
    """Every dev-set solution whose arguments we describe (epilogue extras included, every
    architecture) has upstream's offsets, sizes and kinds; value types too where we name the
    element types. Split-K kernels that reduce in-kernel carry three more arguments and custom
    kernels their own layouts (both outside)."""
    checked, problem_types = 0, set()
    for path in dev_logic_files():
        lf = read_logic_file(path)
        try:
            argument_layout(lf.problem_type)
        except BuildError:
            continue
        upstream = _upstream_kernel_of(lf.arch)
        for index, sol in enumerate(lf.solutions):
            kernel = upstream.get((path.name, index))
            if kernel is None or sol.is_custom or sol.global_split_u_algorithm == "MultipleBufferSingleKernel":
                continue
            ours = _ours(sol)
            theirs = [(a["offset"], a["size"], a["value_kind"], a.get("value_type")) for a in kernel["args"]]
            typed = all(o[3] != "struct" for o in ours)
            assert [t[:3] for t in theirs] == [o[:3] for o in ours], kernel["name"]
            if typed:
                assert theirs == ours, kernel["name"]
            assert kernel["kernarg_segment_size"] == solution_layout(sol).segment_size
            checked += 1
            problem_types.add(lf.problem_type.name)
    assert checked >= 1000 and len(problem_types) >= 15


def test_worked_example_offsets() -> None:
    """spec/kernel_anatomy.md §1.5: HHS batched, 104 bytes, alpha at 96 and beta at 100."""
    layout = argument_layout(problem_type("HHS", True, False))
    offsets = {p.argument.name: p.offset for p in layout.arguments}
    assert offsets["SizesFree0"] == 16 and offsets["SizesSum0"] == 28
    assert [offsets[n] for n in "DCAB"] == [32, 40, 48, 56]
    assert offsets["strideD0"] == 64 and offsets["strideB1"] == 92
    assert (offsets["alpha"], offsets["beta"]) == (96, 100)
    assert layout.size == 104 and layout.segment_size == 104


def test_unbatched_and_no_beta_layouts_shrink() -> None:
    pt = problem_type("SS", batched=False, use_beta=False)
    names = [a.name for a in kernel_arguments(pt)]
    assert "SizesFree2" not in names and "strideA1" not in names and "beta" not in names
    assert argument_layout(pt).size == 16 + 3 * 4 + 4 * 8 + 4 * 4 + 4


@pytest.mark.parametrize("extra, refused", [({"StridedBatched": 0}, "batched pointer arrays"),
                                             ({"Sparse": 1}, "sparse"), ({"StochasticRounding": 1}, "RNDSeed")])
def test_undescribed_arguments_are_refused(extra: dict, refused: str) -> None:
    from tensile_lite.model import Params, ProblemType

    pt = ProblemType.from_params(Params.from_mapping({"DataType": "H", "DestDataType": "H",
                                                     "ComputeDataType": "S", "HighPrecisionAccumulate": 1,
                                                     "Batched": 1, **extra}))
    with pytest.raises(BuildError, match=refused):
        kernel_arguments(pt)


def test_epilogue_layout_in_runtime_order() -> None:
    """spec/kernel_anatomy.md §1.5 items 1-8 after beta; hipblaslt_all takes two f32 activation
    arguments before activationType (upstream's kernels; the spec's table says none)."""
    pt = problem_type("BBS", True, False, UseScaleAB="Scalar", UseScaleCD=True, UseScaleAlphaVec=3, UseBias=1,
                      BiasDataTypeList=[0, 7], Activation=True, ActivationType="hipblaslt_all")
    layout = argument_layout(pt)
    names = [p.argument.name for p in layout.arguments]
    assert names[names.index("beta") + 1:] == [
        "AddressScaleA", "AddressScaleB", "AddressScaleC", "AddressScaleD", "AddressScaleAlphaVec", "bias",
        "biasType", "StrideBias", "factorDim", "activationAlpha", "activationBeta", "activationType"]
    at = {p.argument.name: p.offset for p in layout.arguments}
    assert (at["AddressScaleA"], at["bias"], at["factorDim"], at["activationType"]) == (104, 144, 160, 172)
    assert layout.size == 176
    unfused = argument_layout(pt, activation_fused=False)
    assert "activationType" not in [p.argument.name for p in unfused.arguments]


def test_epilogue_values_decode_at_layout_offsets() -> None:
    pt = problem_type("HHS", False, False, UseScaleAB="Vector", UseScaleAlphaVec=1, UseBias=3,
                      BiasDataTypeList=[0, 4], Activation=True, ActivationType="all")
    sol = solution(pt)
    buffers = {"A": 1, "B": 2, "C": 3, "D": 4, "scaleA": 0x1000, "scaleB": 0x2000, "scaleAlphaVec": 0x3000,
               "bias": 0x4000}
    ep = EpilogueArgs(bias_type=DataType.H, stride_bias=77, factor_dim=1, activation=5, activation_args=(0.25,))
    blob = pack_kernel_args(sol, GemmProblem(8, 8, 8, 2), buffers, 1.0, 0.0, epilogue=ep)
    at = {p.argument.name: p.offset for p in argument_layout(pt).arguments}
    assert len(blob) == argument_layout(pt).size
    for name, key in (("AddressScaleA", "scaleA"), ("AddressScaleB", "scaleB"),
                      ("AddressScaleAlphaVec", "scaleAlphaVec"), ("bias", "bias")):
        assert struct.unpack_from("<Q", blob, at[name])[0] == buffers[key]
    u32 = {n: struct.unpack_from("<I", blob, at[n])[0] for n in ("biasType", "StrideBias", "factorDim",
                                                                  "activationType")}
    assert u32 == {"biasType": 4, "StrideBias": 77, "factorDim": 1, "activationType": 5}
    assert struct.unpack_from("<ff", blob, at["activationAlpha"]) == (0.25, 0.0)
    # defaults: null pointers, the first accepted bias type, no activation
    plain = pack_kernel_args(sol, GemmProblem(8, 8, 8, 2), {"A": 1, "B": 2, "C": 3, "D": 4}, 1.0)
    assert struct.unpack_from("<Q", plain, at["bias"])[0] == 0
    assert struct.unpack_from("<II", plain, at["biasType"]) == (0, 0)
    assert struct.unpack_from("<I", plain, at["activationType"])[0] == 0


def test_packed_bytes_decode_at_layout_offsets() -> None:
    pt = problem_type("HSS", False, True)
    sol = solution(pt, GlobalSplitU=1, WorkGroupMapping=-16, StaggerU=8, StaggerUStride=512)
    problem = GemmProblem(100, 70, 33, 3, strides_a=(101, 5000), strides_b=(71, 4000),
                          strides_c=(102, 9000), strides_d=(103, 9100))
    buffers = {"A": 0x7F1000000000, "B": 0x7F2000000000, "C": 0x7F3000000000, "D": 0x7F4000000000}
    blob = pack_kernel_args(sol, problem, buffers, 1.5, -2.0)
    layout = argument_layout(pt)
    assert len(blob) == layout.size
    at = {p.argument.name: p.offset for p in layout.arguments}

    def u32(name: str) -> int:
        return struct.unpack_from("<I", blob, at[name])[0]

    assert u32("Gemm info") == 1
    assert (u32("kernel info0"), u32("kernel info1")) == internal_args(sol)
    assert u32("kernel info1") & 0xFFFF == (-16) & 0xFFFF
    assert (u32("kernel info0") >> 16) & 0xFF == 8
    assert u32("numWG") == num_workgroups(sol, problem) == 4 * 3 * 3
    assert [u32(f"SizesFree{i}") for i in range(3)] + [u32("SizesSum0")] == [100, 70, 3, 33]
    for name in "ABCD":
        assert struct.unpack_from("<Q", blob, at[name])[0] == buffers[name]
    assert (u32("strideA0"), u32("strideA1"), u32("strideD0"), u32("strideD1")) == (101, 5000, 103, 9100)
    assert struct.unpack_from("<ff", blob, at["alpha"]) == (1.5, -2.0)


def test_packed_strides_default_to_dense() -> None:
    pt = problem_type("HHS", True, True)
    problem = GemmProblem(8, 4, 6, 2)
    assert problem.tensor_strides(pt, "A") == (6, 48)  # A is K x M (transposed): ld = K
    assert problem.tensor_strides(pt, "B") == (4, 24)  # B transposed: N x K, ld = N
    assert problem.tensor_strides(pt, "D") == (8, 32)
    assert problem.tensor_elements(pt, "A") == 96


def test_gradient_bias_from_b_layout_matches_upstream() -> None:
    """The dev set's gradient solutions (bias reduced from B; 2 on gfx941, 1 on gfx908) are refused by
    the gate, but their argument list is already the runtime's: bias pointer, biasType, StrideBias."""
    checked = 0
    for path in dev_logic_files():
        lf = read_logic_file(path)
        if not (lf.problem_type.gradient and lf.problem_type.use_bias):
            continue
        upstream = _upstream_kernel_of(lf.arch)
        for index, sol in enumerate(lf.solutions):
            kernel = upstream[(path.name, index)]
            assert [(a["offset"], a["size"], a["value_kind"]) for a in kernel["args"]] == \
                [o[:3] for o in _ours(sol)], kernel["name"]
            assert solution_layout(sol).arguments[-2].argument.name == "biasType"
            checked += 1
    assert checked == 3
