"""The kernel-argument contract: our layout equals upstream's kernels' metadata for the problem types
we build, and the packed bytes sit exactly where our kernels' metadata says."""

from __future__ import annotations

import json
import struct
from functools import cache
from pathlib import Path

import pytest

from tensile_lite.asm.gemm import GemmProblem, argument_layout, kernel_arguments, pack_kernel_args
from tensile_lite.asm.gemm.abi import internal_args, num_workgroups
from tensile_lite.errors import BuildError
from tensile_lite.logic import read_logic_file
from tests.gemm.solutions import problem_type, solution
from tests.shared import dev_logic_files, shared_dir

V1_FILES = ("Cijk_Ailk_Bljk_HHS_BH_UserArgs", "Cijk_Alik_Bljk_BBS_BH_UserArgs", "Cijk_Ailk_Bljk_SB_UserArgs")


@cache
def _reference_kernels(arch: str) -> list[dict]:
    return json.loads((shared_dir("reference", "kernels") / f"{arch}.json").read_text())


def _v1_logic_files() -> list[Path]:
    return [p for p in dev_logic_files() if p.stem.endswith(V1_FILES)]


def _ours(pt) -> list[tuple]:
    return [(p.offset, p.argument.size, p.argument.value_kind, p.argument.value_type)
            for p in argument_layout(pt).arguments]


def test_layout_matches_upstream_reference_kernels() -> None:
    files = _v1_logic_files()
    if not files:
        pytest.skip("no v1-family logic files in the dev set")
    checked = 0
    for path in files:
        lf = read_logic_file(path)
        pt = lf.problem_type
        ours = _ours(pt)
        size = argument_layout(pt).segment_size
        for kernel in _reference_kernels(lf.arch):
            # split-K kernels that reduce in-kernel carry three more arguments; they are outside v1
            if not kernel["name"].startswith(pt.name + "_MT") or "_GSUAMBSK_" in kernel["name"]:
                continue
            theirs = [(a["offset"], a["size"], a["value_kind"], a.get("value_type")) for a in kernel["args"]]
            assert theirs == ours, kernel["name"]
            assert kernel["kernarg_segment_size"] == size
            checked += 1
    assert checked >= 100  # three problem types, a few hundred upstream kernels


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


def test_extras_are_refused() -> None:
    from tensile_lite.model import Params, ProblemType

    pt = ProblemType.from_params(Params.from_mapping({"DataType": "H", "DestDataType": "H",
                                                     "ComputeDataType": "S", "HighPrecisionAccumulate": 1,
                                                     "Batched": 1, "UseBias": 1}))
    with pytest.raises(BuildError, match="bias"):
        kernel_arguments(pt)


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
