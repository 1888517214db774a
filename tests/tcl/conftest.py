from __future__ import annotations

from pathlib import Path

import pytest

from tensile_lite.codeobj.toolchain import Toolchain
from tests.shared import shared_dir
from tests.tcl.runtime_probe import DevsetBuilds, Probe, find_probe


@pytest.fixture(scope="session")
def devset_kernel_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One kernel cache for the session's dev-set builds (the CMake-shaped build fills it, the per-architecture
    builds read it): each dev-set kernel is generated and assembled once. A warm build is byte-identical to a
    cold one (tests/tcl/test_cache.py); the determinism tests build without it."""
    return tmp_path_factory.mktemp("kernel-cache")


@pytest.fixture(scope="session")
def devset_builds(tmp_path_factory: pytest.TempPathFactory, toolchain: Toolchain,
                  devset_kernel_cache: Path) -> DevsetBuilds:
    # The root, not asm_full: hipBLASLt's CMake passes the root, and TensileCreateLibrary finds the files.
    return DevsetBuilds(tmp_path_factory.mktemp("devset-arch"), shared_dir("logic"), devset_kernel_cache)


@pytest.fixture(scope="session")
def runtime_probe() -> Probe:
    return find_probe()
