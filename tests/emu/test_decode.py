"""Decoding: operand text, instruction lines, objdump output, the kernel descriptor, number formats."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensile_lite.emu.arch import arch_info, gfx_from_target
from tensile_lite.emu.descriptor import KernelDescriptor
from tensile_lite.emu.disasm import decode_line, parse_objdump
from tensile_lite.emu.errors import CodeObjectError
from tensile_lite.emu.numeric import BF8_FNUZ, BF8_OCP, FP8_FNUZ, FP8_OCP, f32_to_bf16_bits, round_to_xf32
from tensile_lite.emu.operands import EXEC_LO, TTMP0, VCC_LO, parse_instruction, parse_operand


def test_operands():
    op = parse_operand("v[4:7]")
    assert (op.kind, op.index, op.count) == ("vgpr", 4, 4)
    op = parse_operand("-|s5|")
    assert (op.kind, op.index, op.neg, op.abs) == ("sgpr", 5, True, True)
    assert parse_operand("a[0:15]").count == 16
    assert parse_operand("ttmp9").index == TTMP0 + 9
    assert (parse_operand("vcc").index, parse_operand("vcc").count) == (VCC_LO, 2)
    assert parse_operand("exec_lo").index == EXEC_LO
    assert parse_operand("v1.h").half == 1
    assert parse_operand("-7").ival == -7 and parse_operand("0x3f800000").ival == 0x3F800000
    assert parse_operand("-4.0").fval == -4.0 and parse_operand("0.15915494").fval == pytest.approx(1 / (2 * np.pi))
    assert parse_operand("lit(0x18)").ival == 0x18
    assert parse_operand("sext(v2)").sext
    with pytest.raises(ValueError, match="unrecognised operand"):
        parse_operand("bogus_reg")


def test_instruction_lines():
    ins = parse_instruction(0x100, 8, "v_pk_fma_f16 v6, v4, v5, v6 op_sel:[1,0,0] op_sel_hi:[0,1,1]")
    assert ins.base == "v_pk_fma_f16" and len(ins.operands) == 4
    assert ins.mod("op_sel") == (1, 0, 0) and ins.mod("op_sel_hi") == (0, 1, 1)
    ins = parse_instruction(0, 8, "buffer_load_dwordx4 v[0:3], v1, s[8:11], 0 offen offset:4 sc0 nt")
    assert ins.flag("offen") and ins.mod("offset") == 4 and ins.flag("nt") and len(ins.operands) == 4
    ins = parse_instruction(0, 4, "v_add_f32_e64 v4, -v4, |v5| clamp mul:2")
    assert (ins.base, ins.encoding, ins.mod("mul"), ins.flag("clamp")) == ("v_add_f32", "e64", 2, True)
    ins = parse_instruction(0, 4, "s_waitcnt vmcnt(0) lgkmcnt(1)")
    assert ins.operands == () and ins.raw == "vmcnt(0) lgkmcnt(1)"
    assert parse_instruction(0, 8, "buffer_inv sc1").operands == ()
    ins = parse_instruction(0, 8, "v_or_b32_sdwa v1, sext(v2), v3 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:BYTE_0")
    assert ins.encoding == "sdwa" and ins.mod("dst_sel") == "WORD_1"


_OBJDUMP = """
k.co:\tfile format elf64-amdgpu

Disassembly of section .text:

0000000000001300 <kern>:
\ts_nop 0                                                    // 000000001300: BF800000
\ts_cbranch_scc1 65534                                       // 000000001304: BF85FFFE <kern>
\tv_add_u32_e32 v1, 0x41, v2                                 // 000000001308: 680204FF 00000041
\ts_endpgm                                                   // 000000001310: BF810000

0000000000001400 <other>:
\ts_endpgm                                                   // 000000001400: BF810000
"""


def test_objdump_parsing_and_branch_targets():
    dis = parse_objdump(_OBJDUMP)
    assert dis.symbols == {"kern": 0x1300, "other": 0x1400}
    lines = dis.kernel_lines("kern")
    assert [ln.address for ln in lines] == [0x1300, 0x1304, 0x1308, 0x1310]
    branch = decode_line(lines[1])
    assert branch.branch_target == 0x1300  # simm16 -2 words from the next instruction
    assert decode_line(lines[2]).size == 8
    with pytest.raises(CodeObjectError, match="no code"):
        dis.kernel_lines("missing")


def test_kernel_descriptor_fields():
    rsrc1 = 5 | (2 << 6) | (3 << 16) | (3 << 18)
    rsrc2 = (2 << 1) | (1 << 7) | (1 << 8) | (2 << 11)
    raw = struct.pack("<IIIIq20xIIIHH4x", 4096, 0, 104, 0, 0x1000, 31, rsrc1, rsrc2, 8 | (1 << 10), 0)
    kd = KernelDescriptor.from_bytes(raw, "k")
    assert (kd.group_segment_fixed_size, kd.kernarg_size, kd.user_sgpr_count) == (4096, 104, 2)
    assert kd.workgroup_id_enabled == (True, True, False) and kd.workitem_id_dims == 2
    assert kd.user_sgpr_flags["kernarg_segment_ptr"] and kd.wave32
    assert kd.accum_offset(arch_info("gfx942")) == 128 and kd.accum_offset(arch_info("gfx1100")) is None
    assert kd.allocated_vgprs(arch_info("gfx942"), 64) == 48 and kd.allocated_vgprs(arch_info("gfx1100"), 32) == 48
    with pytest.raises(CodeObjectError, match="not 64"):
        KernelDescriptor.from_bytes(raw[:60], "k")
    assert gfx_from_target("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-") == "gfx942"


@pytest.mark.parametrize("fmt", [FP8_FNUZ, BF8_FNUZ, FP8_OCP, BF8_OCP], ids=lambda f: f.name)
def test_fp8_formats(fmt):
    codes = np.arange(256, dtype=np.uint8)
    values = fmt.decode(codes)
    finite = np.isfinite(values)
    np.testing.assert_array_equal(fmt.encode(values[finite]), codes[finite] if not fmt.fnuz else
                                  np.where(codes[finite] == 0x80, 0, codes[finite]))
    assert fmt.max_value == {"fp8 E4M3 FNUZ": 240, "bf8 E5M2 FNUZ": 57344, "fp8 E4M3FN OCP": 448,
                             "bf8 E5M2 OCP": 57344}[fmt.name]
    assert fmt.encode(np.array([1e9], np.float32), saturate=True)[0] == np.argmax(np.where(finite, values, -1))


def _nearest_even(fmt, x: float) -> int:
    """Reference RNE by exhaustive search over the finite non-negative codes."""
    best, best_err = 0, None
    for code in range(fmt.max_code + 1):
        err = abs(float(fmt.decode_table[code]) - abs(x))
        if best_err is None or err < best_err or (err == best_err and code % 2 == 0):
            best, best_err = code, err
    return best


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=-200.0, max_value=200.0, width=32))
def test_fp8_encoding_is_round_to_nearest_even(x):
    for fmt in (FP8_FNUZ, FP8_OCP, BF8_OCP):
        got = int(fmt.encode(np.array([x], np.float32))[0])
        want = _nearest_even(fmt, x)
        if want != 0 or not fmt.fnuz:
            want |= 0x80 if np.signbit(np.float32(x)) and (want or not fmt.fnuz) else 0
        assert got == want, (fmt.name, x)


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=0xFFFFFFFF))
def test_bf16_and_xf32_rounding(bits):
    x = np.array([bits], dtype=np.uint32).view(np.float32)
    if np.isnan(x[0]):
        assert np.isnan(np.array(int(f32_to_bf16_bits(x)[0]) << 16, np.uint32).view(np.float32))
        return
    # bf16: the nearest of the two bf16 neighbours, ties to the even one.
    lo = bits & 0xFFFF0000
    hi = lo + 0x10000
    rest = bits & 0xFFFF
    want = (hi if rest > 0x8000 or (rest == 0x8000 and (lo >> 16) & 1) else lo) >> 16
    assert int(f32_to_bf16_bits(x)[0]) == want & 0xFFFF
    # xf32: the same rule on the low 13 bits.
    lo = bits & 0xFFFFE000
    rest = bits & 0x1FFF
    want = lo + 0x2000 if rest > 0x1000 or (rest == 0x1000 and (lo >> 13) & 1) else lo
    assert int(round_to_xf32(x).view(np.uint32)[0]) == want & 0xFFFFFFFF
