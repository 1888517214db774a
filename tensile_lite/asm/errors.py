"""The errors the assembly layer raises; all are BuildErrors a solution's parameters can cause."""

from __future__ import annotations

from tensile_lite.errors import BuildError


class AsmError(BuildError):
    """Base of the assembly layer's errors."""


class UnsupportedInstruction(AsmError):
    """The target has no such instruction (the message names the mnemonic and the target)."""


class OperandError(AsmError):
    """An operand or modifier that the instruction does not accept on this target."""


class RegisterOverflow(AsmError):
    """A kernel needs more registers of one class than the target's file holds."""
