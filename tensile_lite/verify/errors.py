"""Errors of library verification."""

from __future__ import annotations

from tensile_lite.errors import TensileLiteError


class VerifyError(TensileLiteError):
    """The output folder does not hold a library that can be read (exit code 2, like other user errors)."""


class NotVerifiable(Exception):
    """A kernel the verifier cannot run or check: reported as skipped with this reason, never as passed."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class DamagedEntry(NotVerifiable):
    """A `.dat` solution entry that no build writes (a field missing, values that contradict each other):
    damage to report as an error naming the file, never a kernel to skip."""
