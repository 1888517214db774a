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


def custom_kernels_root() -> Path | None:
    """../shared/custom_kernels (hipBLASLt's layout: tensilelite/Tensile/CustomKernels below it), the custom
    kernels the dev set names; None when absent (tests needing them then skip through `shared_dir`)."""
    path = shared_root() / "custom_kernels"
    return path if path.is_dir() else None


def use_shared_custom_kernels() -> None:
    """Point builds at ../shared/custom_kernels through the environment (custom/locate.py), as a developer
    would, unless a folder is chosen already; the dev-set logic sits outside a hipBLASLt tree, so nothing
    would be found walking up from it."""
    from tensile_lite.custom import ENV

    root = custom_kernels_root()
    if root is not None:
        os.environ.setdefault(ENV, str(root))


def dev_logic_files() -> list[Path]:
    return sorted(shared_dir("logic", "asm_full").rglob("*.yaml"))


def logic7_files() -> list[Path]:
    """The nine ROCm 7.x logic files of ../shared/logic7 (INDEX.md lists them)."""
    return sorted(shared_dir("logic7", "asm_full").rglob("*.yaml"))
