"""The dev set read once per test session, and its plan (the library tests share them)."""

from __future__ import annotations

import pytest

from tensile_lite.library import LibraryPlan, build_plan
from tensile_lite.logic import read_logic_file
from tensile_lite.model import LogicFile
from tests.shared import dev_logic_files


@pytest.fixture(scope="session")
def dev_files() -> list[LogicFile]:
    return [read_logic_file(p) for p in dev_logic_files()]


@pytest.fixture(scope="session")
def dev_plan(dev_files) -> LibraryPlan:
    return build_plan(dev_files)
