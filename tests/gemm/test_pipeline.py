"""The software-pipelined main loop (mainloop.py): computed waits, double-buffered LDS with one barrier,
1LDSBuffer honoured, and the strict emulator catching a loop that drops one of its waits or barriers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tensile_lite.asm.arch import LDS, LOAD, SMEM, get_arch
from tensile_lite.asm.gemm import generate
from tensile_lite.asm.gemm.mainloop import placement
from tensile_lite.asm.gemm.plan import build_plan
from tensile_lite.asm.waitcnt import Outstanding
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.emu.errors import HazardError
from tensile_lite.host import GemmProblem
from tests.gemm import harness
from tests.gemm.solutions import problem_type, solution


def _loop(text: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index("label_LoopBegin:")
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("s_branch label_LoopBegin"))
    return lines[start:end + 1]


def _fast(loop: list[str]) -> list[str]:
    return loop[:loop.index("label_LoopSlow:")]


# ---- the tracker -------------------------------------------------------------------------------------


def test_outstanding_counts_younger_operations_per_counter() -> None:
    out = Outstanding(get_arch("gfx942"))
    for n in range(3):
        out.issue(LOAD, ("tile", n))
    out.issue(LDS, "read0")
    out.issue(LDS, "read1")
    out.issue(LOAD, ("tile", 0))
    # the oldest load has three younger loads; LDS is not waited for
    assert out.counts_for(("tile", 1)) == {"vmcnt": 2}
    assert out.counts_for("read0") == {"lgkmcnt": 1}
    assert out.counts_for("read0") == {}  # already retired
    assert out.counts_all(LDS) == {"lgkmcnt": 0}
    assert out.counts_all(LDS) == {}


def test_outstanding_is_conservative() -> None:
    arch = get_arch("gfx942")
    out = Outstanding(arch)
    for n in range(20):
        out.issue(LDS, n)
    assert out.counts_for(0) == {"lgkmcnt": arch.wait_counters["lgkmcnt"]}  # clamped: waits for more
    out.issue(SMEM, "scalar")
    out.issue(LDS, "late")
    assert out.counts_for(19) == {"lgkmcnt": 0}  # SMEM returns out of order
    out.forget(LOAD)
    assert out.counts_all(LOAD) == {"vmcnt": 0}  # unknown: wait to 0
    gfx12 = Outstanding(get_arch("gfx1201"))
    gfx12.issue(LOAD, "a")
    gfx12.issue(LDS, "b")
    assert gfx12.counts_for("a") == {"loadcnt": 0}


def test_placement_spreads_groups() -> None:
    assert placement(4, 0, 16, 0.0) == {0: [0], 4: [1], 8: [2], 12: [3]}
    assert placement(3, 12, 16, 0.0) == {12: [0], 13: [1], 14: [2]}
    assert placement(5, 0, 4, 2.0) == {0: [0, 1], 1: [2, 3], 2: [4]}


# ---- the generated loop ------------------------------------------------------------------------------


def _sol(**tuning: object):  # type: ignore[no-untyped-def]
    return solution(problem_type("HHS", True, False), mi=(16, 16, 16), wave_tile=(2, 2), depth_u=64, **tuning)


def test_fast_loop_interleaves_and_waits_partially() -> None:
    sol = _sol()
    plan = build_plan(sol)
    assert plan.lds_buffers == 2 and plan.lds_bytes >= 2 * plan.lds_buffer_bytes
    loop = _loop(generate(sol))
    fast = _fast(loop)
    assert sum("s_barrier" in line for line in loop) == 1
    assert not any(line.startswith("label_") and "Guarded" in line for line in fast)
    waits = [line for line in fast if line.startswith("s_waitcnt")]
    assert waits and all("(0)" not in line for line in waits)
    # an MFMA between every group of LDS writes and global loads
    runs, run = [], 0
    for line in fast:
        if line.startswith("v_mfma"):
            runs.append(run)
            run = 0
        else:
            run += 1
    assert max(runs[1:]) <= 12


def test_one_lds_buffer_is_honoured() -> None:
    plan = build_plan(_sol(**{"1LDSBuffer": 1}))
    assert plan.lds_buffers == 1 and plan.lds_bytes < 2 * plan.lds_buffer_bytes
    loop = _loop(generate(_sol(**{"1LDSBuffer": 1})))
    assert sum("s_barrier" in line for line in _fast(loop)) == 1  # before the writes
    assert sum("s_barrier" in line for line in loop) == 3        # fast, slow, end of iteration


# ---- on the emulator ---------------------------------------------------------------------------------

CASES = ((GemmProblem(64, 64, 64 * 5, 1), 1.0, 0.0),   # five full iterations
         (GemmProblem(61, 70, 64 * 3 + 9, 2), 0.5, 0.0),  # edges, K remainder, batch
         (GemmProblem(64, 64, 64 * 2 + 1, 1), 1.0, 0.0))  # remainder right after the prologue


@pytest.mark.parametrize("tuning", [{}, {"1LDSBuffer": 1}, {"LocalWritePerMfma": 2}], ids=["double", "single", "lwpm2"])
def test_pipelined_loop_matches_numpy(tuning: dict[str, object], toolchain: Toolchain, kernel_dir: Path) -> None:
    built = harness.build(toolchain, _sol(**tuning), kernel_dir)
    emu = harness.emulator_for(built)
    for problem, alpha, beta in CASES:
        harness.run(built, problem, alpha=alpha, beta=beta, emulator=emu).check()


def _drop_first(text: str, prefix: str) -> str:
    """The kernel with the first line of its fast loop body that starts with `prefix` removed."""
    lines = text.splitlines()
    start = lines.index("label_LoopBegin:")
    at = next(i for i in range(start, len(lines)) if lines[i].startswith(prefix))
    return "\n".join(lines[:at] + lines[at + 1:]) + "\n"


@pytest.mark.parametrize(("prefix", "expected"), [("s_waitcnt vmcnt", "was waited for"),
                                                  ("s_waitcnt lgkmcnt", "was waited for"),
                                                  ("s_barrier", "LDS race")])
def test_emulator_catches_a_dropped_wait(prefix: str, expected: str, toolchain: Toolchain, kernel_dir: Path,
                                         monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    sol = _sol()
    broken = _drop_first(generate(sol, harness.kernel_name(sol)), prefix)
    monkeypatch.setattr(harness, "generate", lambda s, name: broken)
    built = harness.build(toolchain, sol, tmp_path)
    emu = harness.emulator_for(built)
    # the strict emulator refuses the register read or the LDS race before any result is compared
    with pytest.raises(HazardError, match=expected):
        harness.run(built, GemmProblem(64, 64, 64 * 4, 1), emulator=emu)
