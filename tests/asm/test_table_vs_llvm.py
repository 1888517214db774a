"""The instruction table against the real LLVM assembler, both ways.

For each target: every instruction the table lists, with random valid operands and modifiers,
assembles in one batch and llvm-objdump prints it back as the same instruction; every instruction
the table says the target lacks is rejected by the assembler (spelled as on the targets that have
it), and every deprecated one is still accepted.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tensile_lite.asm import ARCHS, isa_for
from tensile_lite.codeobj.toolchain import Toolchain
from tests.asm.llvm_roundtrip import (
    disassemble,
    draw_instruction,
    llvm_mc_errors,
    normal_form,
    toolchain_knows,
)

# No shrinking: every example is one assembler run, and the failure message already lists each
# mismatching instruction.
_SETTINGS = dict(deadline=None, print_blob=True, phases=(Phase.explicit, Phase.reuse, Phase.generate),
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                        HealthCheck.function_scoped_fixture, HealthCheck.large_base_example])


def _need(toolchain: Toolchain, arch: str) -> None:
    if not toolchain_knows(toolchain, arch):
        pytest.skip(f"{toolchain.describe()} does not know {arch}")


def _round_trip(toolchain: Toolchain, arch: str, data: st.DataObject) -> None:
    isa = isa_for(arch)
    instructions = [draw_instruction(data.draw, isa, name) for name in sorted(isa.ops)]
    with tempfile.TemporaryDirectory() as tmp:
        lines = disassemble(toolchain, arch, [i.text for i in instructions], Path(tmp))
    assert len(lines) >= len(instructions) + 1, "the disassembly lost instructions"
    counters = dict(isa.arch.wait_counters)
    mismatches = []
    for ins, line in zip(instructions, lines, strict=False):
        want = normal_form(ins.text, ins.op.slots, counters)
        got = normal_form(line, ins.op.slots, counters)
        if want != got:
            mismatches.append(f"{ins.name}: emitted {ins.text!r}, disassembled {line!r}")
    assert not mismatches, f"{len(mismatches)} mismatch(es) on {arch}:\n" + "\n".join(mismatches[:40])
    assert lines[len(instructions)] == "s_endpgm"


@pytest.mark.parametrize("arch", sorted(ARCHS))
@settings(max_examples=2, **_SETTINGS)
@given(data=st.data())
def test_every_listed_instruction_round_trips(arch: str, toolchain: Toolchain, data: st.DataObject) -> None:
    _need(toolchain, arch)
    _round_trip(toolchain, arch, data)


@pytest.mark.slow
@pytest.mark.parametrize("arch", sorted(ARCHS))
@settings(max_examples=25, **_SETTINGS)
@given(data=st.data())
def test_every_listed_instruction_round_trips_long(arch: str, toolchain: Toolchain, data: st.DataObject) -> None:
    _need(toolchain, arch)
    _round_trip(toolchain, arch, data)


@pytest.mark.parametrize("arch", sorted(ARCHS))
@settings(max_examples=1, **_SETTINGS)
@given(data=st.data())
def test_instructions_the_table_lacks_are_rejected(arch: str, toolchain: Toolchain, data: st.DataObject) -> None:
    _need(toolchain, arch)
    isa = isa_for(arch)
    lines: list[str] = []
    expect_error: list[bool] = []
    for name in sorted(isa.missing):
        spellings: dict[str, str] = {}
        for other in sorted(ARCHS):
            op = isa_for(other).ops.get(name)
            if op is not None and op.spelling not in spellings:
                spellings[op.spelling] = draw_instruction(data.draw, isa_for(other), name).text
        assert spellings, f"{name} is available nowhere"
        deprecated = getattr(isa, name).deprecated
        for text in spellings.values():
            lines.append(text)
            expect_error.append(not deprecated)
    errors = llvm_mc_errors(toolchain, arch, lines)
    accepted = [lines[i] for i, e in enumerate(expect_error) if e and i + 1 not in errors]
    rejected = [f"{lines[i]}: {errors[i + 1]}" for i, e in enumerate(expect_error) if not e and i + 1 in errors]
    assert not accepted, f"the table says {arch} lacks these, but LLVM accepts them:\n" + "\n".join(accepted)
    assert not rejected, f"deprecated on {arch} but rejected by LLVM:\n" + "\n".join(rejected)
