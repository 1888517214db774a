"""The main loop's issue-slot figure 7.x's runtime reads (asm/gemm/loop_clocks.py): upstream's counting
rule on hand-made text, and on the kernel writer's real loops."""

from __future__ import annotations

import pytest

from tensile_lite.asm.gemm import GemmKernel
from tensile_lite.asm.gemm.loop_clocks import LOOP_LABEL, MATH_CLOCKS, unrolled_loop_clocks
from tests.gemm.solutions import problem_type, solution

MFMA = "v_mfma_f32_16x16x16_f16 a[0:3], v[0:1], v[2:3], a[0:3]"


def test_the_counting_rule_on_a_fast_path() -> None:
    text = "\n".join([
        "  s_mov_b32 s1, 0",                 # before the loop: not counted
        f"{LOOP_LABEL}:",
        "  s_add_u32 s0, s0, 1",              # 1
        f"  {MFMA}",                         # 2
        f"  {MFMA}",                         # too soon: 2 + 4 = 6
        "  s_nop 0",                         # 7
        f"  {MFMA}",                         # 1 slot after: 6 + 4 = 10
        "  s_mov_b32 s2, 0", "  s_mov_b32 s3, 0", "  s_mov_b32 s4, 0",  # 13
        f"  {MFMA}",                         # 3 slots after: issues at once, 14
        "  s_branch label_Join",             # 15, followed
        "label_Slow:",
        "  v_add_u32 v0, v0, v1",            # the slow body: not on the path
        f"  {MFMA}",
        "label_Join:",
        "  s_cbranch_scc0 label_End",        # 16, not taken
        f"  s_branch {LOOP_LABEL}",          # 17: back to the start, the iteration ends
        "label_End:",
        "  s_endpgm",
    ])
    assert unrolled_loop_clocks(text) == 17


@pytest.mark.parametrize("text", [
    "  s_endpgm\n",                                          # no main loop
    f"{LOOP_LABEL}:\n  s_nop 0\n  s_endpgm\n",                 # never branches back
    f"{LOOP_LABEL}:\n  s_branch label_Nowhere\n",             # a branch to a label the text lacks
])
def test_no_loop_is_not_known(text: str) -> None:
    assert unrolled_loop_clocks(text) == 0


@pytest.mark.parametrize("wave_tile, depth_u", [((1, 1), 32), ((2, 2), 64), ((4, 2), 32)])
def test_real_loops_cost_at_least_their_matrix_instructions(wave_tile: tuple[int, int], depth_u: int) -> None:
    """A steady-state iteration issues each of its MFMAs, spaced as the rule spaces back-to-back ones at
    worst, plus at least the loop's bookkeeping: between the count of MFMAs per tile and 4x it plus the rest."""
    sol = solution(problem_type("HHS"), wave_tile=wave_tile, depth_u=depth_u)
    kernel = GemmKernel.of(sol)
    text = kernel.assembly_text()
    clocks = kernel.text_facts(text)[MATH_CLOCKS]
    mi = sol.matrix_instruction
    assert mi is not None
    per_wave = sol.mi_wave_tile[0] * sol.mi_wave_tile[1] * (sol.depth_u // mi.k)
    loop = text[text.index(f"{LOOP_LABEL}:"):]
    assert per_wave < clocks <= 4 * per_wave + loop.count("\n")
