"""Errors as values with context, turned into one clear line at the command line."""

from __future__ import annotations

import attrs


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

    exit_code = 2

    def __init__(self, message: str, where: Where | None = None) -> None:
        self.message = message
        self.where = where or Where()
        super().__init__(self.one_line())

    def one_line(self) -> str:
        prefix = self.where.describe()
        return f"{prefix}: {self.message}" if prefix else self.message

    def at(self, **context: object) -> TensileLiteError:
        """The same error with more context filled in (fields already set win)."""
        fields = {k: v for k, v in context.items() if getattr(self.where, k) is None}
        return type(self)(self.message, attrs.evolve(self.where, **fields))


class LogicError(TensileLiteError):
    """A logic file that cannot be read or is inconsistent."""


class ToolchainError(TensileLiteError):
    """The LLVM toolchain is missing, too old, or cannot handle a target."""


class BuildError(TensileLiteError):
    """Assembling, linking or writing outputs failed."""
