"""The immutable model: data types, problem types, solutions, logic files and kernel keys.

Nothing here knows about files, YAML or assembly. Everything is frozen; make variants with `attrs.evolve`.
"""

from tensile_lite.model.datatypes import DataType
from tensile_lite.model.kernel_key import kernel_key
from tensile_lite.model.logicfile import LIBRARY_TYPES, MATCHING_DISTANCES, ExactRow, LogicFile
from tensile_lite.model.params import Params, normalize, plain
from tensile_lite.model.problem import ProblemType
from tensile_lite.model.solution import CustomSource, MatrixInstruction, RuntimeArgs, Solution

__all__ = [
    "LIBRARY_TYPES", "MATCHING_DISTANCES", "CustomSource", "DataType", "ExactRow", "LogicFile", "MatrixInstruction",
    "Params", "ProblemType", "RuntimeArgs", "Solution", "kernel_key", "normalize", "plain",
]
