"""Which epilogue arguments the runtime appends after alpha/beta for a problem type, in its order
(spec/kernel_anatomy.md §1.5, epilogue extras 1-8), read from the problem type's own keys."""

from __future__ import annotations

from collections.abc import Mapping

from tensile_lite.errors import BuildError
from tensile_lite.host import values
from tensile_lite.host.call import EpilogueArgs
from tensile_lite.model import ProblemType, Solution

# `buffers` keys of the epilogue's pointer arguments, by the runtime's argument name
POINTERS: Mapping[str, str] = {
    "scaleA": "scaleA", "scaleB": "scaleB", "scaleC": "scaleC", "scaleD": "scaleD",
    "scaleAlphaVec": "scaleAlphaVec", "bias": "bias", "e": "E", "AddrAmaxOut": "amaxOut",
    "AmaxWS": "amaxWS", "AmaxSync": "amaxSync",
}
# activation selectors whose kernels take the activation type at run time, and how many values
# (getAdditionalArgNum of the most demanding activation they stand for)
_SELECTOR_VALUES = {"all": 2, "hipblaslt_all": 2}
FACTOR_DIM_RUNTIME = 3


def activation_sent(sol: Solution) -> bool:
    """The runtime sends activation arguments: the kernel fuses it and the type is not none."""
    pt = sol.problem_type
    return bool(sol.tuning("ActivationFused")) and "Activation" in pt.params and pt.activation_type != "none"


def _activation_values(pt: ProblemType) -> int:
    if pt.activation_type not in _SELECTOR_VALUES:
        raise BuildError(f"problem type {pt.name}: activation {pt.activation_type!r} is not sent by this host")
    return _SELECTOR_VALUES[pt.activation_type]


def bias_type_sent(pt: ProblemType) -> bool:
    """bias_type and strideBias follow the bias pointer, except for a gradient bias taken from D."""
    return not (pt.gradient and pt.bias_src == "D")


def epilogue_fields(sol: Solution, buffers: Mapping[str, int], ep: EpilogueArgs) -> list[tuple[str, bytes]]:
    """(runtime name, bytes) of every epilogue argument of one call, in the runtime's order."""
    pt = sol.problem_type
    out: list[tuple[str, bytes]] = []

    def ptr(name: str) -> None:
        out.append((name, values.pointer(buffers.get(POINTERS[name], 0))))

    if pt.use_scale_ab:
        ptr("scaleA")
        ptr("scaleB")
    if pt.use_scale_cd:
        ptr("scaleC")
        ptr("scaleD")
    if pt.use_scale_alpha_vec:
        ptr("scaleAlphaVec")
    if pt.use_bias:
        ptr("bias")
        if bias_type_sent(pt):
            bias_type = ep.bias_type if ep.bias_type is not None else (pt.bias_data_types or (pt.compute_type,))[0]
            out += [("bias_type", values.u32(bias_type.value)), ("strideBias", values.u32(ep.stride_bias))]
    if FACTOR_DIM_RUNTIME in (pt.use_scale_alpha_vec, pt.use_bias):
        out.append(("factorDim", values.u32(ep.factor_dim)))
    if pt.use_e:
        ptr("e")
        out += [(f"strideE{i}", values.u32(ep.strides_e[i - 1] if i - 1 < len(ep.strides_e) else 0))
                for i in range(1, pt.num_indices_c)]
    if activation_sent(sol):
        for i in range(_activation_values(pt)):
            value = ep.activation_args[i] if i < len(ep.activation_args) else 0.0
            out.append((f"activation_{i}", values.activation_value(pt.activation_compute_type, value)))
        out.append(("activationType", values.u32(ep.activation)))
    if pt.output_amax_d:
        for name in ("AddrAmaxOut", "AmaxWS", "AmaxSync"):
            ptr(name)
    return out
