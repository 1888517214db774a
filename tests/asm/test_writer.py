"""Text emission: sinks, chunking, annotation, labels, and comment-free output."""

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensile_lite.asm import (
    ARCHS,
    AsmError,
    AsmWriter,
    KernelArgument,
    KernelSpec,
    Labels,
    Registers,
    isa_for,
    kernel_header,
    kernel_trailer,
    render,
    vgpr,
)
from tensile_lite.asm.writer import COMMENT_MARKERS, has_comment_marker
from tests.asm.llvm_roundtrip import draw_instruction


def test_sinks_receive_the_same_lines() -> None:
    isa = isa_for("gfx942")
    instructions = [isa.v_mov_b32(vgpr(i), i) for i in range(10)]
    as_list: list[str] = []
    as_file = io.StringIO()
    chunks: list[str] = []
    for sink in (as_list, as_file, chunks.append):
        with AsmWriter(sink, chunk_lines=3) as w:
            w.extend(instructions[:5])
            for ins in instructions[5:]:
                w.emit(ins)
            w.label(Labels().new("end"))
    expected = [i.text for i in instructions] + ["label_end:"]
    assert as_list == expected
    assert as_file.getvalue() == "\n".join(expected) + "\n"
    assert "".join(chunks) == as_file.getvalue()
    assert len(chunks) > 1  # streamed in chunks, not held whole
    assert render(instructions) == "\n".join(expected[:-1]) + "\n"


def test_comments_only_when_annotating() -> None:
    ins = isa_for("gfx942").s_endpgm()
    plain: list[str] = []
    with AsmWriter(plain) as w:
        w.comment("prologue")
        w.emit(ins, "the end")
    assert plain == ["s_endpgm"]
    annotated: list[str] = []
    with AsmWriter(annotated, annotate=True) as w:
        w.comment("prologue")
        w.emit(ins, "the end")
    assert annotated == ["// prologue", "s_endpgm  // the end"]


def test_raw_lines_with_comment_markers_are_refused() -> None:
    w = AsmWriter([])
    for marker in COMMENT_MARKERS:
        with pytest.raises(AsmError, match="comment marker"):
            w.directive(f".set x, 1 {marker} note")
    with pytest.raises(AsmError, match="cannot write"):
        AsmWriter(42)


def test_labels_are_deterministic_and_unique() -> None:
    def names() -> list[str]:
        labels = Labels()
        return [labels.new(n).text for n in ("Loop", "Loop", "Loop_1", "End", "Loop")]
    first = names()
    assert first == names()
    assert first == ["label_Loop", "label_Loop_1", "label_Loop_1_1", "label_End", "label_Loop_2"]
    assert len(set(first)) == len(first)


@pytest.mark.parametrize("arch", sorted(ARCHS))
@settings(max_examples=1, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                  HealthCheck.large_base_example])
@given(data=st.data())
def test_whole_kernels_contain_no_comment_markers(arch: str, data: st.DataObject) -> None:
    if True:
        isa = isa_for(arch)
        spec = KernelSpec(f"k_{arch}", arch, [KernelArgument.value("x", "u32"), KernelArgument.pointer("p")], 256,
                          extra_metadata={"custom.config": {"InternalSupportParams": {"KernArgsVersion": 2}}})
        lines: list[str] = []
        with AsmWriter(lines) as w:
            w.lines_of(kernel_header(spec))
            for name in sorted(isa.ops):
                w.emit(draw_instruction(data.draw, isa, name), comment="never printed")
            w.comment("never printed")
            w.lines_of(kernel_trailer(spec, Registers(arch, spec.name).counts()))
        text = "\n".join(lines)
        assert not has_comment_marker(text)
        for marker in COMMENT_MARKERS:
            assert marker not in text
