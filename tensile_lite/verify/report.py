"""Results of verifying a library: per kernel, the whole run, its JSON document and its table."""

from __future__ import annotations

from typing import Any

import attrs

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"


@attrs.frozen(slots=True)
class Failure:
    problem: str
    error: str


@attrs.frozen(slots=True)
class KernelOutcome:
    arch: str
    kernel: str
    status: str
    reason: str = ""  # why it was skipped
    failures: tuple[Failure, ...] = ()
    notes: tuple[str, ...] = ()  # what could not be covered, and why
    problems: int = 0  # problems run
    workgroups: int = 0  # workgroups emulated
    instructions: int = 0
    seconds: float = 0.0


@attrs.frozen(slots=True)
class Report:
    outcomes: tuple[KernelOutcome, ...]
    seconds: float

    @property
    def ok(self) -> bool:
        return all(o.status != FAILED for o in self.outcomes)

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.outcomes)

    def to_json(self) -> dict[str, Any]:
        """`{"kernels", "passed", "failed": [{kernel, problem, error}], "skipped": [{kernel, reason}]}`,
        plus the architecture of each entry, notes and totals."""
        return {
            "kernels": len(self.outcomes),
            "passed": self.count(PASSED),
            "failed": [{"kernel": o.kernel, "arch": o.arch, "problem": f.problem, "error": f.error}
                       for o in self.outcomes for f in o.failures],
            "skipped": [{"kernel": o.kernel, "arch": o.arch, "reason": o.reason}
                        for o in self.outcomes if o.status == SKIPPED],
            "notes": [{"kernel": o.kernel, "arch": o.arch, "note": n} for o in self.outcomes for n in o.notes],
            "problems": sum(o.problems for o in self.outcomes),
            "workgroups": sum(o.workgroups for o in self.outcomes),
            "instructions": sum(o.instructions for o in self.outcomes),
            "seconds": round(self.seconds, 3),
        }

    def table(self) -> str:
        """A human-readable table: one row per kernel, then failures, skip reasons and a summary."""
        rows = [("arch", "kernel", "result", "problems", "workgroups", "seconds")]
        for o in self.outcomes:
            rows.append((o.arch, o.kernel, o.status, str(o.problems), str(o.workgroups), f"{o.seconds:.1f}"))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
                 .rstrip() for r in rows]
        for o in self.outcomes:
            for f in o.failures:
                lines.append(f"FAILED {o.kernel} [{f.problem}]: {f.error}")
            if o.status == SKIPPED:
                lines.append(f"skipped {o.kernel}: {o.reason}")
            for n in o.notes:
                lines.append(f"note {o.kernel}: {n}")
        failed = self.count(FAILED)
        lines.append(f"{len(self.outcomes)} kernels: {self.count(PASSED)} passed, {failed} failed, "
                     f"{self.count(SKIPPED)} skipped; {sum(o.problems for o in self.outcomes)} problems, "
                     f"{sum(o.workgroups for o in self.outcomes)} workgroups emulated in {self.seconds:.1f} s")
        return "\n".join(lines)
