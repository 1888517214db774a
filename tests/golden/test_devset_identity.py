"""The dev set's outputs are byte-identical to the record (tests/golden/digests.py says what is
digested and how to record an intended change)."""

from __future__ import annotations

import json
from functools import cache

import pytest

from tests.golden import digests
from tests.shared import dev_logic_files

RECORDED = json.loads(digests.RECORD.read_text())


@cache
def _plan():
    return digests.plan_for(dev_logic_files())[1]


def test_the_same_architectures_are_built() -> None:
    assert [ap.arch for ap in _plan().archs] == sorted(RECORDED)


@pytest.mark.parametrize("arch", sorted(RECORDED))
def test_outputs_are_byte_identical(arch: str) -> None:
    ap = _plan().arch(arch)
    current = {arch: digests.arch_digests(ap)}
    diff = digests.differences({arch: RECORDED[arch]}, current)
    assert not diff, ("outputs changed (if intended: python3 -m tests.golden.digests --update):\n"
                      + "\n".join(diff))


def test_a_changed_kernel_is_named() -> None:
    """The comparison can fail, and says which kernel changed."""
    arch = "gfx1101"
    current = {arch: digests.arch_digests(_plan().arch(arch))}
    name = next(iter(current[arch]["kernels"]))
    broken = {arch: {**current[arch], "kernels": {**current[arch]["kernels"], name: "0" * 64}}}
    assert digests.differences(current, broken) == [f"{arch} kernels: {name} changed"]
