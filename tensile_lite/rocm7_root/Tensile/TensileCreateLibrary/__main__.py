"""`python -m Tensile.TensileCreateLibrary ...`, as hipBLASLt 7.x's CMake runs it: tensile-lite's build,
serving ROCm 7.0-7.2 unless --interface says otherwise."""

import sys

from tensile_lite.interfaces import ROCM_7_2
from tensile_lite.tcl import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], default_interface=ROCM_7_2, prog="python -m Tensile.TensileCreateLibrary"))
