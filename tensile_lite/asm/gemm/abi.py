"""The GEMM kernel's side of the kernel-argument contract (KernArgsVersion 2, argType 0): the typed,
ordered argument list a kernel declares in its `.amdgpu_metadata` `.args` and loads into registers
(spec/kernel_anatomy.md §1.5). The host packs the same layout independently (`tensile_lite.host`);
tests/host/test_independence.py holds the two to each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tensile_lite.asm.gemm.epi.base import ACTIVATION, COMPUTE, Arg
from tensile_lite.asm.gemm.features import epilogue_features
from tensile_lite.asm.kernel import ArgumentLayout, KernelArgument, pack_arguments
from tensile_lite.errors import BuildError
from tensile_lite.model import DataType, ProblemType, Solution

# re-exported: which split-K path a solution takes is the model's fact, read by both sides
from tensile_lite.model.kernel_key import must_split as must_split
from tensile_lite.model.kernel_key import splits_for_conversion as splits_for_conversion
from tensile_lite.model.kernel_key import splits_in_kernel as splits_in_kernel
from tensile_lite.model.kernel_key import splits_k as splits_k

HEADER_BYTES = 16  # the header the kernel skips before its argType-0 arguments


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


def solution_layout(sol: Solution) -> ArgumentLayout:
    """The argument layout of `sol`'s kernel (its problem type's, with the solution's ActivationFused)."""
    return argument_layout(sol.problem_type, activation_fused=bool(sol.tuning("ActivationFused") or 0),
                           split_k=splits_in_kernel(sol))


def argument_offsets(args: Sequence[KernelArgument]) -> dict[str, int]:
    """Name -> byte offset for a tightly packed argument list."""
    return {p.argument.name: p.offset for p in pack_arguments(args).arguments}
