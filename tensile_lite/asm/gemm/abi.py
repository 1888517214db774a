"""The runtime's kernel-argument contract for GEMM kernels (KernArgsVersion 2, argType 0).

One typed, ordered argument list per problem type serves both sides: the kernel's `.amdgpu_metadata`
`.args` and `pack_kernel_args`, which lays the bytes out exactly as hipBLASLt's host does
(`ContractionSolution::generateSingleCall` appending values with no alignment padding;
spec/kernel_anatomy.md §1.5).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping, Sequence

import attrs

from tensile_lite.asm.gemm.epi.base import ACTIVATION, COMPUTE, Arg
from tensile_lite.asm.gemm.features import epilogue_features
from tensile_lite.asm.kernel import ArgumentLayout, KernelArgument, pack_arguments
from tensile_lite.errors import BuildError
from tensile_lite.model import DataType, ProblemType, Solution
from tensile_lite.model.kernel_key import splits_into_workspace

HEADER_BYTES = 16
ARG_TYPE_INLINE = 0  # argType 0: the arguments follow the header in the kernarg segment


def scalar_type(dt: DataType) -> str:
    # Half-precision alpha/beta travel as two f16 values that the kernel reads as one packed dword.
    if dt is DataType.H:
        return "pkf16"
    if dt in (DataType.S, DataType.D, DataType.I):
        return dt.value_type
    raise BuildError(f"alpha/beta of compute type {dt.letter} are not supported")


def _unsupported_extras(pt: ProblemType) -> list[str]:
    """Arguments this module cannot describe yet (their layout depends on more than the problem type
    or is not specified)."""
    extras = []
    if pt.sparse:
        extras.append("sparse metadata")
    if not pt.strided_batched:
        extras.append("batched pointer arrays")
    if pt.params.get("UseInitialStridesAB") or pt.params.get("UseInitialStridesCD"):
        extras.append("initial strides")
    if pt.stochastic_rounding:
        extras.append("RNDSeed")
    return extras


def _stride_names(tensor: str, rank: int) -> list[str]:
    # The unit stride of the first index is not passed (UseInitialStrides off).
    return [f"stride{tensor}{d}" for d in range(rank - 1)]


def _activation_value_type(dt: DataType) -> str:
    # f16 activation arguments are declared as one packed dword (spec §7 #4: the host sends 2 bytes)
    if dt is DataType.H:
        return "pkf16"
    if dt in (DataType.S, DataType.D, DataType.I):
        return dt.value_type
    raise BuildError(f"activation arguments of compute type {dt.letter} are not supported")


def epilogue_arguments(pt: ProblemType, *, activation_fused: bool = True) -> list[KernelArgument]:
    """The arguments after alpha/beta, in the runtime's order (kernel_anatomy.md §1.5 items 1-8): each
    active epilogue feature's (epi/), placed by its rank."""
    # imported here: the features' steps use the emitting helpers, which read the plan, which reads this
    from tensile_lite.asm.gemm.epi import order as epi
    feat = epilogue_features(pt)
    roles = {COMPUTE: pt.compute_type.value_type}
    args: list[KernelArgument] = []
    for f in epi.by_rank(epi.active(feat), "gemm_rank"):
        for a in f.gemm_arguments(pt, feat, activation_fused):
            if a.type == ACTIVATION and ACTIVATION not in roles:
                roles[ACTIVATION] = _activation_value_type(feat.activation_compute)
            args.append(declared_argument(a, roles))
    return args


def declared_argument(a: Arg, roles: Mapping[str, str]) -> KernelArgument:
    """The metadata argument of a feature's declaration (its role resolved to a value type)."""
    value_type = roles.get(a.type, a.type)
    return KernelArgument.pointer(a.name, value_type) if a.pointer else KernelArgument.value(a.name, value_type)


def kernel_arguments(pt: ProblemType, *, activation_fused: bool = True,
                     split_k: bool = False) -> tuple[KernelArgument, ...]:
    """The `.args` of a GEMM kernel for this problem type, in runtime order (argType 0 layout).

    Problem types whose arguments this module cannot describe raise, so a kernel can never declare a
    layout its host would not send. `activation_fused` is the solution's ActivationFused: an unfused
    activation runs in a separate kernel and takes no arguments here. `split_k` marks a
    MultipleBufferSingleKernel solution, for which the host appends dstD, Synchronizer and GSUSync
    whatever the GSU value (kernel_anatomy.md §1.5 item 9).
    """
    extras = _unsupported_extras(pt)
    if extras:
        raise BuildError(f"problem type {pt.name}: kernel arguments for {', '.join(extras)} are not "
                         "supported by this writer")
    args = [KernelArgument.value("Gemm info", "u32"), KernelArgument.value("kernel info0", "u32"),
            KernelArgument.value("kernel info1", "u32"), KernelArgument.value("numWG", "u32")]
    args += [KernelArgument.value(f"SizesFree{i}", "u32") for i in range(pt.num_indices_c)]
    args += [KernelArgument.value(f"SizesSum{i}", "u32") for i in range(len(pt.indices_summation))]
    for name, dt in (("D", pt.dest_type), ("C", pt.dest_type), ("A", pt.a_type), ("B", pt.b_type)):
        args.append(KernelArgument.pointer(name, dt.value_type))
    for tensor, rank in (("D", pt.num_indices_c), ("C", pt.num_indices_c),
                         ("A", len(pt.index_assignments_a)), ("B", len(pt.index_assignments_b))):
        args += [KernelArgument.value(n, "u32") for n in _stride_names(tensor, rank)]
    scalar = scalar_type(pt.compute_type)
    args.append(KernelArgument.value("alpha", scalar))
    if pt.use_beta:
        args.append(KernelArgument.value("beta", scalar))
    args += epilogue_arguments(pt, activation_fused=activation_fused)
    if split_k:
        args += [KernelArgument.pointer("dstD", pt.dest_type.value_type),
                 KernelArgument.pointer("Synchronizer", "f32"), KernelArgument.value("GSUSync", "u32")]
    return tuple(args)


def argument_layout(pt: ProblemType, *, activation_fused: bool = True, split_k: bool = False) -> ArgumentLayout:
    return pack_arguments(kernel_arguments(pt, activation_fused=activation_fused, split_k=split_k))


# The arguments only a MultipleBufferSingleKernel solution's kernel takes (after every other one).
SPLIT_K_ARGUMENTS = ("dstD", "Synchronizer", "GSUSync")
# OutputAmaxD's arguments (hipBLASLt's user-arguments struct has no place for them).
AMAX_ARGUMENTS = ("AddrAmaxOut", "AmaxWS", "AmaxSync")


def is_split_k(sol: Solution) -> bool:
    """The solution reduces its GSU partial sums in the kernel itself (MultipleBufferSingleKernel):
    its host sends the split-K arguments and a workspace whatever the runtime GSU."""
    return sol.global_split_u_algorithm == "MultipleBufferSingleKernel" and not sol.tuning("StreamK")


def is_multiple_buffer(sol: Solution) -> bool:
    """The solution splits K over GSU workgroups whose partial sums the runtime's conversion kernel
    (postgsu.py) reduces (MultipleBuffer, GSU > 1 in the logic file). Solutions of GSU 1 keep the plain
    kernel: the library does not let the runtime change their GSU."""
    return splits_into_workspace(sol) and not sol.tuning("StreamK")


def splits_k(sol: Solution) -> bool:
    """The kernel takes the GSU from the argument header and splits K (either algorithm)."""
    return is_split_k(sol) or is_multiple_buffer(sol)


def runtime_gsu(sol: Solution, gsu: int | None = None) -> int:
    """The GSU of one call: the user's override when given (> 0), else the solution's."""
    return gsu if gsu is not None and gsu > 0 else sol.runtime.global_split_u


@attrs.frozen(slots=True)
class GemmProblem:
    """One GEMM call as the host describes it: sizes and strides in elements.

    Strides are per tensor, for its dimensions after the first (the unit stride is implied), in the
    order of the tensor's index assignments: for `Cijk_Ailk_Bljk`, A's are (lda, batch stride).
    `None` means packed (each stride the product of the sizes before it).
    """

    m: int
    n: int
    k: int
    batch: int = 1
    strides_a: tuple[int, ...] | None = None
    strides_b: tuple[int, ...] | None = None
    strides_c: tuple[int, ...] | None = None
    strides_d: tuple[int, ...] | None = None

    def free_sizes(self, pt: ProblemType) -> tuple[int, ...]:
        return (self.m, self.n, self.batch)[:pt.num_indices_c]

    def index_size(self, pt: ProblemType, index: int) -> int:
        """The size of problem index `index` (0 = I = M, 1 = J = N, 2 = batch, then the summation)."""
        sizes = {0: self.m, 1: self.n}
        if pt.num_indices_c == 3:
            sizes[2] = self.batch
        sizes[pt.indices_summation[-1]] = self.k
        return sizes[index]

    def tensor_strides(self, pt: ProblemType, tensor: str) -> tuple[int, ...]:
        """The passed (non-unit) strides of tensor 'A', 'B', 'C' or 'D', packed when not given."""
        assign = {"A": pt.index_assignments_a, "B": pt.index_assignments_b}.get(
            tensor, tuple(range(pt.num_indices_c)))
        given = {"A": self.strides_a, "B": self.strides_b, "C": self.strides_c, "D": self.strides_d}[tensor]
        if given is not None:
            if len(given) != len(assign) - 1:
                raise BuildError(f"tensor {tensor} takes {len(assign) - 1} strides, got {len(given)}")
            return tuple(given)
        out, running = [], 1
        for idx in assign[:-1]:
            running *= max(self.index_size(pt, idx), 1)
            out.append(running)
        return tuple(out)

    def tensor_elements(self, pt: ProblemType, tensor: str) -> int:
        """Elements a buffer for `tensor` must hold: one past the largest element offset (0 if empty)."""
        assign = {"A": pt.index_assignments_a, "B": pt.index_assignments_b}.get(
            tensor, tuple(range(pt.num_indices_c)))
        strides = (1, *self.tensor_strides(pt, tensor))
        sizes = [self.index_size(pt, i) for i in assign]
        if any(s == 0 for s in sizes):
            return 0
        return 1 + sum((s - 1) * st for s, st in zip(sizes, strides, strict=True))


def num_workgroups(sol: Solution, problem: GemmProblem, *, gsu: int | None = None) -> int:
    """The flattened 1-D grid the runtime launches on gfx9/gfx11 (spec §1.6): tiles x batch x GSU."""
    mt0, mt1 = sol.macro_tile
    tiles = math.ceil(problem.m / mt0) * math.ceil(problem.n / mt1)
    batch = problem.batch if sol.problem_type.num_indices_c == 3 else 1
    return tiles * batch * runtime_gsu(sol, gsu)


def workspace_bytes(sol: Solution, problem: GemmProblem, *, gsu: int | None = None) -> int:
    """The workspace the host allocates for one split-K call (`requiredWorkspaceSize`): the GSU
    partial tiles, M x N x batch elements of the compute type per slice, plus a counter per tile and
    wave for MultipleBufferSingleKernel (which this kernel leaves unused: its counters live in the
    Synchronizer). 0 when GSU is 1."""
    g = runtime_gsu(sol, gsu)
    if g <= 1:
        return 0
    batch = problem.batch if sol.problem_type.num_indices_c == 3 else 1
    size = problem.m * problem.n * batch * sol.problem_type.compute_type.num_bytes * g
    if is_split_k(sol):
        mt0, mt1 = sol.macro_tile
        size += math.ceil(problem.m / mt0) * math.ceil(problem.n / mt1) * sol.num_waves * 4
    return size


def stagger_stride_shift(sol: Solution) -> int:
    """Upstream's `_staggerStrideShift`: log2 of the StaggerU stride in unroll iterations."""
    if sol.runtime.stagger_u == 0:
        return 0
    bpe = sol.problem_type.data_type.num_bytes
    unit = sol.depth_u * bpe
    stride = sol.runtime.stagger_u_stride
    if stride == -1 or stride < unit:
        stride = unit
    return math.ceil(math.log2(stride / unit))


def internal_args(sol: Solution, *, cu_count: int = 0, gsu: int | None = None) -> tuple[int, int]:
    """The two header words the runtime derives from the solution (`internalArgs`, `internalArgs1`);
    `gsu` is the user's GSU override."""
    rt = sol.runtime
    su = rt.stagger_u if rt.stagger_u else 0
    mapping = rt.stagger_u_mapping if rt.stagger_u else 0
    stagger = (mapping << 13) | ((stagger_stride_shift(sol) << 8) & 0x1F00) | (su & 0xFF)
    info0 = (stagger << 16) | (runtime_gsu(sol, gsu) & 0x3FFF)
    info0 |= (int(rt.global_split_u_wgm_round_robin) << 14) | (int(rt.global_split_u_coalesced) << 15)
    group = rt.workgroup_mapping_xcc_group
    if group == -1 and rt.workgroup_mapping_xcc > 1:
        group = cu_count
    info1 = (rt.workgroup_mapping & 0xFFFF) | ((rt.workgroup_mapping_xcc & 0x3F) << 16) | ((group & 0x3FF) << 22)
    return info0 & 0xFFFFFFFF, info1 & 0xFFFFFFFF


def scalar_bytes(value_type: str, value: float) -> bytes:
    if value_type == "f32":
        return struct.pack("<f", value)
    if value_type == "f64":
        return struct.pack("<d", value)
    if value_type == "i32":
        return struct.pack("<i", int(value))
    if value_type == "pkf16":
        # the host appends the half value and a second half (alpha_2), 2 + 2 bytes
        return struct.pack("<ee", value, 0.0)
    raise BuildError(f"cannot pack a scalar of type {value_type}")


@attrs.frozen(slots=True)
class EpilogueArgs:
    """Run-time values of the epilogue's by-value arguments (its pointers come from `buffers`).

    The defaults make the epilogue the identity: null scale pointers mean 1.0, a null bias adds 0,
    activation type 0 is none.
    """

    bias_type: DataType | None = None     # None: the first type the problem type accepts
    stride_bias: int = 0                  # elements between the bias vectors of consecutive batches
    factor_dim: int = 0                   # 0: along M, otherwise N (UseBias / UseScaleAlphaVec 3)
    activation: int = 0                   # the runtime's ActivationType enum value
    activation_args: tuple[float, ...] = ()   # activationAlpha, activationBeta (missing ones 0)
    strides_e: tuple[int, ...] = ()


# `buffers` keys of the epilogue's pointer arguments
POINTER_KEYS: Mapping[str, str] = {
    "AddressScaleA": "scaleA", "AddressScaleB": "scaleB", "AddressScaleC": "scaleC", "AddressScaleD": "scaleD",
    "AddressScaleAlphaVec": "scaleAlphaVec", "bias": "bias", "E": "E", "AddrAmaxOut": "amaxOut",
    "AmaxWS": "amaxWS", "AmaxSync": "amaxSync",
}


def solution_layout(sol: Solution) -> ArgumentLayout:
    """The argument layout of `sol`'s kernel (its problem type's, with the solution's ActivationFused)."""
    return argument_layout(sol.problem_type, activation_fused=bool(sol.tuning("ActivationFused") or 0),
                           split_k=is_split_k(sol))


def _epilogue_value(arg: KernelArgument, pt: ProblemType, buffers: Mapping[str, int], ep: EpilogueArgs) -> bytes:
    name = arg.name
    if name in POINTER_KEYS:
        return struct.pack("<Q", buffers.get(POINTER_KEYS[name], 0))
    if name == "biasType":
        bias_type = ep.bias_type if ep.bias_type is not None else (pt.bias_data_types or (pt.compute_type,))[0]
        return struct.pack("<I", bias_type.value)
    if name == "StrideBias":
        return struct.pack("<I", ep.stride_bias)
    if name == "factorDim":
        return struct.pack("<I", ep.factor_dim)
    if name.startswith("StrideE"):
        index = int(name[len("StrideE"):])
        return struct.pack("<I", ep.strides_e[index] if index < len(ep.strides_e) else 0)
    if name in ("activationAlpha", "activationBeta"):
        index = 0 if name == "activationAlpha" else 1
        value = ep.activation_args[index] if index < len(ep.activation_args) else 0.0
        return scalar_bytes(arg.value_type, value)
    if name == "activationType":
        return struct.pack("<I", ep.activation)
    raise BuildError(f"no value for kernel argument {name!r}")


def _split_k_strides(pt: ProblemType, problem: GemmProblem) -> tuple[int, ...]:
    """The packed strides (`strideW`) the host sends for D and C of a split-K call: M, M x N."""
    sizes = problem.free_sizes(pt)
    out, running = [], 1
    for size in sizes[:-1]:
        running *= size
        out.append(running)
    return tuple(out)


def pack_gemm_args(sol: Solution, problem: GemmProblem, buffers: Mapping[str, int], alpha: float,
                   beta: float = 0.0, *, epilogue: EpilogueArgs | None = None, gsu: int | None = None) -> bytes:
    """The arguments of one GEMM after the 16-byte header, as the runtime appends them (the inline
    argType-0 body, and one record of a grouped launch's argument table).

    A MultipleBufferSingleKernel call with GSU > 1 passes the workspace (`buffers['workspace']`) in
    D's place and packed D and C strides, then the real D as `dstD` and `buffers['synchronizer']`
    (ContractionSolution.cpp `singleCallArgs`); with GSU 1 only the three extra arguments change.
    A MultipleBuffer call with GSU > 1 passes the workspace in both D's and C's places, packed strides.
    """
    pt = sol.problem_type
    layout = solution_layout(sol)
    ep = epilogue or EpilogueArgs()
    split = splits_k(sol) and runtime_gsu(sol, gsu) > 1
    values: list[bytes] = [struct.pack("<I", s) for s in problem.free_sizes(pt)]
    values.append(struct.pack("<I", problem.k))
    # the workspace in D's place; MultipleBuffer sends it in C's place too (ws_c)
    in_workspace = ("D", "C") if split and is_multiple_buffer(sol) else ("D",) if split else ()
    values += [struct.pack("<Q", buffers["workspace" if t in in_workspace else t]) for t in ("D", "C", "A", "B")]
    for tensor in ("D", "C", "A", "B"):
        strides = _split_k_strides(pt, problem) if split and tensor in "DC" else problem.tensor_strides(pt, tensor)
        values += [struct.pack("<I", s) for s in strides]
    scalar = scalar_type(pt.compute_type)
    values.append(scalar_bytes(scalar, alpha))
    if pt.use_beta:
        values.append(scalar_bytes(scalar, beta))
    names = [p.argument for p in layout.arguments]
    first = next(i for i, a in enumerate(names) if a.name == ("beta" if pt.use_beta else "alpha")) + 1
    split_k_values = {"dstD": struct.pack("<Q", buffers["D"]),
                      "Synchronizer": struct.pack("<Q", buffers.get("synchronizer", 0)),
                      "GSUSync": struct.pack("<I", 0)}
    values += [split_k_values[a.name] if a.name in SPLIT_K_ARGUMENTS else _epilogue_value(a, pt, buffers, ep)
               for a in names[first:]]
    blob = b"".join(values)
    if len(blob) + HEADER_BYTES != layout.size:
        raise BuildError(f"packed {len(blob) + HEADER_BYTES} bytes but the layout of {pt.name} has {layout.size}")
    return blob


def pack_kernel_args(sol: Solution, problem: GemmProblem, buffers: Mapping[str, int], alpha: float,
                     beta: float = 0.0, *, gemm_count: int = 1, arg_type: int = ARG_TYPE_INLINE,
                     cu_count: int = 0, epilogue: EpilogueArgs | None = None, gsu: int | None = None) -> bytes:
    """The kernarg bytes hipBLASLt sends for one call of `sol` on `problem`.

    `buffers` maps 'A', 'B', 'C', 'D' to device addresses, and the epilogue's pointers by their
    `POINTER_KEYS` names ('bias', 'scaleAlphaVec', ...; missing ones are null); split-K calls add
    'workspace' and 'synchronizer'. `gsu` is the user's GSU override (None: the solution's). Values are appended
    in the order of `kernel_arguments` with no padding, as the runtime does; the result is checked
    against that layout so the two can never drift apart.
    """
    info0, info1 = internal_args(sol, cu_count=cu_count, gsu=gsu)
    header = struct.pack("<IIII", (gemm_count & 0x3FFFFFFF) | (arg_type << 30), info0, info1,
                         num_workgroups(sol, problem, gsu=gsu))
    return header + pack_gemm_args(sol, problem, buffers, alpha, beta, epilogue=epilogue, gsu=gsu)


def argument_offsets(args: Sequence[KernelArgument]) -> dict[str, int]:
    """Name -> byte offset for a tightly packed argument list."""
    return {p.argument.name: p.offset for p in pack_arguments(args).arguments}
