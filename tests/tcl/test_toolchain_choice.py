"""Per-target toolchain choice: hipBLASLt's default list includes gfx940/gfx941, which LLVM 21+ removed."""

from __future__ import annotations

import shutil

import pytest

from tensile_lite.codeobj.toolchain import find_toolchain, find_toolchain_for
from tensile_lite.errors import ToolchainError


def test_current_targets_use_the_first_toolchain(toolchain):
    assert find_toolchain_for("gfx942") == find_toolchain()


def test_removed_target_falls_back_to_an_older_llvm():
    first = find_toolchain()
    if first.version[0] <= 20:
        pytest.skip("the first toolchain still supports gfx940")
    if not (shutil.which("clang-19") and shutil.which("ld.lld-19")):
        with pytest.raises(ToolchainError, match=r"gfx940.*clang-19"):
            find_toolchain_for("gfx940")
        return
    chosen = find_toolchain_for("gfx940")
    assert chosen.version[0] == 19 and chosen.found_by == "clang-19 on PATH"


def test_explicit_assembler_is_not_second_guessed(toolchain):
    if toolchain.version[0] <= 20:
        pytest.skip("needs an LLVM that lacks gfx940")
    with pytest.raises(ToolchainError, match="cannot assemble gfx940"):
        find_toolchain_for("gfx940", assembler=str(toolchain.assembler), linker=str(toolchain.linker))
