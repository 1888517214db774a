"""hipBLASLt 7.x's way of running the generator: the shim tree's entry points, its command line, and a
real CMake project that calls them the way create_device_library does (rocm-libraries @031a78a0,
projects/hipblaslt/cmake/hipblaslt_codegen.cmake): configure-time file checks, the TensileLogic step,
then `python -m Tensile.TensileCreateLibrary` with `--architecture=a;b` as one argument."""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import setuptools

import tensile_lite
import tensile_lite.sample
from tensile_lite.cli import main as cli_main
from tensile_lite.commands.rocm7_root import REQUIRED_FILES, root
from tensile_lite.errors import EXIT_INPUT, BuildError
from tensile_lite.interfaces import HIPBLASLT_2024, ROCM_7_2, ROCM_DEVELOP
from tensile_lite.library.formats import FORMATS
from tensile_lite.tcl import main as tcl_main
from tensile_lite.tcl_args import IGNORED_FLAGS, UPSTREAM_LIBRARY_FORMATS, build_parser, to_request

REPO = Path(tensile_lite.__file__).resolve().parents[1]


def _shim(args: list[str], cwd: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    """Run like CMake does: PYTHONPATH is the shim root only, python started with -P, elsewhere."""
    env = {**os.environ, "PYTHONPATH": str(root())}
    return subprocess.run([sys.executable, "-P", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120, **kw)  # type: ignore[call-overload]


# -- the shim tree --------------------------------------------------------------------------------------

def test_rocm7_root_holds_the_files_7x_configure_checks(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["rocm7-root"]) == 0
    printed = Path(capsys.readouterr().out.strip())
    assert printed == root() and printed.is_dir()
    for rel in REQUIRED_FILES:
        assert (printed / rel).is_file(), rel
    logic = printed / "Tensile" / "bin" / "TensileLogic"
    assert os.access(logic, os.X_OK) and logic.read_text().startswith("#!/usr/bin/env python3")


def test_shims_are_package_data_not_top_level_packages() -> None:
    # rocm7_root is no package, so neither `Tensile` nor `tensilelite` can land in site-packages
    assert not (root() / "__init__.py").exists()
    assert not [p for p in setuptools.find_packages(str(REPO), include=["tensile_lite*"]) if "rocm7_root" in p]
    section = re.search(r'^"tensile_lite" = \[(.*?)\]', (REPO / "pyproject.toml").read_text(), re.S | re.M)
    assert section
    globs = re.findall(r'"([^"]+)"', section.group(1))
    pkg = REPO / "tensile_lite"
    files = [p.relative_to(pkg).as_posix() for p in root().rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert files
    for rel in files:  # every shim file ships (the check CMake makes at configure time)
        assert any(fnmatch.fnmatch(rel, g.replace("**/", "*")) for g in globs), rel


@pytest.mark.parametrize("args, interface", [
    (["-m", "Tensile.TensileCreateLibrary", "--help"], ROCM_7_2),
    (["-m", "tensilelite", "create-library", "--help"], ROCM_DEVELOP),
])
def test_each_entry_point_says_which_interface_it_serves(args: list[str], interface: str, tmp_path: Path) -> None:
    res = _shim(args, tmp_path)
    assert res.returncode == 0, res.stderr
    assert f"(default interface: {interface})" in " ".join(res.stdout.split())


def test_the_2024_script_keeps_the_2024_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        tcl_main(["--help"])
    assert f"(default interface: {HIPBLASLT_2024})" in " ".join(capsys.readouterr().out.split())
    assert to_request(build_parser().parse_args(["a", "b", "HIP"])).interface == HIPBLASLT_2024


def test_shims_run_the_tensile_lite_that_ships_them(tmp_path: Path) -> None:
    res = _shim(["-c", "import Tensile, tensile_lite; print(tensile_lite.__file__)"], tmp_path)
    assert Path(res.stdout.strip()).resolve() == Path(tensile_lite.__file__).resolve(), res.stderr


def test_other_shim_commands(tmp_path: Path) -> None:
    assert _shim(["-m", "tensilelite", "logic", "--help"], tmp_path).returncode == 0
    assert _shim(["-m", "Tensile.TensileLogic", "--help"], tmp_path).returncode == 0
    script = _shim([str(root() / "Tensile" / "bin" / "TensileLogic"), "--help"], tmp_path)
    assert script.returncode == 0 and "--use-bundled-known-bugs" in script.stdout
    wrong = _shim(["-m", "tensilelite", "build"], tmp_path)
    assert wrong.returncode == EXIT_INPUT and "create-library" in wrong.stderr


# -- the 7.x command line ---------------------------------------------------------------------------------

# What create_device_library passes with every option on, then the other flags of 7.x's parser.
ROCM7_ARGV = [
    "--architecture=gfx90a;gfx942;", "--cxx-compiler=/opt/rocm/llvm/bin/amdclang++",
    "--offload-bundler=/opt/rocm/llvm/bin/clang-offload-bundler", "--address-sanitizer", "--jobs=4",
    "--keep-build-tmp", "--asm-debug", "--library-format=yaml", "--logic-filter=gfx942/FreeSize/*",
    "--no-compress", "--experimental", "--no-lazy-library-loading", "--disable-asm-comments",
    "--c-compiler=amdclang", "--cmake-cxx-compiler=/usr/bin/c++", "--emit-mainloop-trace-marker",
    "--enable-gemm-a2a-fusion", "--gfx1250v0", "--code-object-version=4", "--build-id=sha1", "--version=7.2",
    "--no-enumerate", "--logic-format=yaml", "--enable-marker", "--no-generate-solution-table", "-v", "1",
    "/src/library", "/build/Tensile", "HIP",
]


def test_the_7x_command_line_parses_into_the_request() -> None:
    req = to_request(build_parser(ROCM_7_2).parse_args(ROCM7_ARGV), ROCM_7_2)
    assert req.architectures == ("gfx90a", "gfx942") and req.interface == ROCM_7_2
    assert (req.compress, req.experimental, req.lazy_loading) == (False, True, False)
    assert req.offload_bundler == "/opt/rocm/llvm/bin/clang-offload-bundler"
    assert req.logic_filter == "gfx942/FreeSize/*" and req.library_format == "yaml" and req.jobs == 4
    assert {"--address-sanitizer", "--disable-asm-comments", "--c-compiler", "--emit-mainloop-trace-marker",
            "--enable-gemm-a2a-fusion", "--gfx1250v0", "--cxx-compiler", "--asm-debug"} <= set(req.ignored)


def test_every_ignored_flag_is_a_flag_of_the_parser() -> None:
    dests = {a.dest for a in build_parser()._actions}
    assert set(IGNORED_FLAGS) <= dests


def test_removed_2024_flags_are_still_accepted() -> None:
    argv = ["--merge-files", "--num-merged-files=2", "--short-file-names", "--separate-architectures",
            "--lazy-library-loading", "--package-library", "--embed-library=x", "--generate-sources-and-exit",
            "--validate-library", "--print-timing", "--global-parameters", "a=1", "--", "l", "o", "HIP"]
    assert to_request(build_parser(ROCM_7_2).parse_args(argv), ROCM_7_2).interface == ROCM_7_2


def test_ignored_flags_are_noted_at_verbose_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert tcl_main(["--verbose=2", "--address-sanitizer", "--disable-asm-comments", str(tmp_path / "nope"),
                     str(tmp_path / "o"), "HIP"], default_interface=ROCM_7_2) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "note: --address-sanitizer is accepted for compatibility" in err
    assert "note: --disable-asm-comments is accepted for compatibility" in err


@pytest.mark.parametrize("fmt", sorted(set(UPSTREAM_LIBRARY_FORMATS) - set(FORMATS)) or ["(none)"])
def test_a_format_the_writer_lacks_is_refused_in_one_line(fmt: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    if fmt == "(none)":
        pytest.skip("the writer writes every format upstream's parser offers")
    with pytest.raises(BuildError, match="cannot write this format yet"):
        to_request(build_parser(ROCM_7_2).parse_args([f"--library-format={fmt}", "l", "o", "HIP"]), ROCM_7_2)
    sample = str(tensile_lite.sample.path())
    assert tcl_main([f"--library-format={fmt}", sample, str(tmp_path / "o"), "HIP"], ROCM_7_2) == EXIT_INPUT
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and fmt in err and not (tmp_path / "o").exists()


# -- a CMake project calling us as hipBLASLt 7.x does -----------------------------------------------------

PROJECT7 = """\
cmake_minimum_required(VERSION 3.16)
project(hipblaslt7_like NONE)
# The shape of create_device_library (rocm-libraries @031a78a0): the generator root must hold three files
# at configure time, goes on PYTHONPATH, validates the logic first, then builds with one --architecture
# argument whose targets are joined by ';'. TCL_EXTRA: flags the device-library CMake adds (7.x passes
# --no-lazy-library-loading when the runtime is built without lazy loading).
set(root "${HIPBLASLT_CODEGEN_ROOT}")
foreach(rel Tensile/bin/TensileLogic Tensile/TensileCreateLibrary/__main__.py Tensile/TensileLogic/known_bugs.yaml)
  if(NOT EXISTS "${root}/${rel}")
    message(FATAL_ERROR "required codegen resource not found: ${root}/${rel}")
  endif()
endforeach()
set(py "${CMAKE_COMMAND}" -E env "PYTHONPATH=${root}" -- "${PYTHON}" -P)
list(JOIN GPU_TARGETS "$<SEMICOLON>" arches)
set(out "${PROJECT_BINARY_DIR}/Tensile")
add_custom_command(OUTPUT "${PROJECT_BINARY_DIR}/logic.stamp"
  COMMAND ${py} "${root}/Tensile/bin/TensileLogic" "${LOGIC}" --architecture "${arches}"
          --use-bundled-known-bugs --check-all
  COMMAND "${CMAKE_COMMAND}" -E touch "${PROJECT_BINARY_DIR}/logic.stamp"
  VERBATIM)
add_custom_command(OUTPUT "${PROJECT_BINARY_DIR}/library.stamp"
  COMMAND ${py} -m Tensile.TensileCreateLibrary "--architecture=${arches}" "--cxx-compiler=amdclang++"
          --jobs=2 --no-compress --disable-asm-comments ${TCL_EXTRA} "${LOGIC}" "${out}" HIP
  COMMAND "${CMAKE_COMMAND}" -E touch "${PROJECT_BINARY_DIR}/library.stamp"
  DEPENDS "${PROJECT_BINARY_DIR}/logic.stamp"
  VERBATIM)
add_custom_target(device_libraries ALL DEPENDS "${PROJECT_BINARY_DIR}/library.stamp")
"""


def _cmake_project(tmp_path: Path, logic: Path, codegen_root: Path, extra: str = "") -> tuple[str, Path]:
    cmake = shutil.which("cmake")
    if not cmake:
        pytest.skip("cmake is not on PATH")
    src, build = tmp_path / "src", tmp_path / "build"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(PROJECT7)
    res = subprocess.run([cmake, "-S", str(src), "-B", str(build), f"-DHIPBLASLT_CODEGEN_ROOT={codegen_root}",
                          f"-DLOGIC={logic}", f"-DPYTHON={sys.executable}", "-DGPU_TARGETS=gfx90a;gfx942",
                          f"-DTCL_EXTRA={extra}"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    return cmake, build


@pytest.mark.parametrize("extra", ["", "--no-lazy-library-loading"])
def test_cmake_7x_project_validates_then_builds(tmp_path: Path, toolchain: object, extra: str) -> None:
    cmake, build = _cmake_project(tmp_path, tensile_lite.sample.path(), root(), extra)
    res = subprocess.run([cmake, "--build", str(build)], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "checked 2 logic file(s) of gfx90a, gfx942" in res.stdout
    library = build / "Tensile" / "library"
    master, other = ("TensileLibrary_{}", "TensileLibrary_lazy_{}") if extra else ("TensileLibrary_lazy_{}", "")
    for gfx in ("gfx90a", "gfx942"):  # flat (7.0-7.2) or per architecture (develop): either layout
        assert list(library.rglob(master.format(gfx) + ".dat*")), sorted(library.rglob("*"))
        assert list(library.rglob(f"TensileLibrary_{gfx}.co")) == ([library / f"TensileLibrary_{gfx}.co"]
                                                                    if extra else [])
        assert not other or not list(library.rglob(other.format(gfx) + ".*"))
    if extra:  # nothing but the masters, their code objects and the helpers
        assert len(list(library.rglob("*.dat*"))) == 2 and not list(library.rglob("*Mapping*"))


def test_cmake_7x_project_stops_at_bad_logic(tmp_path: Path) -> None:
    logic = tmp_path / "logic"
    shutil.copytree(tensile_lite.sample.path(), logic)
    broken = next(p for p in logic.rglob("*.yaml") if "gfx942" in p.as_posix())
    text = broken.read_text()
    assert "WorkGroup: [" in text
    broken.write_text(text.replace("WorkGroup: [", "WorkGroup: many [", 1))
    cmake, build = _cmake_project(tmp_path, logic, root())
    res = subprocess.run([cmake, "--build", str(build)], capture_output=True, text=True, timeout=600)
    assert res.returncode != 0
    assert str(broken) in res.stdout + res.stderr and "WorkGroup" in res.stdout + res.stderr
    assert not (build / "Tensile" / "library").exists()  # the generator never ran
