"""Operand values: text, relative indexing, validation."""

from __future__ import annotations

import pytest

from tensile_lite.asm import Label, OperandError, Reg, WaitCounts, agpr, sgpr, ttmp, vgpr


def test_text_and_ranges() -> None:
    assert (vgpr(5).text, vgpr(4, 4).text, sgpr(0, 2).text, agpr(0, 16).text) == ("v5", "v[4:7]", "s[0:1]", "a[0:15]")
    assert (ttmp(9).text, ttmp(4, 4).text) == ("ttmp9", "ttmp[4:7]")
    r = vgpr(4, 8)
    assert (r[0].text, r[-1].text, r[2:4].text, r[:2].text, r[6:].text, r[-2:].text) == (
        "v4", "v11", "v[6:7]", "v[4:5]", "v[10:11]", "v[10:11]")
    assert [x.text for x in r.split(4)] == ["v[4:7]", "v[8:11]"]
    assert (r.end, len(r)) == (12, 8)
    assert vgpr(3) == Reg("v", 3) and vgpr(3) is vgpr(3)  # values, interned when built by the helpers
    assert hash(vgpr(3)) == hash(Reg("v", 3))


@pytest.mark.parametrize("key", [slice(5, 20), slice(3, 3), slice(0, 4, 2), 8, -9])
def test_register_ranges_never_silently_shrink(key: object) -> None:
    with pytest.raises(OperandError):
        vgpr(4, 8)[key]  # type: ignore[index]


@pytest.mark.parametrize(("make", "message"), [
    (lambda: Reg("x", 0), "unknown register file"),
    (lambda: vgpr(511, 2), "out of range"),
    (lambda: sgpr(-1), "out of range"),
    (lambda: vgpr(0, 3).split(2), "does not split"),
    (lambda: Label("bad label"), "must match"),
    (lambda: Label("a//b"), "must match"),
    (lambda: WaitCounts(), "at least one counter"),
    (lambda: WaitCounts(vmcnt=-1), "negative"),
])
def test_invalid_operands_raise(make: object, message: str) -> None:
    with pytest.raises(OperandError, match=message):
        make()  # type: ignore[operator]


def test_wait_counts_text() -> None:
    assert WaitCounts(vmcnt=1, lgkmcnt=0).text == "vmcnt(1) lgkmcnt(0)"
    assert WaitCounts(expcnt=7).text == "expcnt(7)"
