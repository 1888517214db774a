"""TensileCreateLibrary accepts hipBLASLt's exact command line."""

from __future__ import annotations

import pytest

from tensile_lite.errors import TensileLiteError
from tensile_lite.tcl_args import build_parser, parse_architectures, to_request

# The argv hipBLASLt's CMake builds (TensileConfig.cmake flag order), with every optional flag it may add.
HIPBLASLT_ARGV = [
    "--merge-files", "--separate-architectures", "--lazy-library-loading", "--enable-marker", "--keep-build-tmp",
    "--no-short-file-names", "--no-library-print-debug", "--code-object-version=default",
    "--cxx-compiler=amdclang++", "--jobs=2", "--asm-debug", "--logic-filter=*", "--library-format=msgpack",
    "--architecture=gfx908:xnack+_gfx908:xnack-_gfx90a:xnack+_gfx90a:xnack-_gfx940_gfx941_gfx942_gfx1100_gfx1101__"
    "gfx1200_gfx1201", "--build-id=sha1", "/src/Logic/asm_full", "/build/Tensile", "HIP",
]


def test_hipblaslt_argv_parses():
    req = to_request(build_parser().parse_args(HIPBLASLT_ARGV))
    assert req.architectures == ("gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx1100", "gfx1101",
                                 "gfx1200", "gfx1201")
    assert (req.logic_path, req.output_path) == ("/src/Logic/asm_full", "/build/Tensile")
    assert req.code_object_version == 4 and req.jobs == 2 and req.keep_build_tmp
    assert req.library_format == "msgpack" and not req.strict
    assert "--asm-debug" in req.ignored and "--enable-marker" in req.ignored


@pytest.mark.parametrize("value, expected", [
    ("all", ()), ("gfx942", ("gfx942",)), ("gfx90a:xnack+;gfx90a:xnack-;gfx942", ("gfx90a", "gfx942")),
    ("gfx1100_gfx1201", ("gfx1100", "gfx1201")), ("gfx908:sramecc+:xnack-", ("gfx908",)),
])
def test_architecture_lists(value, expected):
    assert parse_architectures(value) == expected


def test_bad_architecture_is_a_clear_error():
    with pytest.raises(TensileLiteError, match="gfxzz"):
        parse_architectures("gfx942_gfxzz")


@pytest.mark.parametrize("cov, expected", [("default", 4), ("V4", 4), ("V5", 5), ("5", 5)])
def test_code_object_versions(cov, expected):
    argv = [f"--code-object-version={cov}", "a", "b", "HIP"]
    assert to_request(build_parser().parse_args(argv)).code_object_version == expected


def test_unknown_runtime_language_is_rejected(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["a", "b", "CUDA"])
