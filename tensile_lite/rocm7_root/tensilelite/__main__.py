"""`python -m tensilelite create-library ...` (the build, serving rocm-libraries develop unless --interface
says otherwise) and `python -m tensilelite logic ...` (the validation step), as HipBLASLtCodegen.cmake
runs them."""

import sys

from tensile_lite.commands.check_logic import main as check_logic
from tensile_lite.interfaces import ROCM_DEVELOP
from tensile_lite.tcl import main as create_library

USAGE = ("usage: python -m tensilelite {create-library,logic} ...\n"
         f"  create-library  build the kernel library (default interface: {ROCM_DEVELOP}; --help for more)\n"
         "  logic           validate a logic tree (7.x's TensileLogic step; --help for more)\n")

if __name__ == "__main__":
    command, rest = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("", [])
    if command == "create-library":
        sys.exit(create_library(rest, default_interface=ROCM_DEVELOP, prog="python -m tensilelite create-library"))
    if command == "logic":
        sys.exit(check_logic(rest, prog="python -m tensilelite logic"))
    sys.stderr.write(USAGE if command in ("", "-h", "--help") else f"{USAGE}error: unknown command {command!r}\n")
    sys.exit(0 if command in ("-h", "--help") else 2)
