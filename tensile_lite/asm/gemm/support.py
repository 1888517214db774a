"""Which solutions the GEMM writer builds, and for the others the features in the way.

`unsupported_reasons(solution)` is empty exactly when `generate` can build a kernel that computes
the solution's results; otherwise it names short features (ranked by `tensile-lite coverage`).
The check is conservative: a feature is accepted only when the writer implements it or when it is
a pure scheduling/performance choice that cannot change results.

Family: gfx90a / gfx940 / gfx941 / gfx942 / gfx950 (wave64 MFMA), A/B in f16 or bf16 with f32
accumulation (HHS, HSS, BBS, BSS) or f32 (SS, and xf32 MFMAs for F32XdlMathOp X on gfx94x); on
gfx94x/gfx950 also 8-bit floats (F8, B8, F8B8, B8F8 to S/H/B/F8/B8) and f16 mixed with an 8-bit
operand (HF8, F8H to H/S; plan.py); int8 with int32 compute (I8II, I8I8; no epilogue terms beyond
alpha and beta); any transposes, strided batch or no batch, with or without beta,
single-block 16x16 / 32x32 MFMA, GSU 1 or split-K (in-kernel MultipleBufferSingleKernel, any GSU;
MultipleBuffer through the runtime's conversion kernels, f32 or int32 partial sums), LocalSplitU
(lsu.py; with MultipleBuffer split-K too); the fused epilogue (scales, bias,
activation, amax of D, the E output; no gradient); argType 0, 1 and 2 (grouped GEMM).

RDNA: gfx11 (gfx1100/1101/1102/1150/1151) and gfx12 (gfx1200/1201) in wave32 with the 16x16x16 WMMAs
(lanes.py): f16/bf16 with f32 accumulation, int8 (signed iu8), and on gfx12 fp8/bf8 and their mixes
(OCP), with the same epilogue and argument modes; split-K and amax are CDNA-only so far.

MAC (MatrixInstruction empty, mac.py): f32 or f64 throughout (A, B, D and compute), on any target the
writer builds for, in either wave size the target runs (RDNA wave64 included); GSU 1 and no LocalSplitU;
f64 takes no epilogue feature beyond alpha and beta (epilogue_f64.py).

The gate is `decide(solution)`: one pass over the feature checks and the plan (whose own `Unsupported`
raises and the register map's `RegisterOverflow` are reasons too) to either a `Buildable` carrying what
`writer.generate` needs or a `Rejected` carrying the reasons. The build, the library's `supported`
filter, `generate` and `tensile-lite coverage` all ask it; nothing else decides support.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import attrs

from tensile_lite.asm.errors import RegisterOverflow
from tensile_lite.asm.gemm.abi import (
    must_split,
    solution_layout,
    splits_for_conversion,
    splits_in_kernel,
    splits_k,
)
from tensile_lite.asm.gemm.epi import order as epi
from tensile_lite.asm.gemm.features import epilogue_features
from tensile_lite.asm.gemm.layout import build_register_map
from tensile_lite.asm.gemm.plan import MULTIPLE_BUFFER, GemmPlan, Unsupported, build_plan
from tensile_lite.asm.gemm.postgsu import COMPUTE_TYPES as POSTGSU_COMPUTE
from tensile_lite.asm.gemm.postgsu import supported as postgsu_supported
from tensile_lite.asm.gemm.preload import preload_dwords
from tensile_lite.asm.kernel import ArgumentLayout
from tensile_lite.custom.kernel import CustomBuild
from tensile_lite.model import DataType, ProblemType, Solution
from tensile_lite.model.newkeys import new_key_reasons
from tensile_lite.model.verdict import Accepted
from tensile_lite.targets import TARGETS

# The targets the writer builds for, with the wave size it builds (MFMA wave64 on CDNA, WMMA wave32
# on RDNA, as hipBLASLt runs them); gfx940/941 assemble with an older LLVM (find_toolchain_for).
_WAVE: Mapping[str, int] = MappingProxyType(
    {g: t.wavefront_size for g, t in TARGETS.items() if t.gemm_writer}
)
# The 8-bit float DataTypes (F8, B8 and the pairs F8B8, B8F8) and the single formats among them
_F8_TYPES = tuple(dt for dt in DataType if dt.is_8bit_float)
_F8_SINGLE = tuple(dt for dt in _F8_TYPES if dt.operand_types == (dt, dt))
# (DataType, D type, compute type) the writer builds, A and B both of DataType: the v1 family, and
# the 8-bit floats (gfx94x FNUZ, gfx950 OCP; fp8/bf8 MFMAs with f32 accumulation) to f32, f16,
# bf16 or (saturated) fp8/bf8
TYPES: frozenset[tuple[DataType, DataType, DataType]] = frozenset(
    {
        (DataType.H, DataType.H, DataType.S),
        (DataType.H, DataType.S, DataType.S),
        (DataType.B, DataType.B, DataType.S),
        (DataType.B, DataType.S, DataType.S),
        (DataType.S, DataType.S, DataType.S),
        *(
            (f8, dest, DataType.S)
            for f8 in _F8_TYPES
            for dest in (DataType.S, DataType.H, DataType.B, *_F8_SINGLE)
        ),
        # int8 inputs, i32 accumulation and epilogue, i32 or (saturated) int8 D
        (DataType.I8, DataType.I, DataType.I),
        (DataType.I8, DataType.I8, DataType.I),
    }
)
# The types of the MAC (non-matrix) kernels: A, B, D and compute all of one of these (mac.py)
MAC_TYPES: frozenset[DataType] = frozenset({DataType.S, DataType.D})
# Mixed inputs (A type, B type, D type) with DataType H: the 8-bit operand is widened to f16
# after the global read and multiplied by the f16 MFMAs (HF8 / F8H and their bf8 forms).
MIXED_TYPES: frozenset[tuple[DataType, DataType, DataType]] = frozenset(
    (*pair, dest)
    for f8 in _F8_SINGLE
    for pair in ((DataType.H, f8), (f8, DataType.H))
    for dest in (DataType.H, DataType.S)
)

# Tuning parameters that must hold one value for the writer to build the solution: what the
# writer implements. Everything not listed (PrefetchGlobalRead, PrefetchLocalRead, LdsPad*,
# TransposeLDS, 1LDSBuffer, SourceSwap, vector widths, NonTemporal*, MIArchVgpr, WaveSeparate*,
# NumLoadsCoalesced*, Schedule*, *PerMfma, ClusterLocalRead, Store*Opt, ExpandPointerSwap,
# StoreRemapVectorWidth (upstream's LDS transpose before the global store; our stores write each
# accumulator straight to its element, so the values are the same),
# PreloadKernArgs, WorkGroupMapping, StaggerU, Assert*ElementMultiple, ...) only chooses how the
# same results are scheduled or laid out, and is accepted whatever its value.
_REQUIRED: tuple[tuple[str, object, str], ...] = (
    ("StreamK", 0, "StreamK"),
    ("DirectToLds", 0, "DirectToLds"),
    ("DirectToVgprA", 0, "DirectToVgpr"),
    ("DirectToVgprB", 0, "DirectToVgpr"),
    ("BufferLoad", 1, "no BufferLoad"),
    ("BufferStore", 1, "no BufferStore"),
    ("Sparse", 0, "Sparse"),
    ("WorkGroupReduction", 0, "WorkGroupReduction"),
)


def _encoding_reason(sol: Solution) -> str | None:
    """A type whose code fixes its 8-bit encoding (7.x's OCP codes) on a target that computes another
    one (OCP fp8 on the FNUZ gfx94x): no instruction there reads it."""
    pt = sol.problem_type
    target = TARGETS.get(sol.arch)
    encoding = target.fp8 if target is not None else None
    for t in (pt.a_type, pt.b_type, pt.data_type, pt.dest_type, pt.e_type, *pt.bias_data_types):
        fixed = t.info.fixed_encoding
        if fixed is not None and not t.info.runs_on(encoding):
            return f"dtype:{t.letter} ({fixed}) on {sol.arch}"
    return None


def _dtype_reason(sol: Solution) -> str | None:
    pt = sol.problem_type
    encoding = _encoding_reason(sol)
    if encoding:
        return encoding
    if sol.matrix_instruction is None:
        # MAC kernels (mac.py): f32 or f64 throughout, no HighPrecisionAccumulate to honour
        if (pt.a_type, pt.b_type, pt.dest_type, pt.compute_type) == (
            pt.data_type,
        ) * 4 and pt.data_type in MAC_TYPES:
            return None
        return f"non-MFMA kernel dtype:{pt.a_type.letter}{pt.b_type.letter}/{pt.dest_type.letter}/{pt.compute_type.letter}"
    if pt.a_type is not pt.data_type or pt.b_type is not pt.data_type:
        if (
            pt.data_type is not DataType.H
            or pt.compute_type is not DataType.S
            or (pt.a_type, pt.b_type, pt.dest_type) not in MIXED_TYPES
        ):
            return f"dtype:{pt.a_type.letter}{pt.b_type.letter}/{pt.dest_type.letter} mixed inputs"
    elif (pt.data_type, pt.dest_type, pt.compute_type) not in TYPES:
        return f"dtype:{pt.data_type.letter}/{pt.dest_type.letter}/{pt.compute_type.letter}"
    if pt.data_type not in (DataType.S,) and not pt.high_precision_accumulate:
        return f"dtype:{pt.data_type.letter} without HPA"
    if pt.data_type is DataType.S and pt.f32_xdl_math_op not in (DataType.S, DataType.X):
        return f"F32XdlMathOp:{pt.f32_xdl_math_op.letter}"
    return None


def _epilogue_reasons(pt: ProblemType) -> list[str]:
    """The fused epilogue is built for f32 compute (int32 for the features that say so): each active
    feature's reasons (epi/), after the compute type's."""
    feat = epilogue_features(pt)
    active = epi.active(feat)
    out = []
    if any(pt.compute_type not in f.compute_types for f in active):
        out.append(f"epilogue compute type {pt.compute_type.letter}")
    for f in active:
        out += f.reasons(pt, feat, out)
    return out


def _problem_reasons(sol: Solution) -> list[str]:
    pt = sol.problem_type
    out = []
    dtype = _dtype_reason(sol)
    if dtype:
        out.append(dtype)
    out += _epilogue_reasons(pt)
    feat = epilogue_features(pt)
    feature_reasons = [r for f in epi.active(feat) for r in f.problem_reasons(pt, feat)]
    out += feature_reasons
    # each gradient feature names itself (epi/); the one gradient built is BGRADB (bias_grad.py: the
    # forward epilogue with the bias written from B); any other gradient problem type (E read as the
    # activation's input, DGELU) stays refused as a whole
    if pt.gradient and not feat.bgradb and not any(r.startswith("Gradient") for r in feature_reasons):
        out.append("Gradient")
    if pt.sparse:
        out.append("Sparse")
    if pt.stochastic_rounding:
        out.append("StochasticRounding")
    # Grouped problem types are launched through the argument tables (argType 1 and 2), which every
    # kernel serves (setup.load_arguments), as upstream's do.
    if not pt.strided_batched:
        out.append("GeneralBatched")
    if pt.params.get("UseInitialStridesAB") or pt.params.get("UseInitialStridesCD"):
        out.append("UseInitialStrides")
    if pt.params.get("ComplexConjugateA") or pt.params.get("ComplexConjugateB"):
        out.append("ComplexConjugate")
    if pt.params.get("MirrorDimsA") or pt.params.get("MirrorDimsB"):
        out.append("MirrorDims")
    if len(pt.indices_summation) != 1 or pt.num_indices_c not in (2, 3) or len(pt.indices_batch) > 1:
        out.append("non-GEMM contraction")
    return out


def _conversion_reasons(sol: Solution) -> list[str]:
    """Why a MultipleBuffer kernel of `sol` cannot leave its slices for the conversion kernels."""
    pt = sol.problem_type
    out = []
    if pt.compute_type not in POSTGSU_COMPUTE:
        out.append(f"GSU MultipleBuffer compute {pt.compute_type.letter}")
    if pt.output_amax_d:
        out.append("AmaxD with split-K")
    if not postgsu_supported(pt):
        out.append("GSU MultipleBuffer conversion of this problem type")
    if epilogue_features(pt).bias_from_b:
        # each slice's workgroup ends after storing its partial tile; the conversion kernel has no B
        out.append("Gradient bias BiasSrc:B with GSU MultipleBuffer")
    if sol.matrix_instruction is None:
        # the MAC kernels sum the whole K in each thread of one tile (mac.py)
        out.append("non-MFMA kernel with split-K")
    return out


def _solution_reasons(sol: Solution) -> list[str]:
    out = []
    if sol.arch not in _WAVE:
        out.append(f"arch:{sol.arch}")
    if sol.kernel_language != "Assembly":
        out.append("KernelLanguage:Source")
    wave = _WAVE.get(sol.arch, 64)
    mi = sol.matrix_instruction
    target = TARGETS.get(sol.arch)
    # MAC kernels run in either wave size the target has (RDNA's wave64 ones assemble with -mwavefrontsize64)
    mac_wave = mi is None and target is not None and sol.wavefront_size in target.wave_sizes
    if sol.wavefront_size != wave and not mac_wave:
        out.append(f"wave{sol.wavefront_size}")
    if wave == 32 and splits_in_kernel(sol):
        # the reduction's exec masks and cache maintenance are written for CDNA
        out.append("GSU MultipleBufferSingleKernel on RDNA")
    if wave == 32 and sol.problem_type.output_amax_d:
        out.append("AmaxD on RDNA")
    if mi is None:
        # the MAC kernels sum the whole K in each thread of one tile (mac.py)
        if must_split(sol):
            out.append("non-MFMA kernel with split-K")
        if sol.workgroup[2] != 1:
            out.append("non-MFMA kernel with LocalSplitU")
        if sol.problem_type.output_amax_d:
            out.append("non-MFMA kernel with AmaxD")
    elif mi.b == 1 and (mi.m, mi.n) not in ((16, 16), (32, 32)):
        # multi-block forms: the plan says which block layouts it lays out (plan.MULTI_BLOCK_ALONG_M)
        out.append(f"MI:{mi.m}x{mi.n}")
    if sol.runtime.global_split_u != 1 and not splits_k(sol):
        # SingleBuffer needs the runtime's beta-only kernel and atomics; MultipleBufferSingleKernel
        # reduces in the kernel itself (splitk.py), MultipleBuffer in the conversion kernel (postgsu.py)
        out.append("GSU>1")
    if splits_for_conversion(sol) and must_split(sol):
        out += _conversion_reasons(sol)
    if splits_in_kernel(sol) and sol.problem_type.output_amax_d:
        # both count arrivals in the Synchronizer: their counters would collide
        out.append("AmaxD with split-K")
    if splits_in_kernel(sol) and sol.problem_type.compute_type is not DataType.S:
        # the in-kernel reduction adds f32 partial sums
        out.append(f"GSU MultipleBufferSingleKernel compute {sol.problem_type.compute_type.letter}")
    if sol.workgroup[2] != 1 and splits_in_kernel(sol):
        # the in-kernel reduction's barriers take every wave of the workgroup (MultipleBuffer's
        # partial store is group 0's alone: the other groups end after the LDS reduction, lsu.py)
        out.append("LocalSplitU with split-K")
    if sol.workgroup[2] != 1 and sol.problem_type.output_amax_d:
        out.append("LocalSplitU with AmaxD")
    if sol.inner_unroll != 1:
        out.append("InnerUnroll")
    if epilogue_features(sol.problem_type).activation != "none" and not sol.tuning("ActivationFused"):
        # the activation would run in a separate kernel the library does not build
        out.append("ActivationFused=0")
    for key, want, feature in _REQUIRED:
        value = sol.tuning(key)
        if value is not None and value != want and feature not in out:
            out.append(feature)
    # keys new in ROCm 7.x logic files: the writer generates none of them, so each in use is a reason
    out += new_key_reasons(sol.params, sol.problem_type.params)
    return out


# Reasons whose details carry numbers (a resource or tiling limit) worth showing beside the feature.
_DETAILED = ("resources:", "tiling:", "MI:")


@attrs.frozen(slots=True)
class Buildable(Accepted):
    """The writer builds the solution: what `writer.generate` needs, decided once by `decide`.
    Picklable and small, so the build hands it to the workers instead of having them rebuild it."""

    plan: GemmPlan
    layout: ArgumentLayout
    preload: int  # kernarg dwords the hardware preloads (preload.py)


@attrs.frozen(slots=True)
class Rejected:
    """The writer cannot build the solution. `reasons` are short feature names (coverage ranks them,
    the build counts them and the library files carry them); `details` add the numbers where a
    resource or tiling limit is hit (generate's error message)."""

    reasons: tuple[str, ...]
    details: tuple[str, ...]


Decision = Buildable | Rejected | CustomBuild


def decide(sol: Solution) -> Decision:
    """The gate: `Buildable` when `generate` can build a kernel computing `sol`'s results, else
    `Rejected` with every feature the checks name, or the plan's or register map's first objection.
    A custom kernel is `CustomBuild` once its file has been read (custom/): its own assembly is built."""
    if sol.is_custom:
        if sol.custom_source is not None:
            return CustomBuild(sol.custom_source)
        # a solution made without the reader's merge (the reader fails when the file is missing)
        return Rejected(("CustomKernel",), ("CustomKernel (its file was not read)",))
    reasons = tuple(dict.fromkeys(_problem_reasons(sol) + _solution_reasons(sol)))
    if reasons and not any(r.startswith(_DETAILED) for r in reasons):
        return Rejected(reasons, reasons)
    # No named feature stands in the way, or one with numbers worth showing: the plan decides or explains.
    name = sol.name or "kernel"
    try:
        plan = build_plan(sol)
        layout = solution_layout(sol)
        preload = preload_dwords(sol)
        try:
            build_register_map(plan, name, layout, preload=preload)
        except RegisterOverflow:
            # the packing registers of narrow k_rows operands are what does not fit: transpose instead
            if not (plan.a.pack > 1 or plan.b.pack > 1):
                raise
            plan = build_plan(sol, pack_narrow=False)
            build_register_map(plan, name, layout, preload=preload)
    except Unsupported as exc:
        feature, detail = exc.feature, exc.detail
    except RegisterOverflow as exc:
        feature, detail = _overflow_feature(exc.message.replace(f"kernel {name}:", "", 1)), exc.message
    else:
        if reasons:
            return Rejected(reasons, reasons)
        return Buildable(_with_runtime_gsu(sol, plan, layout, preload, name), layout, preload)
    reasons = reasons or (feature,)
    detailed = any(r.startswith(_DETAILED) for r in reasons)
    return Rejected(reasons, (f"{feature} ({detail})",) if detailed else reasons)


def _with_runtime_gsu(sol: Solution, plan: GemmPlan, layout: ArgumentLayout, preload: int, name: str) -> GemmPlan:
    """A GSU-1 MultipleBuffer solution's plan as a split-K one where the conversion kernels serve its
    problem type and the registers fit: the kernel then takes the GSU the runtime passes (a user's
    override) and the library says so (internalArgsSupport.gsu), as upstream's kernels do. Otherwise
    the plain plan: the kernel runs GSU 1 and the library does not let the runtime change it."""
    if plan.split_k or not splits_for_conversion(sol) or _conversion_reasons(sol):
        return plan
    split = attrs.evolve(plan, split_k=MULTIPLE_BUFFER)
    try:
        build_register_map(split, name, layout, preload=preload)
    except RegisterOverflow:
        return plan
    return split


def unsupported_reasons(sol: Solution) -> tuple[str, ...]:
    """Short feature names standing between `sol` and a correct kernel; empty when buildable."""
    return decide(sol).reasons


def unsupported_details(sol: Solution) -> tuple[str, ...]:
    """Like `unsupported_reasons`, with the numbers where a resource or tiling limit is hit."""
    return decide(sol).details


def _overflow_feature(message: str) -> str:
    """The register class a RegisterOverflow message (without the kernel's name) names."""
    for cls in ("AGPR", "VGPR", "SGPR"):
        if cls in message:
            return f"resources:{cls}"
    return "resources:registers"


def runtime_overrides_read(sol: Solution, decision: Decision | None = None) -> dict[str, bool]:
    """Which runtime overrides in the argument header the kernel built for `sol` (`decision`, the gate's
    verdict: decided here when not given) acts on. Split-K kernels take the GSU from the header (any
    value, splitk.py): every MultipleBufferSingleKernel one, and the MultipleBuffer ones whose problem
    type the conversion kernels serve (`_with_runtime_gsu`); the others run GSU 1. Every kernel orders
    its tiles by the header's WorkGroupMapping and WGMXCC (wgm.py) and starts its summation where the
    header's StaggerU fields say (stagger.py).
    A custom kernel reads what its own custom.config says (merged into the solution), so nothing is taken away."""
    if sol.is_custom:
        return {"gsu": True, "wgm": True, "staggerU": True}
    verdict = decision if decision is not None else decide(sol)
    gsu = isinstance(verdict, Buildable) and bool(verdict.plan.split_k)
    return {"gsu": gsu, "wgm": True, "staggerU": True}
