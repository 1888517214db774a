"""`tensile-lite rocm7-root`: the folder hipBLASLt 7.x's CMake takes as its code generator's root."""

from __future__ import annotations

import argparse
from pathlib import Path

NAME = "rocm7-root"
HELP = "print the folder to give hipBLASLt 7.x's CMake as HIPBLASLT_CODEGEN_ROOT (its PYTHONPATH)"
DESCRIPTION = (
    "Print the folder holding tensile-lite's stand-ins for the modules hipBLASLt 7.x runs: "
    "Tensile/TensileCreateLibrary (python -m Tensile.TensileCreateLibrary, serving ROCm 7.0-7.2), "
    "Tensile/bin/TensileLogic and Tensile/TensileLogic/known_bugs.yaml (the validation step and the files "
    "its configure checks), and tensilelite (python -m tensilelite create-library|logic, serving "
    "rocm-libraries develop). hipBLASLt's CMake puts this folder on PYTHONPATH: "
    "cmake -DHIPBLASLT_CODEGEN_ROOT=\"$(tensile-lite rocm7-root)\" ... (README: Building hipBLASLt 7.x)."
)

# Below the root, the files 7.x's configure step requires (cmake/hipblaslt_codegen.cmake, rocm-libraries
# @031a78a0, create_device_library), the known-bugs list being the one the validation step reads.
KNOWN_BUGS = Path("Tensile", "TensileLogic", "known_bugs.yaml")
REQUIRED_FILES: tuple[Path, ...] = (Path("Tensile", "bin", "TensileLogic"),
                                    Path("Tensile", "TensileCreateLibrary", "__main__.py"), KNOWN_BUGS)


def root() -> Path:
    return Path(__file__).resolve().parents[1] / "rocm7_root"


def add_arguments(p: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    print(root())
    return 0
