from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tensile_lite.codeobj.bundler import OffloadBundler, find_offload_bundler
from tensile_lite.codeobj.probe import ProbeReport, probe_targets
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.errors import ToolchainError


@pytest.fixture(scope="session")
def probe_report(toolchain: Toolchain, tmp_path_factory: pytest.TempPathFactory) -> ProbeReport:
    """A fresh probe of the real toolchain (private cache, so the user's ~/.cache is never touched)."""
    return probe_targets(toolchain, cache=tmp_path_factory.mktemp("probe-cache"))


@pytest.fixture(scope="session")
def supported_targets(probe_report: ProbeReport) -> tuple[str, ...]:
    return probe_report.supported()


@pytest.fixture(scope="session")
def bundler(toolchain: Toolchain) -> OffloadBundler:
    """The real clang-offload-bundler, found as a build finds it; skipped with the reason when absent."""
    try:
        return find_offload_bundler(None, toolchain)
    except ToolchainError as exc:
        pytest.skip(str(exc))


def _versioned_bundlers() -> list[OffloadBundler]:
    found = []
    for ver in ("22", "19"):
        hit = shutil.which(f"clang-offload-bundler-{ver}")
        if hit:
            found.append(OffloadBundler(Path(hit), f"clang-offload-bundler-{ver} on PATH"))
    return found


@pytest.fixture(scope="session", params=["22", "19"])
def each_bundler(request: pytest.FixtureRequest) -> OffloadBundler:
    """Every Debian bundler installed (LLVM 22 writes CCOB v3, LLVM 19 v2), one at a time."""
    for b in _versioned_bundlers():
        if b.path.name.endswith(f"-{request.param}"):
            return b
    pytest.skip(f"clang-offload-bundler-{request.param} is not installed (apt-get install -y clang-{request.param})")
