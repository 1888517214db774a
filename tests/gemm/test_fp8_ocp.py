"""ROCm 7.x's OCP 8-bit float codes (F8O = 15, B8O = 16 and the mixes F8B8O = 17, B8F8O = 18) as GEMM
inputs and outputs: on gfx950 (MFMA) and gfx12 (WMMA), whose fp8/bf8 instructions read OCP, they run on
the emulator against numpy; on the FNUZ gfx94x they are refused (no instruction there reads OCP).

The inputs are quantised with the verifier's OCP codec, padding holds OCP NaN codes; the edge codes
themselves (NaN, E5M2 infinity, 448 / 57344, subnormals, -0) go through every OCP MFMA/WMMA form in
tests/emu/test_matrix.py::test_ocp_every_code_as_input.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tensile_lite.asm.gemm import generate, unsupported_reasons
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.host import GemmProblem
from tensile_lite.logic.reader import read_logic_file
from tensile_lite.model import DataType, Solution
from tests.gemm import harness
from tests.gemm.test_fp8 import check, make
from tests.gemm.test_fp8 import problem_type as f8_problem_type
from tests.gemm.test_wmma import wmma
from tests.shared import shared_dir

LOGIC7_GFX1201 = "gfx1201_Cijk_Alik_Bljk_F8F8S_BH_BiasS_HAS_SAV_UserArgs.yaml"

GFX950 = [
    # (types, dest, transposes, big MFMA)
    ("F8O", "S", "TN", False),
    ("B8O", "H", "NT", True),
    ("F8B8O", "B", "NN", False),
    ("B8F8O", "F8O", "TT", True),
    ("F8O", "B8O", "NT", False),
]


@pytest.mark.parametrize("types, dest, trans, big", GFX950)
def test_ocp_codes_on_gfx950(types: str, dest: str, trans: str, big: bool, toolchain: Toolchain,
                             kernel_dir: Path) -> None:
    check(toolchain, kernel_dir, make(types, dest, trans, "gfx950", big=big))


@pytest.mark.parametrize("arch", ["gfx940", "gfx942"])
@pytest.mark.parametrize("types, dest", [("F8O", "S"), ("F8B8O", "S"), ("F8", "B8O")])
def test_ocp_codes_are_refused_on_fnuz_targets(arch: str, types: str, dest: str) -> None:
    """gfx94x's fp8 instructions read FNUZ: an OCP code (in A/B or D) has nothing to run on there."""
    reasons = unsupported_reasons(make(types, dest, "TN", arch))
    fixed = next(t for t in (types, dest) if t.endswith("O"))
    assert f"dtype:{fixed} (ocp) on {arch}" in reasons, reasons
    assert unsupported_reasons(make(types.replace("O", ""), dest.replace("O", ""), "TN", arch)) == ()


@pytest.mark.parametrize("arch", ["gfx950", "gfx1201"])
def test_ocp_kernel_is_the_target_encoded_one(arch: str) -> None:
    """On an OCP target code 15 is what code 11 means there: the same instructions (the OCP forms)."""
    def text(types: str, dest: str) -> str:
        if arch == "gfx950":
            sol = make(types, dest, "TN", arch)
        else:
            sol = wmma(f8_problem_type(types, dest, "TN"), arch, depth_u=64)
        return generate(sol)
    ocp, target = text("B8F8O", "F8O"), text("B8F8", "F8")
    # the names spell the types (B8F8OF8OS / B8F8F8S) and hash the rest; everything else is alike
    assert "_B8F8OF8OS_BH" in ocp and "_B8F8F8S_BH" in target
    body = [line for line in ocp.splitlines() if "Cijk_" not in line]
    assert body == [line for line in target.splitlines() if "Cijk_" not in line]
    assert ("v_mfma_f32_16x16x32_bf8_fp8" if arch == "gfx950" else "v_wmma_f32_16x16x16_bf8_fp8") in ocp


def _logic7_gfx1201() -> Solution:
    path = shared_dir("logic7", "asm_full", "gfx1201", "Equality", LOGIC7_GFX1201)
    (sol,) = read_logic_file(path).solutions
    return sol


def test_logic7_gfx1201_f8f8s_is_blocked_only_by_direct_to_vgpr() -> None:
    """The real 7.x gfx1201 F8F8S file (DataType 15 to 15, bias, SAV) is OCP fp8 throughout; the one
    thing left in its way is DirectToVgprB."""
    sol = _logic7_gfx1201()
    pt = sol.problem_type
    assert (pt.data_type, pt.dest_type) == (DataType.F8O, DataType.F8O)
    assert unsupported_reasons(sol) == ("DirectToVgpr",)


def test_logic7_gfx1201_f8f8s_through_lds(build) -> None:
    """The same solution with B read through LDS (DirectToVgprB 0: the same products, another path)
    builds and matches numpy on the emulator, bias and ScaleAlphaVec included."""
    sol = _logic7_gfx1201()
    sol = Solution.from_params(sol.problem_type, sol.params.replace(DirectToVgprB=0), sol.arch, sol.index)
    assert unsupported_reasons(sol) == ()
    built, emu = build(sol)
    pt = sol.problem_type
    mt0, mt1 = sol.macro_tile
    for problem in (harness.padded(pt, mt0 + 3, mt1 - 5, sol.depth_u + 9, 2), GemmProblem(mt0, 2 * mt1, 128, 1)):
        harness.run(built, problem, alpha=0.5, beta=0.0, emulator=emu, seed=7).check()
