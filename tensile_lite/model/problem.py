"""The problem type: what a family of kernels computes (types, transposes, epilogue features)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import attrs

from tensile_lite.errors import LogicError, Where
from tensile_lite.model.datatypes import DataType
from tensile_lite.model.params import Params

INDEX_CHARS = "IJKLMNOPQRSTUVWXYZ"

# (A/B type, D type, compute type) triples whose names spell the output and compute types too
# (upstream's "HPA types": `HHS`, `HSS`, `I8II`, ...).
_HPA_NAMED: frozenset[tuple[str, str, str]] = frozenset(
    (t.split()[0], t.split()[1], t.split()[2]) for t in (
        "H S S", "H H S", "B B S", "B S S", "B H S", "I8 I I", "4xi8 I I", "I8 I S", "I8 I8 S", "I8 H S",
        "I8 B S", "F8 S S", "B8 S S", "F8B8 S S", "B8F8 S S", "F8 H S", "B8 H S", "F8B8 H S", "B8F8 H S",
        "H F8 S", "F8 B S", "F8B8 B S", "F8 F8 S", "B8 B8 S", "F8B8 B8 S", "B8F8 B8 S", "F8 B8 S",
        "B8 F8 S", "F8B8 F8 S", "B8F8 F8 S",
    )
)
# ROCm 7.x's OCP codes (letters F8O, B8O, ...) are named like the 8-bit types they stand beside
_OCP_LETTERS = {"F8": "F8O", "B8": "B8O", "F8B8": "F8B8O", "B8F8": "B8F8O"}
_HPA_NAMED = _HPA_NAMED | frozenset(
    (x, y, z) for triple in _HPA_NAMED
    for x, y, z in itertools.product(*((t, _OCP_LETTERS[t]) if t in _OCP_LETTERS else (t,) for t in triple)))

# Problem-type keys and the value a file may omit.
PROBLEM_DEFAULTS: dict[str, Any] = {
    "OperationType": "GEMM", "DataType": 0, "DestDataType": None, "ComputeDataType": None,
    "DataTypeA": None, "DataTypeB": None, "DataTypeE": None, "DataTypeAmaxD": 0, "F32XdlMathOp": 0,
    "UseBeta": 1, "UseE": 0, "Gradient": 0, "UseBias": 0, "BiasSrc": "D", "BiasDataTypeList": None,
    "UseScaleAB": "", "UseScaleCD": 0, "UseScaleAlphaVec": 0, "HighPrecisionAccumulate": 0,
    "SilentHighPrecisionAccumulate": 0, "Sparse": 0, "ComplexConjugateA": 0, "ComplexConjugateB": 0,
    "StochasticRounding": 0, "TransposeA": 0, "TransposeB": 1, "Batched": 0, "StridedBatched": 1,
    "GroupedGemm": 0, "UseInitialStridesAB": 0, "UseInitialStridesCD": 0, "MirrorDimsA": (),
    "MirrorDimsB": (), "ActivationType": "none", "ActivationComputeDataType": None,
    "ActivationNoGuard": 0, "OutputAmaxD": 0, "SupportUserArgs": 1,
    # ROCm 7.x MX block scaling (rocm7_delta.md §1.3): the scale type and block size of A and B; block 0 = off
    "DataTypeMXSA": None, "DataTypeMXSB": None, "MXBlockA": 0, "MXBlockB": 0,
}


def _dtype(p: Mapping[str, Any], key: str, fallback: DataType, where: Where) -> DataType:
    value = p.get(key)
    if value is None:
        return fallback
    try:
        return DataType.parse(value, key)
    except LogicError as exc:
        raise LogicError(exc.message, attrs.evolve(where, parameter=key)) from None


def _mx(p: Mapping[str, Any], side: str, where: Where) -> tuple[int, DataType | None]:
    """(block size, scale type) of operand `side`; files write a scale type even with the block at 0 (off)."""
    block = p[f"MXBlock{side}"]
    if not isinstance(block, int) or isinstance(block, bool) or block < 0:
        raise LogicError(f"expected a block size (0 = no MX scaling), got {block!r}",
                         attrs.evolve(where, parameter=f"MXBlock{side}"))
    if not block:
        return 0, None
    key = f"DataTypeMXS{side}"
    if p.get(key) is None:
        raise LogicError(f"MXBlock{side} is {block} but the scale type is missing", attrs.evolve(where, parameter=key))
    return block, _dtype(p, key, DataType.E8, where)


def _int_tuple(p: Mapping[str, Any], key: str, where: Where) -> tuple[int, ...]:
    value = p.get(key)
    if not isinstance(value, tuple) or not all(isinstance(v, int) for v in value):
        raise LogicError(f"expected a list of integers, got {value!r}", attrs.evolve(where, parameter=key))
    return value


@attrs.frozen(slots=True, cache_hash=True)
class ProblemType:
    """Typed view of a logic file's problem type; `params` keeps every key of the file verbatim."""

    params: Params = attrs.field(repr=False)
    operation: str
    a_type: DataType
    b_type: DataType
    data_type: DataType
    dest_type: DataType
    compute_type: DataType
    e_type: DataType
    compute_input_type: DataType
    transpose_a: bool
    transpose_b: bool
    index_assignments_a: tuple[int, ...]
    index_assignments_b: tuple[int, ...]
    num_indices_c: int
    indices_free: tuple[int, ...]
    indices_batch: tuple[int, ...]
    indices_summation: tuple[int, ...]
    use_beta: bool
    high_precision_accumulate: bool
    use_bias: int
    bias_src: str
    bias_data_types: tuple[DataType, ...]
    activation_type: str
    activation_compute_type: DataType
    activation_no_guard: bool
    use_scale_ab: str
    use_scale_cd: bool
    use_scale_alpha_vec: int
    use_e: bool
    gradient: bool
    grouped_gemm: bool
    strided_batched: bool
    support_user_args: bool
    sparse: int
    f32_xdl_math_op: DataType
    output_amax_d: bool
    stochastic_rounding: bool
    # MX block scaling of A and B: elements per scale (0 = off) and the scale type (None when off)
    mx_block_a: int = 0
    mx_block_b: int = 0
    mx_scale_a: DataType | None = None
    mx_scale_b: DataType | None = None
    name: str = attrs.field(init=False, eq=False)
    operation_identifier: str = attrs.field(init=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "name", _problem_name(self))
        object.__setattr__(self, "operation_identifier", _operation_identifier(self))

    @classmethod
    def from_params(cls, params: Params, where: Where | None = None) -> ProblemType:
        where = where or Where()
        p: dict[str, Any] = dict(PROBLEM_DEFAULTS)
        p.update(params)
        if p["OperationType"] != "GEMM":
            raise LogicError(f"only GEMM problem types are supported, got {p['OperationType']!r}",
                             attrs.evolve(where, parameter="OperationType"))
        data = _dtype(p, "DataType", DataType.S, where)
        a = _dtype(p, "DataTypeA", data, where)
        b = _dtype(p, "DataTypeB", data, where)
        dest = _dtype(p, "DestDataType", data, where)
        compute = _dtype(p, "ComputeDataType", dest, where)
        e = _dtype(p, "DataTypeE", dest, where)
        act_compute = _dtype(p, "ActivationComputeDataType", compute, where)
        xdl = _dtype(p, "F32XdlMathOp", DataType.S, where)
        ia = _int_tuple(p, "IndexAssignmentsA", where) if "IndexAssignmentsA" in p else \
            _gemm_assignments(bool(p["TransposeA"]), True)
        ib = _int_tuple(p, "IndexAssignmentsB", where) if "IndexAssignmentsB" in p else \
            _gemm_assignments(bool(p["TransposeB"]), False)
        nc = int(p.get("NumIndicesC", 3 if p.get("Batched") else 2))
        free, batch, summ = _classify_indices(ia, ib, nc)
        if "IndicesSummation" in p and tuple(p["IndicesSummation"]) != summ:
            raise LogicError(f"IndicesSummation {list(p['IndicesSummation'])} contradicts the index "
                             f"assignments (expected {list(summ)})",
                             attrs.evolve(where, parameter="IndicesSummation"))
        bias_list = p["BiasDataTypeList"]
        if bias_list is None:
            bias_types = _default_bias_types(data, compute, dest)
        else:
            if not isinstance(bias_list, tuple):
                raise LogicError(f"expected a list of data types, got {bias_list!r}",
                                 attrs.evolve(where, parameter="BiasDataTypeList"))
            bias_types = tuple(DataType.parse(v, "BiasDataTypeList") for v in bias_list)
        scale_ab = p["UseScaleAB"] or ""
        if scale_ab not in ("", "Scalar", "Vector"):
            raise LogicError(f"UseScaleAB must be '', 'Scalar' or 'Vector', got {scale_ab!r}",
                             attrs.evolve(where, parameter="UseScaleAB"))
        mx = {side: _mx(p, side, where) for side in "AB"}
        return cls(
            params=params, operation="GEMM", a_type=a, b_type=b, data_type=data, dest_type=dest,
            compute_type=compute, e_type=e, compute_input_type=data,
            transpose_a=bool(p["TransposeA"]), transpose_b=bool(p["TransposeB"]),
            index_assignments_a=ia, index_assignments_b=ib, num_indices_c=nc,
            indices_free=free, indices_batch=batch, indices_summation=summ,
            use_beta=bool(p["UseBeta"]), high_precision_accumulate=bool(p["HighPrecisionAccumulate"]),
            use_bias=int(p["UseBias"]), bias_src=str(p["BiasSrc"]), bias_data_types=bias_types,
            activation_type=str(p["ActivationType"]), activation_compute_type=act_compute,
            activation_no_guard=bool(p["ActivationNoGuard"]), use_scale_ab=scale_ab,
            use_scale_cd=bool(p["UseScaleCD"]), use_scale_alpha_vec=int(p["UseScaleAlphaVec"]),
            use_e=bool(p["UseE"]), gradient=bool(p["Gradient"]), grouped_gemm=bool(p["GroupedGemm"]),
            strided_batched=bool(p["StridedBatched"]), support_user_args=bool(p["SupportUserArgs"]),
            sparse=int(p["Sparse"]), f32_xdl_math_op=xdl, output_amax_d=bool(p["OutputAmaxD"]),
            stochastic_rounding=bool(p["StochasticRounding"]),
            mx_block_a=mx["A"][0], mx_block_b=mx["B"][0], mx_scale_a=mx["A"][1], mx_scale_b=mx["B"][1],
        )

    @property
    def unroll_index(self) -> int:
        return self.indices_summation[-1]

    @property
    def tlu_a(self) -> bool:
        """A's leading (contiguous) dimension is a free index, i.e. A is not transposed."""
        return _tlu(self.index_assignments_a, self.indices_free, self.unroll_index)

    @property
    def tlu_b(self) -> bool:
        return _tlu(self.index_assignments_b, self.indices_free, self.unroll_index)


def _tlu(assign: tuple[int, ...], free: tuple[int, ...], unroll: int) -> bool:
    first_free = next(i for i in assign if i in free)
    return assign.index(first_free) < assign.index(unroll)


def _gemm_assignments(transposed: bool, is_a: bool) -> tuple[int, ...]:
    free = 0 if is_a else 1
    return (3, free, 2) if transposed == is_a else (free, 3, 2)


def _classify_indices(ia: tuple[int, ...], ib: tuple[int, ...],
                      nc: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    both = set(ia) & set(ib)
    free = tuple(sorted(i for i in set(ia) ^ set(ib) if i < nc))
    batch = tuple(sorted(i for i in both if i < nc))
    summ = tuple(sorted(i for i in both if i >= nc))
    return free, batch, summ


def _default_bias_types(data: DataType, compute: DataType, dest: DataType) -> tuple[DataType, ...]:
    return tuple(sorted({t for t in (data, compute, dest) if t is not DataType.I8}, key=lambda t: t.value))


def _problem_name(pt: ProblemType) -> str:
    chars = INDEX_CHARS
    mirror_a = pt.params.get("MirrorDimsA", ()) or ()
    mirror_b = pt.params.get("MirrorDimsB", ()) or ()
    name = "C" + "".join(chars[i].lower() for i in range(pt.num_indices_c))
    name += "_A" + "".join(chars[i] if i in mirror_a else chars[i].lower() for i in pt.index_assignments_a)
    if pt.params.get("ComplexConjugateA"):
        name += "C"
    name += "_B" + "".join(chars[i] if i in mirror_b else chars[i].lower() for i in pt.index_assignments_b)
    if pt.params.get("ComplexConjugateB"):
        name += "C"
    if pt.a_type is not pt.data_type or pt.b_type is not pt.data_type:
        name += "_" + pt.a_type.letter + pt.b_type.letter
    name += "_" + pt.data_type.letter
    if (pt.data_type.letter, pt.dest_type.letter, pt.compute_type.letter) in _HPA_NAMED:
        name += pt.dest_type.letter + pt.compute_type.letter + "_"
    if pt.f32_xdl_math_op is not DataType.S and pt.data_type is DataType.S:
        name += "_M" + pt.f32_xdl_math_op.letter + "_"
    if pt.use_beta:
        name += "B"
    if pt.high_precision_accumulate and not pt.params.get("SilentHighPrecisionAccumulate"):
        name += "H"
    if pt.params.get("UseInitialStridesAB"):
        name += "I"
    if pt.params.get("UseInitialStridesCD"):
        name += "Ic"
    if pt.use_bias:
        name += "_Bias"
        if pt.bias_data_types != _default_bias_types(pt.data_type, pt.compute_type, pt.dest_type):
            name += "".join(t.letter for t in pt.bias_data_types)
        if pt.bias_src and pt.gradient:
            name += "_BiasSrc" + pt.bias_src
    factor_dim = max(pt.use_scale_alpha_vec, pt.use_bias)
    if factor_dim > 1:
        name += "_FD" + ("N" if factor_dim == 2 else "MN")
    if pt.use_e:
        name += ("_Grad" if pt.gradient else "_Aux") + pt.e_type.letter
    for side, block, scale in (("A", pt.mx_block_a, pt.mx_scale_a), ("B", pt.mx_block_b, pt.mx_scale_b)):
        if block and scale is not None:  # 7.x's token, e.g. MXAE8B32
            name += f"_MX{side}{scale.letter7}B{block}"
    if pt.output_amax_d:
        name += "_AmaxD"
    if pt.sparse:
        name += "_SPB" if pt.sparse == 2 else "_SPA"
    if pt.grouped_gemm:
        name += "_GG"
    elif not pt.strided_batched:
        name += "_GB"
    if pt.activation_type != "none":
        name += {"all": "_A", "hipblaslt_all": "_HA"}.get(pt.activation_type,
                                                          "_" + pt.activation_type.upper())
        name += pt.activation_compute_type.letter
    if pt.activation_no_guard:
        name += "NG"
    name += {"Scalar": "_SAB", "Vector": "_SABV"}.get(pt.use_scale_ab, "")
    if pt.use_scale_cd:
        name += "_SCD"
    if pt.use_scale_alpha_vec:
        name += "_SAV"
    if pt.support_user_args:
        name += "_UserArgs"
    return name


def _operation_identifier(pt: ProblemType) -> str:
    """`Contraction_<sum>_A.._B.._C.._D..`, the key the runtime's ProblemMap uses."""
    chars = INDEX_CHARS.lower()
    summ = "".join(chars[i] for i in pt.indices_summation)

    def tensor(letter: str, assign: tuple[int, ...]) -> str:
        return letter + "".join(chars[i] for i in assign)

    c = "".join(chars[i] for i in range(pt.num_indices_c))
    return (f"Contraction_{summ}_{tensor('A', pt.index_assignments_a)}_{tensor('B', pt.index_assignments_b)}"
            f"_C{c}_D{c}")
