"""Activation kinds as the runtime numbers them, and what a problem type's activation setting admits.

The runtime's `ActivationEnumWhiteList` predicate lists the activation kinds a kernel built for `all` or
`hipblaslt_all` can apply. Which kinds those are depends on the activation compute type, on who supports the
kind (the hipBLASLt API or only Tensile's own client) and on whether the kernel is a gradient kernel.
"""

from __future__ import annotations

import attrs

from tensile_lite.model.datatypes import DataType

# Who accepts an activation kind: the hipBLASLt API, Tensile's own client, or both.
HIPBLASLT = 1
TENSILE = 2
BOTH = HIPBLASLT | TENSILE


@attrs.frozen(slots=True)
class ActivationKind:
    name: str
    gradient: bool
    extra_args: int
    types: frozenset[DataType]
    supported_by: int


def _kind(name: str, gradient: bool, extra_args: int, types: str, supported_by: int) -> ActivationKind:
    return ActivationKind(name, gradient, extra_args,
                          frozenset(DataType.parse(t) for t in types.split()), supported_by)


# In the runtime's enum order (the order matters: the white list is emitted in it). `hipblaslt_all` and
# `all` are selectors over the others, never members of a white list.
KINDS: tuple[ActivationKind, ...] = (
    _kind("none", False, 0, "H S D B I8 I", BOTH),
    _kind("abs", False, 0, "H S D B I", TENSILE),
    _kind("clippedrelu", False, 2, "H S D I", TENSILE),
    _kind("gelu", False, 0, "H S", BOTH),
    _kind("leakyrelu", False, 1, "H S D I", TENSILE),
    _kind("relu", False, 0, "H S D I", BOTH),
    _kind("sigmoid", False, 0, "H S", TENSILE),
    _kind("tanh", False, 2, "H S", TENSILE),
    _kind("dgelu", True, 0, "S", BOTH),
    _kind("geluscaling", False, 1, "H S", TENSILE),
    _kind("silu", False, 0, "H S", TENSILE),
)

SELECTORS: dict[str, int] = {"hipblaslt_all": HIPBLASLT, "all": BOTH}


def enum_name(activation: str) -> str:
    """The runtime's spelling of an activation setting (`hipblaslt_all` -> `Hipblaslt_all`)."""
    return activation.capitalize()


def white_list(activation: str, compute: DataType, gradient: bool) -> tuple[str, ...]:
    """Kinds a kernel with this selector applies; gradient kernels apply only the gradient kinds."""
    accepted_by = SELECTORS[activation]
    return tuple(enum_name(k.name) for k in KINDS
                 if k.gradient == gradient and compute in k.types and k.supported_by & accepted_by)


def argument_count(activation: str) -> int:
    """Extra activation arguments (alpha, beta, ...) a kernel takes: the most any forward kind needs."""
    if activation in SELECTORS:
        return max(k.extra_args for k in KINDS if not k.gradient)
    return next((k.extra_args for k in KINDS if k.name == activation), 0)
