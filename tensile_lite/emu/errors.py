"""Errors of the emulator: each names the kernel, the instruction and the wave where it happened."""

from __future__ import annotations

from tensile_lite.errors import TensileLiteError


class EmulatorError(TensileLiteError):
    """A kernel the emulator cannot run, or a kernel that did something the hardware would not allow."""


class CodeObjectError(EmulatorError):
    """The code object, the kernel descriptor or the disassembly cannot be used."""


class UnsupportedInstruction(EmulatorError):
    """An instruction (or an operand form of one) the emulator does not implement; never skipped."""


class MemoryFault(EmulatorError):
    """An access outside every allocation (a page fault on hardware) or outside the LDS allocation."""


class HazardError(EmulatorError):
    """Wrong synchronisation: a register read before its load was waited for, an LDS race, ..."""


class LaunchError(EmulatorError):
    """Launch parameters that do not fit the kernel (block too large, kernarg too long, ...)."""
