"""One logic file as read: architecture, problem type, solutions and the selection data."""

from __future__ import annotations

import attrs

from tensile_lite.model.params import Params
from tensile_lite.model.problem import ProblemType
from tensile_lite.model.solution import Solution

# Library types of the list form; anything but FreeSize is a Matching table with that distance.
MATCHING_DISTANCES: frozenset[str] = frozenset(
    {"GridBased", "Equality", "Euclidean", "Manhattan", "Ratio", "Random", "JSD"}
)
LIBRARY_TYPES: frozenset[str] = MATCHING_DISTANCES | {"FreeSize", "DecisionTree"}


@attrs.frozen(slots=True)
class ExactRow:
    """One row of a Matching table: problem sizes -> local solution position (and its measured speed)."""

    sizes: tuple[int, ...]
    solution: int
    speed: float


@attrs.frozen(slots=True)
class LogicFile:
    path: str
    arch: str
    cu_count: int | None
    schedule: str
    device_names: tuple[str, ...]
    problem_type: ProblemType
    solutions: tuple[Solution, ...]
    library_type: str
    perf_metric: str
    index_order: tuple[int, ...] | None
    table: tuple[ExactRow, ...]
    decision_library: Params | None = None  # dict-form files: their Library section, verbatim
    min_version: str = ""
    notes: tuple[str, ...] = ()

    @property
    def is_matching(self) -> bool:
        return self.library_type in MATCHING_DISTANCES
