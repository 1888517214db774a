"""hipBLASLt's way of calling us: find_package(Tensile) + TensileCreateLibraryFiles, with real cmake."""

from __future__ import annotations

import re
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


# What hipBLASLt's own CMake does with the Tensile package (ROCm/hipBLASLt 7d9fb683,
# CMakeLists.txt:239-241, library/src/amd_detail/rocblaslt/src/CMakeLists.txt:70-101,
# library/CMakeLists.txt:81-105), with a stand-in for its tensilelite/Tensile/Source.
HIPBLASLT_LIKE = """\
cmake_minimum_required(VERSION 3.16)
project(hipblaslt_like C)
find_package(Tensile 4.33.0 EXACT REQUIRED HIP LLVM OpenMP)
set(Tensile_BUILD_ID sha1)  # both reach the function by scope, as upstream's comment warns
set(Tensile_ASM_DEBUG ON)
set(Tensile_Options MERGE_FILES SEPARATE_ARCHITECTURES LAZY_LIBRARY_LOADING)
TensileCreateLibraryFiles(
  "{logic}"
  "${{PROJECT_BINARY_DIR}}/Tensile"
  ARCHITECTURE        gfx942
  CODE_OBJECT_VERSION default
  COMPILER            amdclang++
  COMPILER_PATH       /opt/rocm/llvm/bin/amdclang++
  LIBRARY_FORMAT      msgpack
  ${{Tensile_Options}}
)
TensileCreateExtOpLibraries("${{PROJECT_BINARY_DIR}}/Tensile/library" "gfx942")
set_target_properties(TensileHost PROPERTIES OUTPUT_NAME rocblaslt-tensile CXX_EXTENSIONS NO)
set_target_properties(TensileHost PROPERTIES CXX_VISIBILITY_PRESET hidden)
add_dependencies(TensileHost TENSILE_LIBRARY_TARGET)
get_target_property(host_defs TensileHost COMPILE_DEFINITIONS)
message(STATUS "host-defs=${{host_defs}}")
"""

HOST_STANDIN = """\
project(Tensile C)
add_library(TensileHost STATIC host.c)
target_compile_definitions(TensileHost PUBLIC STANDIN_USE_HIP=${TENSILE_USE_HIP}
                           STANDIN_USE_LLVM=${TENSILE_USE_LLVM} STANDIN_CLIENT=${TENSILE_BUILD_CLIENT})
"""


def _hipblaslt_like(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, Path, Path, str]:
    cmake, tcl = shutil.which("cmake"), shutil.which("TensileCreateLibrary")
    if not cmake or not tcl or not shutil.which("cc"):
        pytest.skip("cmake, a C compiler or the TensileCreateLibrary console script is not on PATH")
    assert cli_main(["cmake-prefix"]) == 0
    prefix = capsys.readouterr().out.strip()
    src = tmp_path / "src"
    host = src / "tensilelite" / "Tensile" / "Source"
    host.mkdir(parents=True)
    (host / "CMakeLists.txt").write_text(HOST_STANDIN)
    (host / "host.c").write_text("int tensile_host_standin(void) { return 0; }\n")
    (src / "CMakeLists.txt").write_text(HIPBLASLT_LIKE.format(logic=tensile_lite.sample.path().as_posix()))
    return cmake, src, Path(prefix), tcl


def test_hipblaslt_cmake_configures_with_host_and_without_extops(tmp_path, capsys):
    cmake, src, prefix, tcl = _hipblaslt_like(tmp_path, capsys)
    res = subprocess.run([cmake, "-S", str(src), "-B", str(tmp_path / "build"), f"-DCMAKE_PREFIX_PATH={prefix}",
                          f"-DTENSILE_LITE_TCL={tcl}", "-DTENSILE_LITE_SKIP_EXTOP_LIBRARIES=ON"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    # TensileHost came from the project's own tensilelite/Tensile/Source, switched by the components asked for.
    assert "building TensileHost from" in res.stdout
    assert "host-defs=STANDIN_USE_HIP=ON;STANDIN_USE_LLVM=ON;STANDIN_CLIENT=OFF" in res.stdout
    # Upstream's flags, in upstream's order, including the ones that arrive by scope or as options.
    command = next(line for line in res.stdout.splitlines() if "tensile-lite: " in line and line.endswith(" HIP"))
    assert re.findall(r"--[^\s;]+", command) == [
        "--merge-files", "--separate-architectures", "--lazy-library-loading", "--no-short-file-names",
        "--no-library-print-debug", "--code-object-version=default", "--cxx-compiler=amdclang++",
        "--cmake-cxx-compiler=/opt/rocm/llvm/bin/amdclang++", "--asm-debug", "--library-format=msgpack",
        "--architecture=gfx942", "--build-id=sha1"]
    assert "ExtOp APIs will fail at run time" in " ".join(res.stderr.split())  # the skip is loud (wrapped)


def test_hipblaslt_cmake_refuses_to_drop_extops_silently(tmp_path, capsys):
    cmake, src, prefix, tcl = _hipblaslt_like(tmp_path, capsys)
    res = subprocess.run([cmake, "-S", str(src), "-B", str(tmp_path / "build"), f"-DCMAKE_PREFIX_PATH={prefix}",
                          f"-DTENSILE_LITE_TCL={tcl}"], capture_output=True, text=True)
    err = " ".join(res.stderr.split())  # CMake wraps messages
    assert res.returncode != 0
    assert "does not generate hipBLASLt's ExtOp" in err and "-DTENSILE_LITE_SKIP_EXTOP_LIBRARIES=ON" in err
