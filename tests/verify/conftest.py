from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import tensile_lite.sample
from tensile_lite.asm.gemm import unsupported_reasons
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.logic import find_logic_files, read_logic_file
from tensile_lite.tcl import main as tcl_main

ARCHS = ("gfx90a", "gfx942")


@pytest.fixture(scope="session")
def sample_library(tmp_path_factory: pytest.TempPathFactory, toolchain: Toolchain) -> Path:
    """The bundled sample built by TensileCreateLibrary for gfx90a and gfx942 (read-only: copy it
    with `library_copy` before changing anything)."""
    blocked = {}
    for path in find_logic_files([str(tensile_lite.sample.path())]):
        for sol in read_logic_file(path).solutions:
            if sol.arch in ARCHS and unsupported_reasons(sol):
                blocked[sol.name or sol.index] = unsupported_reasons(sol)
    if blocked:
        pytest.skip(f"the kernel writer does not support the sample's solutions yet: {blocked}")
    out = tmp_path_factory.mktemp("verify") / "sample"
    assert tcl_main([f"--architecture={'_'.join(ARCHS)}", str(tensile_lite.sample.path()), str(out), "HIP"]) == 0
    return out


@pytest.fixture(scope="module")
def library(sample_library: Path) -> Path:
    """The built library a module's tests verify: the sample, unless the module builds its own."""
    return sample_library


@pytest.fixture
def library_copy(library: Path, tmp_path: Path) -> Path:
    """A private copy of the module's `library` output folder, free to corrupt."""
    dst = tmp_path / "out"
    shutil.copytree(library, dst)
    return dst
