"""The writer's output as text and as a code object: deterministic, comment-free, assembled by the
real toolchain, with descriptor and metadata that match the plan and the argument contract."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from tensile_lite.asm.gemm import GemmKernel, argument_layout, build_plan, generate, kernel_name
from tensile_lite.asm.gemm.layout import build_register_map
from tensile_lite.codeobj.assemble import assemble, link
from tensile_lite.codeobj.elf import read_code_object
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.codeobj.worker import KernelSource
from tensile_lite.errors import BuildError
from tests.gemm.solutions import problem_type, solution


def test_text_is_deterministic_and_comment_free() -> None:
    sol = solution(problem_type("BBS", True, False), wave_tile=(2, 1))
    text = generate(sol)
    assert text == generate(sol)
    for marker in ("//", "/*", ";"):
        assert marker not in text
    name = kernel_name(sol)
    assert f".amdhsa_kernel {name}" in text and f"{name}:" in text


def test_kernel_source_is_frozen_and_picklable() -> None:
    sol = solution(problem_type("SS", False, True), mi=(16, 16, 4))
    kernel = GemmKernel.of(sol)
    assert isinstance(kernel, KernelSource)
    assert kernel.arch == "gfx942" and kernel.name == kernel_name(sol)
    clone = pickle.loads(pickle.dumps(kernel))
    assert clone == kernel and clone.assembly_text() == kernel.assembly_text()
    with pytest.raises(AttributeError):
        kernel.name = "other"  # type: ignore[misc]


def test_names_follow_kernel_identity() -> None:
    pt = problem_type("HHS")
    a = solution(pt, index=0)
    b = solution(pt, index=7, WorkGroupMapping=1, StaggerU=32)  # runtime arguments only
    c = solution(pt, LdsPadA=0)
    assert kernel_name(a) == kernel_name(b) != kernel_name(c)


def test_unsupported_solution_is_a_clear_build_error() -> None:
    sol = solution(problem_type("HHS"), GlobalSplitU=4, GlobalSplitUAlgorithm="SingleBuffer", index=12)
    with pytest.raises(BuildError) as err:
        generate(sol)
    assert "GSU>1" in str(err.value) and "#12" in str(err.value)


def test_resource_limit_names_the_numbers() -> None:
    from tensile_lite.asm.gemm import unsupported_details, unsupported_reasons

    big = solution(problem_type("SS"), mi=(16, 16, 4), wave_tile=(8, 8), wave_group=(2, 2), depth_u=64)
    assert unsupported_reasons(big) == ("resources:LDS",)
    (detail,) = unsupported_details(big)
    assert "bytes of LDS" in detail and "65536" in detail


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942", "gfx950"])
def test_code_object_matches_plan(arch: str, toolchain: Toolchain, tmp_path: Path) -> None:
    if not toolchain.check_target_ok(arch):
        pytest.skip(f"{toolchain.describe()} cannot assemble {arch}")
    pt = problem_type("HSS", False, True, UseBias=1, UseScaleAlphaVec=1, Activation=True,
                      ActivationType="hipblaslt_all")
    sol = solution(pt, arch=arch, mi=(32, 32, 8), wave_tile=(2, 2), wave_group=(2, 1), depth_u=32)
    name = kernel_name(sol)
    obj = assemble(toolchain, generate(sol, name), arch, tmp_path / "k.o")
    info = read_code_object(link(toolchain, [obj], tmp_path / "k.co"))
    assert info.names() == (name,)
    meta = info.kernel(name).metadata
    layout = argument_layout(sol.problem_type)
    assert [(a[".offset"], a[".size"]) for a in meta[".args"]] == \
        [(p.offset, p.argument.size) for p in layout.arguments]
    assert meta[".args"][-1][".name"] == "activationType"
    assert meta[".kernarg_segment_size"] == layout.segment_size
    plan = build_plan(sol)
    regs = build_register_map(plan, name, layout)
    assert meta[".group_segment_fixed_size"] == plan.lds_bytes
    assert meta[".vgpr_count"] == regs.counts.vgprs  # accumulation registers excluded
    assert meta[".max_flat_workgroup_size"] == sol.num_threads == 128
    assert regs.counts.agprs == 2 * 2 * 16
    assert not any(a[".value_kind"].startswith("hidden") for a in meta[".args"])
    assert info.metadata_version == (1, 1)


def test_pipeline_builds_gemm_kernels(toolchain: Toolchain, tmp_path: Path) -> None:
    """GemmKernel is a KernelSource the code-object pipeline assembles (in worker processes) and links."""
    from tensile_lite.codeobj.pipeline import BuildOptions, LibraryPlan, build_code_objects

    kernels = [GemmKernel.of(solution(problem_type(t, True, False), mi=(16, 16, 4) if t == "SS" else (16, 16, 16)))
               for t in ("HHS", "SS")]
    plan = LibraryPlan("TensileLibrary_test_gfx942", "gfx942", tuple(k.name for k in kernels))
    report = build_code_objects(toolchain, kernels, [plan], tmp_path, BuildOptions(jobs=2, progress="off"),
                                stream=None)
    assert report.kernels_assembled == 2
    (co,) = report.libraries
    assert set(read_code_object(co).names()) == {k.name for k in kernels}
