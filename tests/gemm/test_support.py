"""What the writer claims to build: the v1 family is accepted, each feature outside it is named."""

from __future__ import annotations

import attrs
import pytest

from tensile_lite.asm.errors import RegisterOverflow
from tensile_lite.asm.gemm import (
    Buildable,
    Rejected,
    build_plan,
    decide,
    generate,
    solution_layout,
    unsupported_details,
    unsupported_reasons,
)
from tensile_lite.asm.gemm.abi import must_split, splits_for_conversion, splits_in_kernel, splits_k
from tensile_lite.asm.gemm.features import epilogue_features
from tensile_lite.asm.gemm.layout import build_register_map
from tensile_lite.asm.gemm.plan import MULTIPLE_BUFFER
from tensile_lite.asm.gemm.preload import preload_dwords
from tensile_lite.asm.gemm.support import MAC_TYPES, TYPES
from tensile_lite.custom import CustomBuild
from tensile_lite.errors import BuildError
from tensile_lite.model import DataType, Params, ProblemType
from tests.gemm.devset import logic_files
from tests.gemm.solutions import TYPES as TYPE_NAMES
from tests.gemm.solutions import problem_type, solution

# The targets the writer is meant to build (written out here, independently of the registry).
GEMM_TARGETS = {
    "gfx90a",
    "gfx940",
    "gfx941",
    "gfx942",
    "gfx950",
    "gfx1100",
    "gfx1101",
    "gfx1102",
    "gfx1150",
    "gfx1151",
    "gfx1200",
    "gfx1201",
}


@pytest.mark.parametrize("types", sorted(TYPE_NAMES))
@pytest.mark.parametrize("trans", [(False, False), (False, True), (True, False), (True, True)])
def test_v1_family_is_supported(types: str, trans: tuple[bool, bool]) -> None:
    mi = (16, 16, 4) if types == "SS" else (16, 16, 16)
    for arch in ("gfx90a", "gfx942", "gfx950"):
        assert unsupported_reasons(solution(problem_type(types, *trans), arch=arch, mi=mi)) == ()
    assert (
        unsupported_reasons(solution(problem_type(types, *trans, batched=False, use_beta=False), mi=mi)) == ()
    )


def _pt(**extra: object) -> ProblemType:
    raw = {
        "DataType": "H",
        "DestDataType": "H",
        "ComputeDataType": "S",
        "HighPrecisionAccumulate": 1,
        "Batched": 1,
        **extra,
    }
    return ProblemType.from_params(Params.from_mapping(raw))


@pytest.mark.parametrize(
    "extra",
    [
        {"UseBias": 1, "BiasDataTypeList": [0, 4, 7]},
        {"UseBias": 2},
        {"UseBias": 3, "UseScaleAlphaVec": 3},
        {"Activation": 1, "ActivationType": "hipblaslt_all"},
        {"Activation": 1, "ActivationType": "all"},
        {"UseScaleAB": "Scalar"},
        {"UseScaleAB": "Vector"},
        {"UseScaleCD": 1},
        {"UseScaleAlphaVec": 2},
        {"GroupedGemm": 1},
        {"GroupedGemm": 1, "UseBias": 1, "Activation": 1, "ActivationType": "hipblaslt_all"},
    ],
)
def test_fused_epilogue_is_supported(extra: dict) -> None:
    assert unsupported_reasons(solution(_pt(**extra))) == ()


def test_gradient_bias_from_b_is_supported_without_a_conversion_kernel() -> None:
    pt = _pt(UseBias=1, Gradient=1, BiasSrc="B", BiasDataTypeList=[0, 7])
    assert unsupported_reasons(solution(pt)) == ()
    # MultipleBuffer's slices end before the epilogue and its conversion kernel has no B
    split = solution(pt, GlobalSplitU=2, GlobalSplitUAlgorithm="MultipleBuffer")
    assert "Gradient bias BiasSrc:B with GSU MultipleBuffer" in unsupported_reasons(split)


@pytest.mark.parametrize(
    "extra, feature",
    [
        # each gradient feature names itself; BGRADB (BiasSrc B, no E, no activation) is built (test_bias_grad.py)
        ({"UseBias": 1, "Gradient": 1, "BiasSrc": "D"}, "Gradient bias reduction BiasSrc:D"),
        ({"UseBias": 1, "Gradient": 1, "BiasSrc": "A"}, "Gradient bias reduction BiasSrc:A"),
        ({"UseBias": 1, "Gradient": 1, "BiasSrc": "B", "BiasDataTypeList": [0, 11]}, "Bias type:F8"),
        ({"UseE": 1, "Gradient": 1}, "Gradient E input"),
        (
            {"UseE": 1, "Gradient": 1, "Activation": 1, "ActivationType": "hipblaslt_all"},
            "Gradient activation (dgelu of E)",
        ),
        ({"Gradient": 1}, "Gradient"),
        ({"UseBias": 1, "BiasDataTypeList": [0, 11]}, "Bias type:F8"),
        (
            {"Activation": 1, "ActivationType": "hipblaslt_all", "ActivationComputeDataType": 4},
            "ActivationComputeDataType:H",
        ),
        ({"UseE": 1, "DataTypeE": "I8"}, "E type:I8"),
        ({"StridedBatched": 0}, "GeneralBatched"),
        ({"HighPrecisionAccumulate": 0}, "dtype:H without HPA"),
        # int8 with f32 compute and f16 mixed with bf16 are not built (test_int8.py / test_fp8.py: what is)
        ({"DataType": "I8", "DestDataType": "S", "ComputeDataType": "S"}, "dtype:I8/S/S"),
        ({"DataTypeA": "B"}, "dtype:BH/H mixed inputs"),
    ],
)
def test_problem_features_are_named(extra: dict, feature: str) -> None:
    assert feature in unsupported_reasons(solution(_pt(**extra)))


@pytest.mark.parametrize(
    "kwargs, feature",
    [
        # split-K through the runtime's beta-only kernel and atomics (MultipleBufferSingleKernel and
        # MultipleBuffer are built: test_splitk.py, test_postgsu.py)
        ({"GlobalSplitU": 2, "GlobalSplitUAlgorithm": "SingleBuffer"}, "GSU>1"),
        ({"GlobalSplitU": 2, "pt": {"OutputAmaxD": 1, "UseScaleCD": 1}}, "AmaxD with split-K"),
        ({"StreamK": 3}, "StreamK"),
        # amax and in-kernel split-K would both count arrivals in the Synchronizer
        (
            {
                "GlobalSplitU": 2,
                "GlobalSplitUAlgorithm": "MultipleBufferSingleKernel",
                "pt": {"OutputAmaxD": 1},
            },
            "AmaxD with split-K",
        ),
        ({"DirectToLds": 1}, "DirectToLds"),
        ({"CustomKernelName": "Custom_x"}, "CustomKernel"),
        ({"arch": "gfx1030"}, "arch:gfx1030"),
        # RDNA runs WMMA in wave32, as hipBLASLt does
        ({"arch": "gfx1100"}, "wave64"),
        ({"arch": "gfx908"}, "arch:gfx908"),
        (
            {
                "WorkGroup": [16, 8, 2],
                "wave_group": (2, 1),
                "GlobalSplitU": 2,
                "GlobalSplitUAlgorithm": "MultipleBufferSingleKernel",
            },
            "LocalSplitU with split-K",
        ),
        ({"ActivationFused": 0, "pt": {"Activation": 1, "ActivationType": "all"}}, "ActivationFused=0"),
    ],
)
def test_solution_features_are_named(kwargs: dict, feature: str) -> None:
    kwargs = dict(kwargs)
    pt = problem_type("HHS", **kwargs.pop("pt", {}))
    assert feature in unsupported_reasons(solution(pt, **kwargs))


@pytest.mark.parametrize("arch, supported", [("gfx942", True), ("gfx90a", False), ("gfx950", False)])
def test_xf32_needs_its_mfma(arch: str, supported: bool) -> None:
    pt = problem_type("SS", F32XdlMathOp="X")
    reasons = unsupported_reasons(solution(pt, arch=arch, mi=(16, 16, 8)))
    assert reasons == (() if supported else ("F32XdlMathOp:X",))


def test_scheduling_knobs_are_accepted() -> None:
    """Parameters that only reorder or relayout work never block a solution."""
    sol = solution(
        problem_type("BBS", True, False),
        PrefetchGlobalRead=1,
        PrefetchLocalRead=3,
        SourceSwap=1,
        **{"1LDSBuffer": 1},
        TransposeLDS=0,
        MIArchVgpr=1,
        NonTemporalA=4,
        WaveSeparateGlobalReadA=1,
        NumLoadsCoalescedA=2,
        ScheduleIterAlg=3,
        StorePriorityOpt=1,
        StoreSyncOpt=4,
        PreloadKernArgs=1,
        WorkGroupMapping=-8,
        StaggerU=32,
        AssertFree0ElementMultiple=8,
        ExpandPointerSwap=1,
        ClusterLocalRead=0,
        StoreRemapVectorWidth=4,
    )
    assert unsupported_reasons(sol) == ()


def test_dev_set_v1_solutions() -> None:
    """Only solutions of the family are accepted, with and without the fused epilogue."""
    supported = epilogue = 0
    for lf in logic_files():
        for sol in lf.solutions:
            reasons = unsupported_reasons(sol)
            pt = sol.problem_type
            if reasons:
                continue
            supported += 1
            assert sol.arch in GEMM_TARGETS
            if sol.matrix_instruction is None:
                # MAC kernels: f32 or f64 throughout, in the wave size the solution asks for
                assert pt.data_type in MAC_TYPES and pt.dest_type is pt.compute_type is pt.data_type
                continue
            # what hipBLASLt runs: MFMA in wave64 on CDNA, WMMA in wave32 on RDNA
            assert sol.wavefront_size == (64 if sol.arch.startswith("gfx9") else 32)
            assert (pt.data_type, pt.dest_type, pt.compute_type) in TYPES
            # LocalSplitU takes split-K through the conversion kernels only (MultipleBuffer)
            assert sol.runtime.global_split_u == 1 or (
                splits_k(sol) and (sol.workgroup[2] == 1 or not splits_in_kernel(sol))
            )
            # the one gradient built: BGRADB (the bias from B, no E, no activation)
            assert not pt.gradient or (pt.use_bias and pt.bias_src == "B" and not pt.use_e
                                       and epilogue_features(pt).activation == "none")
            assert not (pt.output_amax_d and must_split(sol))  # AmaxD: a GSU-1 kernel stays plain
            assert all(t in (DataType.S, DataType.H, DataType.B) for t in pt.bias_data_types if pt.use_bias)
            epilogue += bool(pt.use_bias)
    assert supported >= 300 and epilogue >= 100


def test_gate_verdict_is_what_generate_does() -> None:
    """Every dev-set solution: a rejected one makes `generate` raise with the gate's details (and the
    public names report the gate's reasons); a buildable one carries the plan, argument layout and
    preload the writer derives from the solution, and renders from the verdict (one per architecture
    and problem type here; the byte-identity check renders every kernel through `GemmKernel.of`)."""
    rendered: set[tuple[str, str]] = set()
    rejected = customs = fallbacks = 0
    for lf in logic_files():
        for sol in lf.solutions:
            verdict = decide(sol)
            assert unsupported_reasons(sol) == verdict.reasons and unsupported_details(sol) == verdict.details
            if isinstance(verdict, Rejected):
                rejected += 1
                assert verdict.reasons and len(verdict.details) <= len(verdict.reasons)
                with pytest.raises(BuildError) as err:
                    generate(sol)
                assert err.value.message == "the GEMM writer does not support " + "; ".join(verdict.details)
                continue
            if isinstance(verdict, CustomBuild):  # built from its own file (tests/custom), never written
                assert sol.is_custom and verdict.source == sol.custom_source and verdict.reasons == ()
                with pytest.raises(BuildError, match="its own file is its text"):
                    generate(sol)
                customs += 1
                continue
            assert isinstance(verdict, Buildable) and verdict.reasons == ()
            # the plan is the default one, or (only where the default's packing registers overflow)
            # the one that transposes narrow M/N-contiguous operands while writing them
            plan = verdict.plan
            if plan.split_k == MULTIPLE_BUFFER and not must_split(sol):
                # a GSU-1 MultipleBuffer kernel that takes the runtime's GSU: that plan with split-K on
                assert splits_for_conversion(sol)
                plan = attrs.evolve(plan, split_k="")
            packed = build_plan(sol)
            if plan != packed:
                assert plan == build_plan(sol, pack_narrow=False) and (
                    packed.a.pack > 1 or packed.b.pack > 1
                )
                with pytest.raises(RegisterOverflow):
                    build_register_map(
                        packed, sol.name or "kernel", solution_layout(sol), preload=preload_dwords(sol)
                    )
                fallbacks += 1
            assert verdict.layout == solution_layout(sol)
            assert verdict.preload == preload_dwords(sol)
            key = (sol.arch, sol.problem_type.name)
            if key not in rendered:
                rendered.add(key)
                assert f".amdhsa_kernel {sol.name}" in generate(sol, sol.name, decision=verdict)
    # the dev set's rejected solutions (gfx908, gradients, multi-block MFMAs): at most as many as are left
    # the dev set has solutions whose packing registers do not fit (the fallback is exercised)
    assert 0 < rejected <= 7 and len(rendered) >= 20 and customs == 8 and fallbacks > 0


def test_rejected_verdict_is_not_rendered() -> None:
    """A verdict handed to `generate` is trusted: a rejection raises without deciding again."""
    sol = solution(problem_type("HHS"))
    with pytest.raises(BuildError, match="does not support StreamK"):
        generate(sol, decision=Rejected(("StreamK",), ("StreamK",)))


@pytest.mark.parametrize(
    "kwargs, reason, numbers",
    [
        ({"wave_tile": (8, 8), "depth_u": 32}, "resources:LDS", "131072 bytes of LDS"),
        ({"wave_tile": (8, 8), "wave_group": (1, 1), "depth_u": 8}, "resources:AGPR", "1024 more AGPRs"),
    ],
)
def test_plan_objections_are_reasons_with_numbers(kwargs: dict, reason: str, numbers: str) -> None:
    """The plan's and the register map's objections come through the gate in the same pass: the short
    feature for ranking, the numbers in the details (and in generate's error)."""
    sol = solution(problem_type("SS"), mi=(32, 32, 2), **kwargs)
    verdict = decide(sol)
    assert verdict.reasons == (reason,)
    assert (
        len(verdict.details) == 1
        and verdict.details[0].startswith(f"{reason} (")
        and numbers in verdict.details[0]
    )
    with pytest.raises(BuildError, match=numbers):
        generate(sol)


def test_named_features_skip_the_plan_unless_details_need_it() -> None:
    """Features the checks name are the reasons as they are (no plan is built to explain them)."""
    sol = solution(
        problem_type("SS"), mi=(32, 32, 2), wave_tile=(8, 8), wave_group=(1, 1), depth_u=8, StreamK=3
    )
    assert decide(sol) == Rejected(("StreamK",), ("StreamK",))


def test_named_shape_gets_the_plans_numbers() -> None:
    """A named MI shape beside other named features: the reasons are the named features, the details
    the plan's explanation with its numbers (as `generate` reports them)."""
    verdict = decide(solution(_pt(Sparse=1), mi=(4, 4, 4)))
    assert verdict.reasons == ("Sparse", "MI:4x4")
    assert verdict.details == (
        "MI:4x4x4x1 (no f32 <- f16xf16 matrix instruction of shape 4x4x4 with 1 block(s) on gfx942)",
    )
