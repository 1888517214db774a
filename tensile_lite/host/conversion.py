"""The split-K conversion kernels as the runtime sees them (spec/epilogue_semantics.md §5.3): after a
MultipleBuffer GEMM kernel has left GSU slices in the workspace, the runtime looks a conversion kernel
up by name in the helper code object and launches it with 256 x vw work items per workgroup over
M x N x batch. This module owns the names (the kernel writer is handed them), the choice of vw and of
the PostGSU bucket, the grid, and the argument bytes of plain and grouped launches.

Name: C<ijk>_<W><D>[_GG][_Bias<b>][_FDN|_FDMN][_Aux<e>][_HA<act>|_A<act>][_ScaleAB|_ScaleABVec][_ScaleCD]
[_ScaleAlphaVec]_PostGSU<p>_VW<vw>, where W is what the runtime takes A's type to sum in: I for an
int8 or int32 A, D for f64, S for every other (hipBLASLt `ContractionSolution::outputConversionKernelName`,
ROCm/hipBLASLt tensilelite/src/ContractionSolution.cpp). alpha and beta are packed in the compute type
(`outputConversionCallArgs` appends them as `problem.alphaType()`/`betaType()`).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence

import attrs

from tensile_lite.host import values
from tensile_lite.host.call import GemmProblem
from tensile_lite.model import DataType, ProblemType

THREADS = 256
VECTOR_WIDTHS = (1, 2, 4)
# the runtime's globalSplitUPGR: PostGSU names stop at 16 (the library writes the same value)
SPLIT_PGR = 16
GSU_BUCKETS = (2, 4, 8, 16)
_FACTOR_N, _FACTOR_RUNTIME = 2, 3
_SELECTOR_VALUES = {"all": 2, "hipblaslt_all": 2}


def _bias_read(pt: ProblemType) -> bool:
    return bool(pt.use_bias) and not pt.gradient


def _factor_dim(pt: ProblemType) -> int:
    return max(pt.use_scale_alpha_vec, pt.use_bias if _bias_read(pt) else 0)


def _activation(pt: ProblemType) -> str:
    return pt.activation_type if "Activation" in pt.params and pt.activation_type in _SELECTOR_VALUES else "none"


def _sum_letter(pt: ProblemType) -> str:
    """The name's letter of the type the slices are summed in, read from A's type as the runtime does."""
    if pt.a_type in (DataType.I8, DataType.I):
        return DataType.I.letter
    return (DataType.D if pt.a_type is DataType.D else DataType.S).letter


def bucket(gsu: int) -> int:
    """The PostGSU number of a GSU: the next power of two, at most SPLIT_PGR."""
    p = 1
    while p < gsu:
        p *= 2
    return min(p, SPLIT_PGR)


def conversion_name(pt: ProblemType, bias_type: DataType | None, gsu_bucket: int, vw: int) -> str:
    """The name the runtime looks up for this problem type, bias type (None without bias), PostGSU
    bucket and vector width."""
    name = f"C{'ijk'[:pt.num_indices_c]}_{_sum_letter(pt)}{pt.dest_type.letter}"
    if pt.grouped_gemm:
        name += "_GG"
    if _bias_read(pt):
        assert bias_type is not None
        name += f"_Bias{bias_type.letter}"
    name += {_FACTOR_N: "_FDN", _FACTOR_RUNTIME: "_FDMN"}.get(min(_factor_dim(pt), _FACTOR_RUNTIME), "")
    if pt.use_e:
        name += f"_Aux{pt.e_type.letter}"
    act = _activation(pt)
    if act != "none":
        name += ("_A" if act == "all" else "_HA") + pt.activation_compute_type.letter
    name += {"Scalar": "_ScaleAB", "Vector": "_ScaleABVec"}.get(pt.use_scale_ab, "")
    if pt.use_scale_cd:
        name += "_ScaleCD"
    if pt.use_scale_alpha_vec:
        name += "_ScaleAlphaVec"
    return f"{name}_PostGSU{gsu_bucket}_VW{vw}"


@attrs.frozen(slots=True)
class ConversionKernelName:
    """One conversion kernel the runtime may ask for, and what its name encodes."""

    bias_type: DataType | None
    gsu_bucket: int
    vw: int
    name: str


def conversion_kernels(pt: ProblemType) -> tuple[ConversionKernelName, ...]:
    """Every conversion kernel the runtime may look up for the problem type: per run-time bias type,
    PostGSU bucket and vector width."""
    biases: Sequence[DataType | None] = tuple(pt.bias_data_types) if _bias_read(pt) else (None,)
    return tuple(ConversionKernelName(b, g, vw, conversion_name(pt, b, g, vw))
                 for b in biases for g in GSU_BUCKETS for vw in VECTOR_WIDTHS)


def _elements(pt: ProblemType, problem: GemmProblem) -> int:
    total = 1
    for s in problem.free_sizes(pt):
        total *= s
    return total


def work_groups(pt: ProblemType, problem: GemmProblem, vw: int) -> int:
    """Workgroups of one GEMM's conversion: M x N x batch elements, THREADS x vw per workgroup."""
    return -(-_elements(pt, problem) // (THREADS * vw))


def launch_vector_width(pt: ProblemType, problems: Sequence[GemmProblem]) -> int:
    """The runtime's vw for a launch over `problems`: 1 up to 2048 elements in all, else 4 when every
    M is a multiple of 4, 2 when of 2, else 1."""
    if sum(_elements(pt, p) for p in problems) <= 2048:
        return 1
    if all(p.m % 4 == 0 for p in problems):
        return 4
    return 2 if all(p.m % 2 == 0 for p in problems) else 1


@attrs.frozen(slots=True)
class ConversionCall:
    """The values of one GEMM's conversion arguments (pointers from `buffers`: 'D', 'C', 'workspace',
    'E', 'bias', 'scaleA', ...; a missing one is null)."""

    problem: GemmProblem
    buffers: Mapping[str, int] = attrs.field(eq=False)
    alpha: float
    beta: float
    gsu: int
    strides_e: tuple[int, ...] = ()
    stride_bias: int = 0
    factor_dim: int = 0
    activation: int = 0
    activation_args: tuple[float, ...] = ()


def call_fields(pt: ProblemType, call: ConversionCall) -> list[tuple[str, bytes]]:
    """(runtime name, bytes) of one GEMM's conversion arguments, in the runtime's order."""
    p, buf = call.problem, call.buffers
    dims = pt.num_indices_c
    out: list[tuple[str, bytes]] = []

    def ptr(name: str, key: str) -> None:
        out.append((name, values.pointer(buf.get(key, 0))))

    if pt.use_e:
        ptr("E", "E")
    ptr("D", "D")
    ptr("WS", "workspace")
    ptr("C", "C")
    if _bias_read(pt):
        ptr("bias", "bias")
    if pt.use_scale_ab:
        ptr("scaleA", "scaleA")
        ptr("scaleB", "scaleB")
    if pt.use_scale_cd:
        ptr("scaleC", "scaleC")
        ptr("scaleD", "scaleD")
    if pt.use_scale_alpha_vec:
        ptr("scaleAlphaVec", "scaleAlphaVec")
    out += [("alpha", values.scalar(pt.compute_type, call.alpha)), ("beta", values.scalar(pt.compute_type, call.beta))]
    act = _activation(pt)
    if act != "none":
        out += [(f"activation_{i}", struct.pack("<f", call.activation_args[i] if i < len(call.activation_args) else 0.0))
                for i in range(_SELECTOR_VALUES[act])]
        out.append(("activationType", values.u32(call.activation)))
    strides = {"strideE": tuple(call.strides_e) + (0,) * dims, "strideD": p.tensor_strides(pt, "D"),
               "strideW": p.packed_output_strides(pt), "strideC": p.tensor_strides(pt, "C")}
    for kind in (("strideE",) if pt.use_e else ()) + ("strideD", "strideW", "strideC"):
        out += [(f"{kind}{i}", values.u32(strides[kind][i - 1])) for i in range(1, dims)]
    if _bias_read(pt):
        out.append(("strideBias", values.u32(call.stride_bias)))
    out += [(f"size_{i}", values.u32(s)) for i, s in enumerate(p.free_sizes(pt))]
    out.append(("gsu", values.u32(call.gsu)))
    if _factor_dim(pt) >= _FACTOR_RUNTIME or pt.use_scale_alpha_vec:
        # sent whenever ScaleAlphaVec is used, whatever its dimension
        out.append(("factorDim", values.u32(call.factor_dim)))
    return out


def pack_call(pt: ProblemType, call: ConversionCall) -> bytes:
    """The bytes the runtime appends for one GEMM's conversion (the whole kernarg segment of a plain launch)."""
    return b"".join(data for _, data in call_fields(pt, call))


def pack_grouped(pt: ProblemType, calls: Sequence[ConversionCall], vw: int, table_address: int) -> tuple[bytes, bytes]:
    """(kernarg bytes, table bytes at `table_address`) of a grouped conversion launch: wiTablePtr,
    DeviceUserArguments (null), argsPtr, gemm_count; the table holds each GEMM's first work item,
    then one argument record per GEMM."""
    starts, items = [], 0
    for call in calls:
        starts.append(items)
        items += work_groups(pt, call.problem, vw) * THREADS
    table = struct.pack(f"<{len(calls)}I", *starts) + b"".join(pack_call(pt, c) for c in calls)
    kernarg = struct.pack("<QQQI", table_address, 0, table_address + 4 * len(calls), len(calls))
    return kernarg, table
