"""Register allocation: alignment, reuse, names, temporaries, high-water marks, overflow."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensile_lite.asm import AsmError, RegisterOverflow, Registers
from tensile_lite.errors import TensileLiteError


def test_alignment_follows_the_target() -> None:
    regs = Registers("gfx90a", "k")
    assert regs.s.alloc(1).text == "s0"
    assert regs.s.alloc(2).text == "s[2:3]"        # pairs start even
    assert regs.s.alloc(4).text == "s[4:7]"        # quads at a multiple of 4
    assert regs.s.alloc(1).text == "s1"            # first fit goes back to the hole
    assert regs.v.alloc(1).text == "v0"
    assert regs.v.alloc(2).text == "v[2:3]"        # gfx90a tuples start even
    assert regs.v.alloc(4, align=4).text == "v[4:7]"
    gfx11 = Registers("gfx1100", "k")
    gfx11.v.alloc(1)
    assert gfx11.v.alloc(2).text == "v[1:2]"       # no VGPR tuple alignment on RDNA
    assert gfx11.a is None


def test_free_reuse_names_and_high_water() -> None:
    regs = Registers("gfx942", "k")
    a = regs.v.alloc(8, name="ValuA")
    b = regs.v.alloc(4, name="ValuB")
    assert regs.v.named("ValuA") == a
    regs.v.free("ValuA")
    assert regs.v.alloc(2).text == "v[0:1]"
    assert regs.v.high_water == b.end == 12
    with pytest.raises(AsmError, match="ValuA"):
        regs.v.named("ValuA")
    with pytest.raises(AsmError, match="already allocated"):
        regs.v.alloc(1, name="ValuB")
    with regs.s.temp(2) as t:
        assert t.text == "s[0:1]"
        assert regs.s.in_use == 2
    assert regs.s.in_use == 0
    assert regs.s.high_water == 2
    with pytest.raises(AsmError, match="not allocated"):
        regs.v.free(a)


def test_reserve_conflicts_raise() -> None:
    regs = Registers("gfx942", "k")
    regs.s.reserve(0, 2)
    with pytest.raises(AsmError, match="already in use"):
        regs.s.reserve(1, 1)
    with pytest.raises(RegisterOverflow, match="outside"):
        regs.s.reserve(101, 2)


def test_overflow_names_kernel_and_class() -> None:
    regs = Registers("gfx942", "Cijk_big")
    regs.v.alloc(250)
    with pytest.raises(RegisterOverflow, match=r"kernel Cijk_big: needs 8 more VGPRs for ValuC but gfx942 has 256"):
        regs.v.alloc(8, name="ValuC")
    assert issubclass(RegisterOverflow, TensileLiteError)
    sregs = Registers("gfx942", "k")
    sregs.s.alloc(100)
    with pytest.raises(RegisterOverflow, match="SGPRs"):
        sregs.s.alloc(4)
    assert Registers("gfx1201", "k").s.alloc(106).text == "s[0:105]"


def test_counts_cover_every_class() -> None:
    regs = Registers("gfx90a", "k")
    regs.v.alloc(256)
    assert regs.a is not None
    regs.a.alloc(256)
    regs.s.alloc(3)
    counts = regs.counts()
    assert (counts.vgprs, counts.agprs, counts.sgprs) == (256, 256, 3)
    separate = Registers("gfx908", "k")
    separate.v.alloc(10)
    assert separate.counts().agprs == 0


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(st.tuples(st.booleans(), st.integers(1, 16), st.sampled_from((1, 2, 4, 8))), max_size=60),
       arch=st.sampled_from(("gfx90a", "gfx1100")))
def test_allocations_never_overlap(ops: list[tuple[bool, int, int]], arch: str) -> None:
    regs = Registers(arch, "k")
    live = []
    top = 0
    for is_free, count, align in ops:
        if is_free and live:
            regs.v.free(live.pop(count % len(live)))
            continue
        try:
            r = regs.v.alloc(count, align=align)
        except RegisterOverflow:
            continue
        need = max(align, 2 if count > 1 and arch == "gfx90a" else 1)
        assert r.index % need == 0
        assert all(r.end <= o.index or o.end <= r.index for o in live)
        live.append(r)
        top = max(top, r.end)
    assert regs.v.high_water == top
    assert regs.v.in_use == sum(r.count for r in live)
