"""A problem type as the runtime's library sees it, in upstream's two readings.

Upstream describes a problem type twice, from two different dicts, and the runtime sees both:

- `problem_view`: the solution's problem type after upstream's consistency rules and defaults (an
  activation setting without the `Activation` switch means none, HHH with high-precision accumulation
  computes in float, a bias list only exists when the file mentions UseBias, user arguments are supported
  unless the file says not). Every solution's `problemType` and `problemPredicate` come from it.
- `file_view`: the logic file's problem-type map read as written, with the library writer's own fallbacks
  for absent keys (notably: no `SupportUserArgs` key means no user arguments). The master library's
  problem-type rows and the placeholder library's name come from it.

Both spell an f8/bf8 operand mix as the pair (F8, B8) or (B8, F8). Files written by current Tensile carry
every key, and then the two readings agree.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from tensile_lite.library import activation
from tensile_lite.model.datatypes import DataType
from tensile_lite.model.problem import ProblemType

_BIAS_SOURCES = ("A", "B", "C", "D")


def _registers(dt: DataType) -> float:
    return dt.num_bytes / 4


@attrs.frozen(slots=True)
class ProblemView:
    problem: ProblemType = attrs.field(repr=False)
    operation_identifier: str
    a_type: DataType
    b_type: DataType
    c_type: DataType
    compute_input_type: DataType
    compute_type: DataType
    e_type: DataType
    trans_a: bool
    trans_b: bool
    use_beta: bool
    high_precision_accumulate: bool
    use_initial_strides_ab: bool
    use_initial_strides_cd: bool
    strided_batched: bool
    grouped_gemm: bool
    use_bias: int
    bias_data_types: tuple[DataType, ...]
    bias_source: int
    use_e: bool
    gradient: bool
    output_amax_d: bool
    use_scale_ab: str
    use_scale_cd: bool
    use_scale_alpha_vec: int
    activation: str
    activation_compute_type: DataType
    activation_no_guard: bool
    sparse: int
    f32_xdl_math_op: DataType
    support_user_args: bool
    tlu_a: bool
    tlu_b: bool

    @property
    def is_int8x4(self) -> bool:
        return self.a_type is DataType.I8X4


def _compute_type(pt: ProblemType) -> DataType:
    # A half or bf16 input with high-precision accumulation computes in float; int8 in int32.
    c, d = pt.compute_type, pt.data_type
    if pt.high_precision_accumulate:
        if c is d is DataType.H or c is d is DataType.B:
            return DataType.S
        if c is d is DataType.I8:
            return DataType.I
    return c


def _operand_types(a: DataType, b: DataType) -> tuple[DataType, DataType]:
    # A mixed f8/bf8 operand makes the pair (F8, B8) or (B8, F8) whatever the other operand says.
    for t in (a, b):
        if t.operand_types != (t, t):
            return t.operand_types
    return a, b


def _activation_compute(pt: ProblemType, act: str, compute: DataType) -> DataType:
    p = pt.params
    value = DataType.parse(p["ActivationComputeDataType"], "ActivationComputeDataType") \
        if p.get("ActivationComputeDataType") is not None else compute
    if act != "none":
        if value not in (compute, pt.dest_type):
            value = compute
        if _registers(value) != _registers(compute) and _registers(pt.data_type) < _registers(pt.dest_type):
            value = compute
    return value


def _dtype(p: Mapping[str, Any], key: str, fallback: DataType) -> DataType:
    value = p.get(key)
    return fallback if value is None else DataType.parse(value, key)


def _sorted_types(types: Iterable[DataType]) -> tuple[DataType, ...]:
    return tuple(sorted(set(types), key=lambda t: t.value))


def _default_bias_types(data: DataType, compute: DataType, dest: DataType) -> tuple[DataType, ...]:
    # int8 is never a bias type
    return _sorted_types(t for t in (data, compute, dest) if t is not DataType.I8)


@functools.lru_cache(maxsize=1024)
def file_view(pt: ProblemType) -> ProblemView:
    p = pt.params
    src = _dtype(p, "DataType", DataType.S)
    dest = _dtype(p, "DestDataType", src)
    compute = _dtype(p, "ComputeDataType", dest)
    act = str(p.get("ActivationType", "none")).lower()
    if "UseBias" in p:
        bias_types = _sorted_types(DataType.parse(v, "BiasDataTypeList") for v in p["BiasDataTypeList"]) \
            if p.get("BiasDataTypeList") is not None else _default_bias_types(src, compute, dest)
    else:
        bias_types = ()
    bias_src = str(p.get("BiasSrc", "D"))
    a, b = _operand_types(_dtype(p, "DataTypeA", src), _dtype(p, "DataTypeB", src))
    return ProblemView(
        problem=pt, operation_identifier=pt.operation_identifier, a_type=a, b_type=b, c_type=dest,
        compute_input_type=src, compute_type=compute, e_type=_dtype(p, "DataTypeE", dest),
        trans_a=bool(p.get("TransposeA", False)), trans_b=bool(p.get("TransposeB", False)),
        use_beta=bool(p.get("UseBeta", True)), high_precision_accumulate=bool(p.get("HighPrecisionAccumulate", False)),
        use_initial_strides_ab=bool(p.get("UseInitialStridesAB", False)),
        use_initial_strides_cd=bool(p.get("UseInitialStridesCD", False)),
        strided_batched=bool(p.get("StridedBatched", True)), grouped_gemm=bool(p.get("GroupedGemm", False)),
        use_bias=int(p.get("UseBias", 0)), bias_data_types=bias_types,
        bias_source=_BIAS_SOURCES.index(bias_src) if bias_src in _BIAS_SOURCES else 3,
        use_e=bool(p.get("UseE", False)), gradient=bool(p.get("Gradient", False)),
        output_amax_d=bool(p.get("OutputAmaxD", False)), use_scale_ab=str(p.get("UseScaleAB", "") or ""),
        use_scale_cd=bool(p.get("UseScaleCD", False)), use_scale_alpha_vec=int(p.get("UseScaleAlphaVec", 0)),
        activation=act, activation_compute_type=_dtype(p, "ActivationComputeDataType", compute),
        activation_no_guard=bool(p.get("ActivationNoGuard", False)), sparse=int(p.get("Sparse", 0)),
        f32_xdl_math_op=_dtype(p, "F32XdlMathOp", DataType.S),
        support_user_args=bool(p.get("SupportUserArgs", False)), tlu_a=pt.tlu_a, tlu_b=pt.tlu_b,
    )


@functools.lru_cache(maxsize=1024)
def problem_view(pt: ProblemType) -> ProblemView:
    p = pt.params
    act = str(p.get("ActivationType", "none")) if "Activation" in p else "none"
    if act not in activation.SELECTORS:
        act = "none"
    compute = _compute_type(pt)
    gradient = bool(p.get("Gradient", False))
    use_e = bool(p.get("UseE", False)) and act != "none"
    if gradient and act != "none":
        use_e = True  # a gradient kernel with activation always writes E
    bias_src = str(p.get("BiasSrc", "D")) if gradient else "D"
    if "UseBias" in p:
        bias_types = _sorted_types(DataType.parse(v, "BiasDataTypeList") for v in p["BiasDataTypeList"]) \
            if p.get("BiasDataTypeList") is not None else _default_bias_types(pt.data_type, compute, pt.dest_type)
    else:
        bias_types = ()
    no_guard = bool(p.get("ActivationNoGuard", False)) and act != "none" and gradient
    a, b = _operand_types(pt.a_type, pt.b_type)
    return ProblemView(
        problem=pt, operation_identifier=pt.operation_identifier, a_type=a, b_type=b, c_type=pt.dest_type,
        compute_input_type=pt.data_type, compute_type=compute,
        e_type=DataType.parse(p["DataTypeE"], "DataTypeE") if p.get("DataTypeE") is not None else pt.dest_type,
        trans_a=pt.transpose_a, trans_b=pt.transpose_b, use_beta=pt.use_beta,
        high_precision_accumulate=pt.high_precision_accumulate,
        use_initial_strides_ab=bool(p.get("UseInitialStridesAB", False)),
        use_initial_strides_cd=bool(p.get("UseInitialStridesCD", False)),
        strided_batched=pt.strided_batched, grouped_gemm=pt.grouped_gemm, use_bias=pt.use_bias,
        bias_data_types=bias_types, bias_source=_BIAS_SOURCES.index(bias_src) if bias_src in _BIAS_SOURCES else 3,
        use_e=use_e, gradient=gradient, output_amax_d=pt.output_amax_d, use_scale_ab=pt.use_scale_ab,
        use_scale_cd=pt.use_scale_cd, use_scale_alpha_vec=pt.use_scale_alpha_vec, activation=act,
        activation_compute_type=_activation_compute(pt, act, compute), activation_no_guard=no_guard,
        sparse=pt.sparse, f32_xdl_math_op=pt.f32_xdl_math_op, support_user_args=pt.support_user_args,
        tlu_a=pt.tlu_a, tlu_b=pt.tlu_b,
    )
