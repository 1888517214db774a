"""Wait instructions per target, and wait counts computed from outstanding memory operations."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensile_lite.asm import (
    LDS,
    LOAD,
    MEM_EVENTS,
    SMEM,
    STORE,
    AsmError,
    get_arch,
    isa_for,
    wait_counts,
    wait_for,
    waitcnt,
)


@pytest.mark.parametrize(("arch", "counts", "texts"), [
    ("gfx942", {"vmcnt": 0, "lgkmcnt": 1}, ["s_waitcnt vmcnt(0) lgkmcnt(1)"]),
    ("gfx90a", {"lgkmcnt": 15}, ["s_waitcnt lgkmcnt(15)"]),
    ("gfx1100", {"vmcnt": 2, "vscnt": 0}, ["s_waitcnt vmcnt(2)", "s_waitcnt_vscnt null, 0"]),
    ("gfx1100", {"lgkmcnt": 63}, ["s_waitcnt lgkmcnt(63)"]),
    ("gfx1201", {"loadcnt": 0, "dscnt": 3, "kmcnt": 0},
     ["s_wait_loadcnt 0", "s_wait_dscnt 3", "s_wait_kmcnt 0"]),
    ("gfx1201", {"storecnt": 1, "loadcnt": None}, ["s_wait_storecnt 1"]),
])
def test_waitcnt_instructions(arch: str, counts: dict, texts: list[str]) -> None:
    assert [i.text for i in waitcnt(isa_for(arch), **counts)] == texts


@pytest.mark.parametrize(("arch", "counts", "message"), [
    ("gfx942", {"vscnt": 0}, "has no wait counter 'vscnt'"),
    ("gfx942", {"lgkmcnt": 16}, "outside 0..15"),
    ("gfx1201", {"vmcnt": 0}, "has no wait counter 'vmcnt'"),
    ("gfx1201", {"kmcnt": 32}, "outside 0..31"),
])
def test_waitcnt_rejects_what_the_target_cannot_count(arch: str, counts: dict, message: str) -> None:
    with pytest.raises(AsmError, match=message):
        waitcnt(isa_for(arch), **counts)


def test_counts_follow_issue_order() -> None:
    gfx9 = get_arch("gfx942")
    pending = [LOAD, LOAD, LDS, LOAD, STORE, LDS]
    assert wait_counts(gfx9, pending, 1) == {"vmcnt": 3}        # two loads and a store are younger
    assert wait_counts(gfx9, pending, 3) == {"vmcnt": 2, "lgkmcnt": 1}
    assert wait_counts(gfx9, pending, 0) == {}
    gfx11 = get_arch("gfx1100")
    assert wait_counts(gfx11, pending, 5) == {"vmcnt": 0, "vscnt": 0, "lgkmcnt": 1}
    assert wait_counts(gfx11, pending, 1) == {"vmcnt": 2}      # the store is counted apart
    gfx12 = get_arch("gfx1201")
    assert wait_counts(gfx12, [SMEM, LDS, LDS], 2) == {"kmcnt": 0, "dscnt": 1}


def test_scalar_loads_force_zero() -> None:
    gfx9 = get_arch("gfx90a")
    # an LDS read followed by a scalar load: the scalar load may return first
    assert wait_counts(gfx9, [LDS, SMEM], 1) == {"lgkmcnt": 0}
    assert wait_counts(gfx9, [SMEM, SMEM, SMEM], 1) == {"lgkmcnt": 0}
    assert wait_counts(gfx9, [LDS, LDS, LOAD], 1) == {"lgkmcnt": 1}
    assert [i.text for i in wait_for(isa_for("gfx90a"), [SMEM, LOAD, LDS], 2)] == ["s_waitcnt vmcnt(0) lgkmcnt(0)"]
    with pytest.raises(AsmError, match="cannot retire"):
        wait_counts(gfx9, [LDS], 2)


@settings(max_examples=300, deadline=None)
@given(arch=st.sampled_from(("gfx90a", "gfx1100", "gfx1201")),
       pending=st.lists(st.sampled_from(MEM_EVENTS), min_size=1, max_size=24),
       retire_frac=st.floats(0, 1), seed=st.integers(0, 2**32 - 1))
def test_waiting_guarantees_completion(arch: str, pending: list[str], retire_frac: float, seed: int) -> None:
    """Under any completion order the hardware may produce (in order per counter, scalar loads in
    any order), once every waited counter is at or below its value the oldest `retire` are done."""
    a = get_arch(arch)
    retire = round(retire_frac * len(pending))
    want = wait_counts(a, pending, retire)
    rng = random.Random(seed)
    queues: dict[str, list[int]] = {}
    for i, event in enumerate(pending):
        queues.setdefault(a.wait_events[event], []).append(i)
    outstanding = set(range(len(pending)))

    def satisfied() -> bool:
        per_counter: dict[str, int] = {}
        for i in outstanding:
            c = a.wait_events[pending[i]]
            per_counter[c] = per_counter.get(c, 0) + 1
        return all(per_counter.get(c, 0) <= v for c, v in want.items())

    while True:
        if satisfied():
            assert all(i not in outstanding for i in range(retire)), (pending, retire, want)
            break
        choices = []
        for idxs in queues.values():
            live = [i for i in idxs if i in outstanding]
            if live:
                in_order = [i for i in live if pending[i] != SMEM]
                choices += [i for i in live if pending[i] == SMEM] + in_order[:1]
        outstanding.discard(rng.choice(choices))
