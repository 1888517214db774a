"""`tensile-lite cmake-prefix`: where CMake finds our TensileConfig.cmake."""

from __future__ import annotations

import argparse
from pathlib import Path

NAME = "cmake-prefix"
HELP = "print the directory to put on CMAKE_PREFIX_PATH for find_package(Tensile)"
DESCRIPTION = (
    "Print the prefix holding lib/cmake/Tensile/TensileConfig.cmake, whose TensileCreateLibraryFiles() runs "
    "tensile-lite's TensileCreateLibrary. Use: cmake -DCMAKE_PREFIX_PATH=\"$(tensile-lite cmake-prefix)\" ..."
)


def prefix() -> Path:
    return Path(__file__).resolve().parents[1] / "cmake_prefix"


def add_arguments(p: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    print(prefix())
    return 0
