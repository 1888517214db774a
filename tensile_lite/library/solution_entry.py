"""One solution as a `.dat` entry: its predicates, size mapping, argument support and problem type.

Field names, value types (bool vs int matters: the runtime's msgpack reader converts strictly) and
predicate order follow what the hipBLASLt runtime reads. Every value comes from the frozen model plus the
re-derivations in `derived`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tensile_lite.library import activation, derived
from tensile_lite.library.entry_schema import (
    SCHEMA_2024,
    EntrySchema,
    KernelFacts,
    size_fields,
    task_predicate,
)
from tensile_lite.library.predicates import Node, conjunction, hardware, pred
from tensile_lite.library.problem_view import ProblemView
from tensile_lite.library.spelling import SPELLING_2024, TypeSpelling
from tensile_lite.model.params import plain
from tensile_lite.model.solution import Solution

# Assertions a solution may carry, in the order upstream emits them (its default-parameter order),
# with the predicate each becomes and that predicate's index.
_MULTIPLE_ASSERTS: tuple[tuple[str, str, int], ...] = (
    ("AssertSummationElementMultiple", "BoundSizeMultiple", -1),
    ("AssertFree0ElementMultiple", "Free0SizeMultiple", 0),
    ("AssertFree1ElementMultiple", "Free1SizeMultiple", 0),
)
_AI_ASSERTS: tuple[tuple[str, str], ...] = (
    ("AssertAIGreaterThanEqual", "AIGreaterThanEqual"),
    ("AssertAILessThanEqual", "AILessThanEqual"),
)

# solution -> {"gsu": bool, "wgm": bool, "staggerU": bool}: what the kernel reads from the argument header
Honoured = Callable[[Solution], Mapping[str, bool]]


def problem_type_entry(v: ProblemView, names: TypeSpelling = SPELLING_2024,
                       schema: EntrySchema = SCHEMA_2024) -> dict[str, Any]:
    n = names.name
    # the newest reader takes one compute input type per operand; A and B share ours
    split = {"computeInputTypeA": n(v.compute_input_type), "computeInputTypeB": n(v.compute_input_type)} \
        if schema.compute_input_ab else {}
    return {
        "operationIdentifier": v.operation_identifier,
        "transA": v.trans_a, "transB": v.trans_b,
        "computeInputType": n(v.compute_input_type), **split,
        "aType": n(v.a_type), "bType": n(v.b_type),
        "cType": n(v.c_type), "dType": n(v.c_type), "eType": n(v.e_type),
        "computeType": n(v.compute_type),
        "useBeta": v.use_beta, "useBias": v.use_bias, "biasSrcWhiteList": [v.bias_source],
        "useE": v.use_e, "useScaleAB": v.use_scale_ab, "useScaleCD": v.use_scale_cd,
        "useScaleAlphaVec": v.use_scale_alpha_vec,
        "biasDataTypeWhiteList": [n(t) for t in v.bias_data_types],
        "highPrecisionAccumulate": v.high_precision_accumulate,
        "useInitialStridesAB": v.use_initial_strides_ab, "useInitialStridesCD": v.use_initial_strides_cd,
        "stridedBatched": v.strided_batched, "groupedGemm": v.grouped_gemm, "useGradient": v.gradient,
        "activationType": activation.enum_name(v.activation),
        "activationArgLength": activation.argument_count(v.activation),
        "activationComputeDataType": n(v.activation_compute_type),
        "activationNoGuard": v.activation_no_guard, "sparse": v.sparse,
        "f32XdlMathOp": n(v.f32_xdl_math_op), "supportDeviceUserArguments": v.support_user_args,
        "outputAmaxD": v.output_amax_d,
    }


def type_predicates(v: ProblemView, names: TypeSpelling = SPELLING_2024,
                    schema: EntrySchema = SCHEMA_2024) -> list[Node]:
    """What selects a problem type: the master library's row predicate (and part of every solution's)."""
    n = names.name
    inputs = (v.compute_input_type,) * (2 if schema.compute_input_ab else 1)
    return [
        pred("TypesEqual", [n(t) for t in (v.a_type, v.b_type, v.c_type, v.c_type, *inputs)]),
        pred("HighPrecisionAccumulate", v.high_precision_accumulate),
        pred("Activation", activation.enum_name(v.activation)),
        pred("ActivationComputeType", n(v.activation_compute_type)),
        pred("ActivationNoGuard", v.activation_no_guard),
        pred("UseGradient", v.gradient),
        pred("UseBias", v.use_bias),
        pred("UseE", v.use_e),
        *([pred("DataTypeE", n(v.e_type))] if schema.new_problem_checks else []),
        pred("StridedBatched", v.strided_batched),
        pred("GroupedGemm", v.grouped_gemm),
        pred("UseScaleAB", v.use_scale_ab),
        pred("UseScaleCD", v.use_scale_cd),
        pred("UseScaleAlphaVec", v.use_scale_alpha_vec),
        pred("Sparse", v.sparse),
        pred("F32XdlMathOp", n(v.f32_xdl_math_op)),
        pred("SupportDeviceUserArguments", v.support_user_args),
        *([pred("SwizzleTensorA", False), pred("SwizzleTensorB", False)] if schema.new_problem_checks else []),
    ]


def operation_predicates(v: ProblemView, names: TypeSpelling = SPELLING_2024) -> list[Node]:
    out = [pred("OperationIdentifierEqual", v.operation_identifier)]
    if not v.use_beta:
        out.append(pred("BetaZero"))
    out += [
        pred("BiasDataTypeWhiteList", [names.name(t) for t in v.bias_data_types]),
        pred("BiasSrcWhiteList", [v.bias_source]),
        pred("AmaxDCheck", v.output_amax_d),
    ]
    if v.activation in activation.SELECTORS:
        out.append(pred("ActivationEnumWhiteList",
                        list(activation.white_list(v.activation, v.activation_compute_type, v.gradient))))
    return out


def _assertion_predicates(sol: Solution, schema: EntrySchema) -> list[Node]:
    out = []
    for key, tag, index in _MULTIPLE_ASSERTS:
        value = sol.tuning(key)
        if value != 1:
            out.append(pred(tag, value, index))
    for key, tag in _AI_ASSERTS:
        value = sol.tuning(key)
        if value > 0:
            out.append(pred(tag, value))
    check = derived.workspace_check(sol)
    if schema.workspace_in_problem and any(check):
        out.append(pred("WorkspaceCheck", list(check), 0))
    return out


def _kernel_predicates(sol: Solution, v: ProblemView, schema: EntrySchema) -> list[Node]:
    """Limits of the kernel itself: minimum sizes, buffer offset ranges, determinism, GSU minimum K."""
    out = []
    mt0, mt1 = sol.macro_tile
    grvw_a, grvw_b = sol.global_read_vector_width_a, sol.global_read_vector_width_b
    if "BatchSizeEqual" in sol.params:
        out.append(pred("BatchSizeEqual", sol.params["BatchSizeEqual"], 0))
    if derived.synchronizer_size_check(sol):
        wave_tile = sol.mi_wave_tile[0] * sol.mi_wave_tile[1]
        per_thread = derived.required(sol, "NumElementsPerThread")
        per_store = int(sol.tuning("NumElementsPerBatchStore"))
        batches = int(per_thread / per_store) if per_store else 1
        out.append(pred("SynchronizerSizeCheck", [mt0, mt1, wave_tile, batches, sol.num_threads], 0)
                   if not schema.synchronizer_gsu else
                   pred("SynchronizerSizeCheck", [mt0, mt1, wave_tile, batches, sol.num_waves,
                                                  derived.global_split_u(sol)], 0))
    if not v.is_int8x4:
        out.append(pred("LeadingFree0SizesGreaterOrEqual", grvw_a if v.tlu_a else 1))
        out.append(pred("LeadingFree1SizesGreaterOrEqual", grvw_b if v.tlu_b else 1))
    if len(sol.params.get("PackedC0IndicesX", ())) > 1:
        out.append(pred("CDStridesEqual"))
    out.append(pred("KernelLanguageCompatible", sol.kernel_language))
    gsu = derived.global_split_u(sol)
    if gsu > 1 and derived.global_accumulation(sol) != "MultipleBuffer":
        out.append(pred("DeterministicMode", False))
    if derived.stream_k(sol) > 0 and derived.stream_k_atomic(sol) == 1:
        out.append(pred("DeterministicMode", False))
    if sol.tuning("BufferLoad"):
        shift_a = v.tlu_a and sol.tuning("AssertFree0ElementMultiple") < grvw_a
        shift_b = v.tlu_b and sol.tuning("AssertFree1ElementMultiple") < grvw_b
        out.append(pred("BufferLoadOffsetLimitCheck", {
            "ShiftPtrElemB": grvw_b if shift_b else 0, "ShiftPtrElemA": grvw_a if shift_a else 0,
            "DUorMT1": sol.depth_u if v.tlu_b else mt1, "DUorMT0": sol.depth_u if v.tlu_a else mt0,
        }))
        out.append(pred("BufferLoadOffsetLimitCheck_Beta", mt1))
    if sol.tuning("BufferStore"):
        out.append(pred("BufferStoreOffsetLimitCheck", mt1))
    if derived.global_accumulation(sol) is not None and not derived.stream_k(sol):
        out.append(pred("GlobalSplitUCheckMinK", [derived.MIN_K_FOR_GSU, gsu]))
    out.append(pred("WorkgroupMappingXCCCheck",
                    [abs(sol.runtime.workgroup_mapping_xcc), sol.runtime.workgroup_mapping_xcc_group]))
    if schema.new_problem_checks and not derived.stream_k(sol) and derived.internal_support(sol)["version"] >= 1:
        out.append(pred("WorkgroupNumberCheck", [mt0, mt1, gsu], 0))
    return out


def problem_predicate(sol: Solution, names: TypeSpelling = SPELLING_2024,
                      schema: EntrySchema = SCHEMA_2024) -> Node:
    v = derived.view(sol)
    return conjunction(_assertion_predicates(sol, schema) + operation_predicates(v, names)
                       + type_predicates(v, names, schema) + _kernel_predicates(sol, v, schema))


def size_mapping(sol: Solution, schema: EntrySchema = SCHEMA_2024,
                 facts: KernelFacts | None = None) -> dict[str, Any]:
    # Fields that rarely differ between solutions come first: compressors then see one long repeat
    # and a short run of changing values instead of many short pieces (about 5% smaller zstd output).
    mi = sol.matrix_instruction
    per_c, per_bias = derived.workspace_bytes_per_element(sol)
    return {
        "globalSplitUPGR": derived.GLOBAL_SPLIT_U_PGR,
        "packBatchDims": 0,
        "magicDivAlg": int(sol.tuning("MagicDivAlg")),
        "streamK": derived.stream_k(sol),
        "streamKAtomic": derived.stream_k_atomic(sol),
        "sourceKernel": sol.kernel_language == "Source",
        "activationFused": bool(sol.tuning("ActivationFused")),
        "CustomKernelName": sol.custom_kernel_name,
        "workspaceSizePerElemBias": per_bias,
        "globalSplitUWorkGroupMappingRoundRobin": sol.runtime.global_split_u_wgm_round_robin,
        "globalSplitUCoalesced": sol.runtime.global_split_u_coalesced,
        "workGroupMappingXCC": abs(sol.runtime.workgroup_mapping_xcc),
        "globalAccumulation": derived.global_accumulation_code(sol),
        "workspaceSizePerElemC": per_c,
        "waveNum": sol.num_waves,
        "workGroup": list(sol.workgroup),
        "macroTile": [sol.macro_tile[0], sol.macro_tile[1], 1],
        "threadTile": list(sol.thread_tile),
        "matrixInstruction": [mi.m, mi.n, mi.k, mi.b] if mi else [],
        "grvwA": sol.global_read_vector_width_a,
        "grvwB": sol.global_read_vector_width_b,
        "gwvwC": sol.store_vector_width,
        "gwvwD": sol.store_vector_width,
        "depthU": sol.depth_u,
        "staggerU": derived.stagger_u(sol),
        "staggerUMapping": derived.stagger_u_mapping(sol),
        "globalSplitU": derived.global_split_u(sol),
        "staggerStrideShift": derived.stagger_stride_shift(sol),
        "workGroupMapping": sol.runtime.workgroup_mapping,
        "workGroupMappingXCCGroup": sol.runtime.workgroup_mapping_xcc_group,
        **size_fields(sol, facts, schema),
    }


def solution_entry(sol: Solution, *, index: int, kernel_name: str, name: str, arch: str,
                   cu_count: int | None, honoured: Honoured | None = None,
                   names: TypeSpelling = SPELLING_2024, schema: EntrySchema = SCHEMA_2024,
                   facts: KernelFacts | None = None) -> dict[str, Any]:
    """The complete `.dat` entry; `index` is the build-wide solution index of this architecture.

    `honoured(sol)` says which runtime overrides (gsu, wgm, staggerU) the built kernel really reads; a
    flag the kernel ignores is declared unsupported, so the runtime never relies on it. `names` spells the
    data types as the runtime served reads them (spelling.py). `schema`: the keys the served runtime's
    reader requires beyond the 2024 ones (entry_schema.py); `facts`: what the built kernel says of itself,
    for the schema's post-build fields. internalArgsSupport.useSFC is true only where the file asks for the
    SFC grid and the built kernel reads it (`honoured`'s "useSFC").
    """
    params = sol.params
    support = derived.internal_support(sol)
    if honoured is not None:
        reads = honoured(sol)
        support = {k: (v and reads.get(k, True)) if isinstance(v, bool) else v for k, v in support.items()}
    if schema.use_sfc:
        wanted = bool((params.get("InternalSupportParams") or {}).get("UseSFC", False))
        support["useSFC"] = wanted and (honoured is None or bool(honoured(sol).get("useSFC", False)))
    # Same-for-every-solution fields first, changing ones last (see size_mapping); the reader goes by key.
    task = {"taskPredicate": task_predicate(sol, schema)} if schema.task_predicate else {}
    return {
        "problemType": problem_type_entry(derived.view(sol), names, schema),
        "hardwarePredicate": hardware(arch, cu_count), **task,
        "internalArgsSupport": support,
        "debugKernel": bool(params.get("DebugKernel", False)),
        "ideals": _plain_map(params.get("Ideals")),
        "linearModel": _plain_map(params.get("LinearModel")),
        "problemPredicate": problem_predicate(sol, names, schema),
        "sizeMapping": size_mapping(sol, schema, facts),
        "kernelName": kernel_name,
        "name": name,
        "index": index,
        "libraryLogicIndex": int(params.get("SolutionIndex", -1)),
    }


def _plain_map(value: Any) -> dict[str, Any]:
    return plain(value) if value else {}
