"""LDS row padding (asm/gemm/lds_pad.py, plan.py): the bank model, conflict-free reads on the layouts the
writer builds (K-contiguous rows and k_rows), the unpadded fallback when padding would not fit the
target's LDS, and less padding where it would cost workgroups per CU for little."""

from __future__ import annotations

import pytest

from tensile_lite.asm.gemm import build_plan
from tensile_lite.asm.gemm import plan as plan_module
from tensile_lite.asm.gemm.lds_pad import access_clocks
from tensile_lite.asm.gemm.plan import OperandPlan
from tensile_lite.host import GemmProblem
from tests.gemm import harness
from tests.gemm.solutions import problem_type, solution


def test_bank_model() -> None:
    # consecutive dwords: 32 lanes per clock; one shared dword: broadcast; a 128-byte stride: one bank
    assert access_clocks([4 * lane for lane in range(64)], 4) == 2
    assert access_clocks([64] * 64, 4) == 2
    assert access_clocks([128 * lane for lane in range(64)], 4) == 64
    assert access_clocks([16 * lane for lane in range(64)], 16) == 8


@pytest.mark.parametrize("trans", [(True, False), (False, False), (False, True), (True, True)])
@pytest.mark.parametrize("types,mi", [("HHS", (16, 16, 16)), ("BBS", (32, 32, 8)), ("SS", (16, 16, 4))])
def test_reads_are_spread_over_banks(types: str, mi: tuple[int, int, int], trans: tuple[bool, bool],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # the padding as chosen for the banks alone (none of it given up for occupancy or a second LDS copy)
    monkeypatch.setattr(plan_module, "CONFLICT_TOLERANCE", 0.0)
    plan = build_plan(solution(problem_type(types, *trans), mi=mi, wave_tile=(2, 2), depth_u=64))
    for op in (plan.a, plan.b):
        assert op.k_rows == (not op.k_contiguous)
        if op.k_rows:
            # rows one k apart: each read is one element of every lane, at (k, free index)
            lanes = [((lane // op.mi_size) * op.k_per_lane, lane % op.mi_size) for lane in range(64)]
            width = op.lds_bpe
            assert (op.lds_stride * op.lds_bpe) % 4 == 0
        else:
            run = op.k_per_lane * op.lds_bpe
            assert (op.lds_stride * op.lds_bpe) % run == 0  # every read stays aligned to its width
            assert op.lds_stride > op.depth_u  # padded: a 128-byte row would put every lane in one bank
            lanes = [(lane % op.mi_size, (lane // op.mi_size) * op.k_per_lane) for lane in range(64)]
            width = min(run, 16)

        def clocks(stride: int, op: OperandPlan = op, lanes: list[tuple[int, int]] = lanes, width: int = width) -> int:
            return access_clocks([(row * stride + k) * op.lds_bpe for row, k in lanes], width)

        # conflict-free reads (the writes of K-contiguous tiles split where padding leaves rows 8-byte
        # aligned; k_rows writes are whole vectors along a row); padded only where unpadded rows conflict
        # (K-contiguous rows always do; k_rows of 32 lanes' 16-bit elements do not)
        ideal = max(2, 64 * width // 128)
        assert clocks(op.lds_stride) == ideal, (op.name, clocks(op.lds_stride), ideal)
        assert op.write_bytes * (op.vector * op.lds_bpe // op.write_bytes) == op.vector * op.lds_bpe
        unpadded = clocks(op.lds_row_base)
        assert clocks(op.lds_stride) * 2 <= unpadded if op.k_contiguous else op.lds_stride == op.lds_row_base or unpadded > ideal


def test_padding_dropped_when_it_would_not_fit() -> None:
    # two 256x32 f32 tiles fill 64 KiB exactly: any padding would overflow what ds offsets address
    plan = build_plan(solution(problem_type("SS"), mi=(16, 16, 4), wave_tile=(8, 8), wave_group=(2, 2),
                               depth_u=32))
    assert (plan.a.lds_stride, plan.b.lds_stride) == (plan.a.lds_row_base, plan.b.lds_row_base)
    assert plan.lds_bytes <= 65536


def _occupancy(lds_bytes: int) -> int:
    """Workgroups that share one gfx942 CU's 64 KiB of LDS."""
    return 65536 // lds_bytes


def test_padding_gives_way_to_occupancy(monkeypatch: pytest.MonkeyPatch, build) -> None:
    # MT32x16x64 f32, NN, two waves: fully padded the two LDS copies take just over 32 KiB, one workgroup
    # per CU (half a wave per SIMD); with less padding two fit, for reads at most twice as conflicted
    sol = solution(problem_type("SS", False, False), mi=(16, 16, 4), wave_group=(2, 1), depth_u=64)
    plan = build_plan(sol)
    assert plan.lds_buffers == 2
    assert _occupancy(plan.lds_bytes) == 2, plan.lds_bytes
    assert (plan.a.lds_stride, plan.b.lds_stride) != (plan.a.lds_row_base, plan.b.lds_row_base)
    monkeypatch.setattr(plan_module, "OCCUPANCY_WAVES", 0)
    assert _occupancy(build_plan(sol).lds_bytes) == 1
    monkeypatch.undo()
    built, emu = build(sol)
    harness.check_cases(built, emu, [(GemmProblem(45, 27, 200, 1), 1.0, 0.5)])


def test_padding_kept_where_its_conflicts_cost_more(monkeypatch: pytest.MonkeyPatch) -> None:
    # MT16x112x128 f16, one wave, one LDS copy: unpadded, its 256-byte B rows would put a read's lanes in
    # a few banks (far more than twice the clocks); one workgroup per CU with the padding is the better trade
    sol = solution(problem_type("HHS", False, False), mi=(16, 16, 16), wave_tile=(1, 7), wave_group=(1, 1),
                   depth_u=128, **{"1LDSBuffer": 1})
    plan = build_plan(sol)
    assert _occupancy(plan.lds_bytes) == 1 and plan.b.lds_stride > plan.b.lds_row_base
    monkeypatch.setattr(plan_module, "CONFLICT_TOLERANCE", 100.0)
    assert _occupancy(build_plan(sol).lds_bytes) == 2
