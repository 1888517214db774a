"""Makes the tensile_lite that ships this folder the one the stand-ins below run.

hipBLASLt's CMake puts only this folder on PYTHONPATH; tensile_lite itself may be installed, or be a
source tree, or another copy may be installed too (then this one must win, so a source checkout runs
its own code). The folder is tensile_lite/rocm7_root, so the package's parent is two levels up.
"""

import sys
from pathlib import Path

_PARENT = str(Path(__file__).resolve().parents[2])
if not sys.path or sys.path[0] != _PARENT:
    sys.path.insert(0, _PARENT)
