from __future__ import annotations

import pytest

from tensile_lite.codeobj.probe import ProbeReport, probe_targets
from tensile_lite.codeobj.toolchain import Toolchain


@pytest.fixture(scope="session")
def probe_report(toolchain: Toolchain, tmp_path_factory: pytest.TempPathFactory) -> ProbeReport:
    """A fresh probe of the real toolchain (private cache, so the user's ~/.cache is never touched)."""
    return probe_targets(toolchain, cache=tmp_path_factory.mktemp("probe-cache"))


@pytest.fixture(scope="session")
def supported_targets(probe_report: ProbeReport) -> tuple[str, ...]:
    return probe_report.supported()
