from __future__ import annotations

import pytest

from tensile_lite.codeobj.toolchain import Toolchain
from tests.shared import shared_dir
from tests.tcl.runtime_probe import DevsetBuilds, Probe, find_probe


@pytest.fixture(scope="session")
def devset_builds(tmp_path_factory: pytest.TempPathFactory, toolchain: Toolchain) -> DevsetBuilds:
    # The root, not asm_full: hipBLASLt's CMake passes the root, and TensileCreateLibrary finds the files.
    return DevsetBuilds(tmp_path_factory.mktemp("devset-arch"), shared_dir("logic"))


@pytest.fixture(scope="session")
def runtime_probe() -> Probe:
    return find_probe()
