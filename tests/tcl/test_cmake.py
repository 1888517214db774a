"""hipBLASLt's way of calling us: find_package(Tensile) + TensileCreateLibraryFiles, with real cmake."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import tensile_lite.sample
from tensile_lite.cli import main as cli_main

PROJECT = """\
cmake_minimum_required(VERSION 3.16)
project(hipblaslt_like NONE)
find_package(Tensile 4.33.0 REQUIRED)
set(Tensile_Options MERGE_FILES SEPARATE_ARCHITECTURES LAZY_LIBRARY_LOADING)
TensileCreateLibraryFiles(
  "{logic}"
  "${{PROJECT_BINARY_DIR}}/Tensile"
  ARCHITECTURE        gfx90a:xnack+ gfx90a:xnack- gfx942
  CODE_OBJECT_VERSION default
  COMPILER            amdclang++
  LIBRARY_FORMAT      msgpack
  CPU_THREADS         2
  ${{Tensile_Options}}
)
"""


def test_cmake_project_builds_the_library(tmp_path, toolchain, capsys):
    cmake = shutil.which("cmake")
    tcl = shutil.which("TensileCreateLibrary")
    if not cmake or not tcl:
        pytest.skip("cmake or the TensileCreateLibrary console script is not on PATH")
    assert cli_main(["cmake-prefix"]) == 0
    prefix = capsys.readouterr().out.strip()
    src, build = tmp_path / "src", tmp_path / "build"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(PROJECT.format(logic=tensile_lite.sample.path().as_posix()))
    subprocess.run([cmake, "-S", str(src), "-B", str(build), f"-DCMAKE_PREFIX_PATH={prefix}",
                    f"-DTENSILE_LITE_TCL={tcl}"], check=True, capture_output=True)
    res = subprocess.run([cmake, "--build", str(build)], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    library = build / "Tensile" / "library"
    manifest = sorted(Path(p) for p in (library / "TensileManifest.txt").read_text().splitlines())
    assert manifest == sorted(p.resolve() for p in library.iterdir() if p.name != "TensileManifest.txt")
    assert {"TensileLibrary_lazy_gfx90a.dat", "TensileLibrary_lazy_gfx942.dat"} <= {p.name for p in manifest}
    # The manifest is the build stamp: a second build does nothing.
    again = subprocess.run([cmake, "--build", str(build)], capture_output=True, text=True, check=True)
    assert "Generating Tensile libraries" not in again.stdout
