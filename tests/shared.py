"""The one way tests reach ../shared (spec, dev-set logic, upstream reference outputs).

Tests that need it call `shared_dir("logic")` etc.; when the folder is absent the test is skipped
with a reason that says where it was looked for.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parent.parent


def shared_root() -> Path:
    return Path(os.environ.get("TENSILE_LITE_SHARED", _ROOT.parent / "shared")).resolve()


def shared_dir(*parts: str) -> Path:
    path = shared_root().joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared material not available: {path} (set TENSILE_LITE_SHARED to its folder)")
    return path


def dev_logic_files() -> list[Path]:
    return sorted(shared_dir("logic", "asm_full").rglob("*.yaml"))


def logic7_files() -> list[Path]:
    """The nine ROCm 7.x logic files of ../shared/logic7 (INDEX.md lists them)."""
    return sorted(shared_dir("logic7", "asm_full").rglob("*.yaml"))
