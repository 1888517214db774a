"""Errors as values with context, turned into one clear line at the command line.

Every command exits with one of a fixed set of codes (`EXIT_CODES`, shown in each --help), so a build
system or a packager's script can tell a bad input from a broken toolchain from a full disk.
"""

from __future__ import annotations

from typing import Any

import attrs

EXIT_OK = 0
EXIT_VERIFY_FAILED = 1  # verify-library only: a kernel computed a wrong result
EXIT_INPUT = 2  # the command line, a logic file or a library file
EXIT_TOOLCHAIN = 3  # LLVM missing or unable, or an assembler/linker call failed, crashed or timed out
EXIT_OUTPUT = 4  # a path that cannot be written, a full disk, another build holding the output folder
EXIT_INTERNAL = 5  # a bug in tensile-lite (--debug shows the traceback)
EXIT_SIGNAL_BASE = 128  # stopped by signal N: 128 + N (130 SIGINT, 143 SIGTERM, 129 SIGHUP)

EXIT_CODES: tuple[tuple[str, str], ...] = (
    (str(EXIT_OK), "success"),
    (str(EXIT_VERIFY_FAILED), "verify-library: a kernel failed verification"),
    (str(EXIT_INPUT), "usage error or bad input (command line, logic file, library file, unknown architecture)"),
    (str(EXIT_TOOLCHAIN), "toolchain: LLVM missing or unable, an assembler/linker call failed, crashed or "
                          "timed out"),
    (str(EXIT_OUTPUT), "output: a path that cannot be created or written, a full disk, the output folder "
                       "locked by another build"),
    (str(EXIT_INTERNAL), "internal error (a bug; --debug shows the traceback)"),
    ("128+N", "stopped by signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP); temporaries are removed"),
)


def exit_codes_help() -> str:
    """The exit-code table as an argparse epilog."""
    width = max(len(code) for code, _ in EXIT_CODES)
    return "exit codes:\n" + "\n".join(f"  {code.ljust(width)}  {text}" for code, text in EXIT_CODES)


@attrs.frozen(slots=True)
class Where:
    """Where a problem was found: file, solution (index and name) and parameter, each optional."""

    file: str | None = None
    solution_index: int | None = None
    solution_name: str | None = None
    parameter: str | None = None

    def describe(self) -> str:
        parts = []
        if self.file:
            parts.append(self.file)
        if self.solution_index is not None or self.solution_name:
            sol = "solution"
            if self.solution_index is not None:
                sol += f" #{self.solution_index}"
            if self.solution_name:
                sol += f" ({self.solution_name})"
            parts.append(sol)
        if self.parameter:
            parts.append(f"parameter {self.parameter}")
        return ": ".join(parts)


class TensileLiteError(Exception):
    """Base class of every error a user can cause; the CLI prints it as one line and exits 2."""

    exit_code = EXIT_INPUT

    def __init__(self, message: str, where: Where | None = None) -> None:
        self.message = message
        self.where = where or Where()
        super().__init__(self.one_line())

    def one_line(self) -> str:
        prefix = self.where.describe()
        return f"{prefix}: {self.message}" if prefix else self.message

    def at(self, **context: object) -> TensileLiteError:
        """The same error with more context filled in (fields already set win)."""
        fields: dict[str, Any] = {k: v for k, v in context.items() if getattr(self.where, k) is None}
        return type(self)(self.message, attrs.evolve(self.where, **fields))


class LogicError(TensileLiteError):
    """A logic file that cannot be read or is inconsistent."""


class DatError(TensileLiteError):
    """A library file that cannot be decoded."""


class ToolchainError(TensileLiteError):
    """The LLVM toolchain is missing, too old, or cannot handle a target."""

    exit_code = EXIT_TOOLCHAIN


class BuildError(TensileLiteError):
    """Assembling, linking or writing outputs failed."""


class ToolFailure(BuildError):
    """An assembler or linker call failed, crashed, timed out or wrote nothing."""

    exit_code = EXIT_TOOLCHAIN


class DiskFull(ToolFailure):
    """A tool failed because the disk it writes to is full: the output's problem, not the toolchain's."""

    exit_code = EXIT_OUTPUT


class OutputError(TensileLiteError):
    """A path we must write cannot be created or written (read-only, a file in the way, disk full, locked)."""

    exit_code = EXIT_OUTPUT


class UnknownArchitecture(TensileLiteError):
    """An architecture no table of tensile-lite knows, named with where it came from."""
