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
# ROCm 7.x library types whose winner is not in the file: the runtime ranks the candidates itself,
# `Prediction` with an analytical model (Origami), `EmbeddingSimilarity` with model weights the file
# carries (spec/rocm7_delta.md §1.1, addendum item 4). Like FreeSize, they list solutions only.
RUNTIME_RANKED: frozenset[str] = frozenset({"Prediction", "EmbeddingSimilarity"})
LIBRARY_TYPES: frozenset[str] = MATCHING_DISTANCES | {"FreeSize", "DecisionTree"} | RUNTIME_RANKED
# Library types we read but whose `.dat` node the writer cannot write yet, and why: the build leaves
# their files out (docs/rocm7_library_types.md). The runtime's EmbeddingSimilarity node needs an
# encoder network and per-solution embeddings, and where a logic file keeps them is not known.
WRITER_GAPS: dict[str, str] = {
    "EmbeddingSimilarity": "its .dat node needs the encoder weights and solution embeddings, and the logic "
                           "file layout that carries them is not known to tensile-lite yet",
}
# What a 9- to 11-element list (no LibraryType element) is read as: a Matching table with the distance
# of the files written before the element existed.
UNNAMED_LIBRARY_TYPE = "Euclidean"


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

    @property
    def library_writer_gap(self) -> str | None:
        """Why our `.dat` writer must leave this file out (None: it can describe it)."""
        reason = WRITER_GAPS.get(self.library_type)
        if reason is not None:
            return (f"library type {self.library_type}: {reason}, so the file is left out rather than "
                    "filed under another library type")
        return None
