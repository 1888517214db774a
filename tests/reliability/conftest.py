from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.tcl import main as tcl_main
from tests.reliability.helpers import SAMPLE


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A TMPDIR of the test's own, so leftovers can be counted exactly (also for in-process builds)."""
    tmp = tmp_path / "TMPDIR"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    return tmp


@pytest.fixture(scope="session")
def built_sample(tmp_path_factory: pytest.TempPathFactory, toolchain: Toolchain) -> Path:
    """The sample built for gfx942 once (read-only: copy before damaging)."""
    out = tmp_path_factory.mktemp("reliability") / "sample"
    assert tcl_main(["--architecture=gfx942", "--verbose=0", str(SAMPLE), str(out), "HIP"]) == 0
    return out
