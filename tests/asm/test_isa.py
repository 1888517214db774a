"""Instruction builders: spellings per target, operand checking, and clear errors."""

from __future__ import annotations

import pickle

import attrs
import pytest

from tensile_lite.asm import (
    DPP,
    NULL_REG,
    OFF_ADDR,
    VCC,
    VCC_LO,
    Buf,
    CachePolicy,
    Glb,
    Label,
    Mfma,
    OperandError,
    Sel,
    UnsupportedInstruction,
    WaitCounts,
    agpr,
    get_arch,
    isa_for,
    sgpr,
    vgpr,
)
from tensile_lite.errors import TensileLiteError


@pytest.mark.parametrize(("arch", "name", "operands", "text"), [
    ("gfx942", "v_add_u32", (vgpr(1), vgpr(2), 3), "v_add_u32 v1, v2, 3"),
    ("gfx1100", "v_add_u32", (vgpr(1), vgpr(2), 3), "v_add_nc_u32 v1, v2, 3"),
    ("gfx1201", "s_add_u32", (sgpr(1), sgpr(2), 3), "s_add_co_u32 s1, s2, 3"),
    ("gfx90a", "v_addc_co_u32", (vgpr(1), VCC, vgpr(2), 0, VCC), "v_addc_co_u32 v1, vcc, v2, 0, vcc"),
    ("gfx1151", "v_addc_co_u32", (vgpr(1), VCC_LO, vgpr(2), 0, VCC_LO), "v_add_co_ci_u32 v1, vcc_lo, v2, 0, vcc_lo"),
    ("gfx942", "buffer_load_dword", (vgpr(0), OFF_ADDR, sgpr(4, 4), 0), "buffer_load_dword v0, off, s[4:7], 0"),
    ("gfx1100", "buffer_load_dword", (vgpr(0), OFF_ADDR, sgpr(4, 4), 0), "buffer_load_b32 v0, off, s[4:7], 0"),
    ("gfx1201", "buffer_load_dword", (vgpr(0), OFF_ADDR, sgpr(4, 4), NULL_REG),
     "buffer_load_b32 v0, off, s[4:7], null"),
    ("gfx90a", "ds_read_b128", (vgpr(0, 4), vgpr(8)), "ds_read_b128 v[0:3], v8"),
    ("gfx1201", "ds_read_b128", (vgpr(0, 4), vgpr(8)), "ds_load_b128 v[0:3], v8"),
    ("gfx90a", "v_mfma_f32_32x32x8_f16", (agpr(0, 16), vgpr(0, 2), vgpr(2, 2), agpr(0, 16)),
     "v_mfma_f32_32x32x8f16 a[0:15], v[0:1], v[2:3], a[0:15]"),
    ("gfx942", "v_mfma_f32_32x32x8_f16", (agpr(0, 16), vgpr(0, 2), vgpr(2, 2), agpr(0, 16)),
     "v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]"),
    ("gfx90a", "v_mfma_f32_16x16x16_bf16", (vgpr(4, 4), vgpr(0, 2), vgpr(2, 2), 0),
     "v_mfma_f32_16x16x16bf16_1k v[4:7], v[0:1], v[2:3], 0"),
    ("gfx1100", "v_wmma_f32_16x16x16_f16", (vgpr(0, 8), vgpr(8, 8), vgpr(16, 8), vgpr(0, 8)),
     "v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]"),
    ("gfx1201", "v_wmma_f32_16x16x16_f16", (vgpr(0, 8), vgpr(8, 4), vgpr(12, 4), vgpr(0, 8)),
     "v_wmma_f32_16x16x16_f16 v[0:7], v[8:11], v[12:15], v[0:7]"),
    ("gfx942", "s_waitcnt", (WaitCounts(vmcnt=0, lgkmcnt=1),), "s_waitcnt vmcnt(0) lgkmcnt(1)"),
    ("gfx1201", "s_barrier_signal", (-1,), "s_barrier_signal -1"),
    ("gfx942", "s_branch", (Label("label_x"),), "s_branch label_x"),
    ("gfx942", "v_mov_b32", (vgpr(0), 1.0), "v_mov_b32 v0, 1.0"),
])
def test_spelling_per_target(arch: str, name: str, operands: tuple, text: str) -> None:
    ins = isa_for(arch).op(name)(*operands)
    assert ins.text == text
    assert ins.name == name
    assert str(ins) == text


@pytest.mark.parametrize(("arch", "policy", "text"), [
    ("gfx90a", CachePolicy(glc=True, slc=True), " glc slc"),
    ("gfx942", CachePolicy(glc=True, slc=True, nt=True), " sc0 sc1 nt"),
    ("gfx1100", CachePolicy(glc=True, dlc=True), " glc dlc"),
    ("gfx1201", CachePolicy(nt=True, scope="DEV"), " th:TH_LOAD_NT scope:SCOPE_DEV"),
])
def test_cache_bits_are_spelled_per_target(arch: str, policy: CachePolicy, text: str) -> None:
    isa = isa_for(arch)
    soff = NULL_REG if arch == "gfx1201" else 0
    ins = isa.buffer_load_dword(vgpr(0), vgpr(1), sgpr(4, 4), soff, mods=Buf(offen=True, cache=policy))
    assert ins.text.endswith(" offen" + text)


def test_store_hint_differs_from_load_hint_on_gfx12() -> None:
    isa = isa_for("gfx1201")
    ins = isa.global_store_dword(vgpr(0, 2), vgpr(2), OFF_ADDR, mods=Glb(cache=CachePolicy(nt=True)))
    assert ins.text == "global_store_b32 v[0:1], v2, off th:TH_STORE_NT"


@pytest.mark.parametrize(("arch", "policy"), [
    ("gfx90a", CachePolicy(nt=True)),          # no nt bit before gfx94x
    ("gfx942", CachePolicy(dlc=True)),
    ("gfx942", CachePolicy(th="NT")),          # th exists only on gfx12
    ("gfx1201", CachePolicy(glc=True)),
    ("gfx1201", CachePolicy(th="BOGUS")),
])
def test_cache_bits_a_target_lacks_raise(arch: str, policy: CachePolicy) -> None:
    isa = isa_for(arch)
    with pytest.raises(OperandError, match=arch):
        isa.buffer_load_dword(vgpr(0), vgpr(1), sgpr(4, 4), sgpr(0), mods=Buf(offen=True, cache=policy))


def test_missing_instruction_names_mnemonic_and_target() -> None:
    isa = isa_for("gfx1100")
    with pytest.raises(UnsupportedInstruction, match=r"v_mfma_f32_16x16x16_f16 is not available on gfx1100"):
        isa.v_mfma_f32_16x16x16_f16(agpr(0, 4), vgpr(0, 2), vgpr(2, 2), agpr(0, 4))
    with pytest.raises(UnsupportedInstruction, match=r"s_barrier is not available on gfx1201"):
        isa_for("gfx1201").op("s_barrier")
    with pytest.raises(UnsupportedInstruction, match=r"xf32.*gfx950"):
        isa_for("gfx950").v_mfma_f32_16x16x8_xf32(agpr(0, 4), vgpr(0, 2), vgpr(2, 2), agpr(0, 4))
    assert issubclass(UnsupportedInstruction, TensileLiteError)


def test_deprecated_instruction_is_refused() -> None:
    with pytest.raises(UnsupportedInstruction, match="deprecated on gfx1201"):
        isa_for("gfx1201").s_waitcnt(WaitCounts(vmcnt=0))


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="v_no_such_op"):
        isa_for("gfx942").v_no_such_op  # noqa: B018
    with pytest.raises(UnsupportedInstruction, match="no 'v_no_such_op'"):
        isa_for("gfx942").op("v_no_such_op")


@pytest.mark.parametrize(("arch", "name", "operands", "message"), [
    ("gfx942", "v_add_u32", (vgpr(1, 2), vgpr(2), 3), "has 2 register"),
    ("gfx942", "s_load_dwordx4", (sgpr(2, 4), sgpr(0, 2), 0), "multiple of 4"),
    ("gfx942", "s_load_dwordx2", (sgpr(0, 2), sgpr(1, 2), 0), "multiple of 2"),
    ("gfx90a", "v_mfma_f32_16x16x16_f16", (agpr(0, 4), vgpr(1, 2), vgpr(2, 2), agpr(0, 4)), "multiple of 2"),
    ("gfx942", "s_mov_b32", (sgpr(102), 0), "has 102"),
    ("gfx942", "v_add_u32", (vgpr(1), vgpr(2)), "takes 3 operand"),
    ("gfx942", "v_add_u32", (vgpr(1), vgpr(2), True), "got True"),
    ("gfx942", "v_add_u32", (vgpr(1), vgpr(2), 1.5), "got 1.5"),
    ("gfx942", "v_lshl_add_u32", (vgpr(0), 0x1234, vgpr(1), vgpr(2)), "literal"),
    ("gfx942", "v_lshl_add_u32", (vgpr(0), sgpr(1), sgpr(2), vgpr(2)), "constant bus allows 1"),
    ("gfx942", "v_cndmask_b32", (vgpr(0), sgpr(1), vgpr(2), VCC), "constant bus allows 1"),
    ("gfx1100", "v_lshlrev_b64", (vgpr(0, 2), sgpr(2), sgpr(4, 2)), "constant bus allows 1"),
    ("gfx942", "s_add_u32", (sgpr(0), 100, 200), "one literal"),
    ("gfx942", "v_mfma_f32_16x16x16_f16", (agpr(0, 4), vgpr(0, 2), vgpr(2, 2), vgpr(4, 4)), "register file"),
    ("gfx942", "v_mfma_f32_16x16x16_f16", (agpr(0, 4), vgpr(0, 2), vgpr(2, 2), agpr(2, 4)), "overlap"),
    ("gfx908", "v_mfma_f32_16x16x16_f16", (vgpr(0, 4), vgpr(0, 2), vgpr(2, 2), vgpr(0, 4)), "AGPR"),
    ("gfx942", "buffer_load_dword", (vgpr(0), vgpr(1), sgpr(4, 4), 0), "offen"),
    ("gfx942", "global_load_dword", (vgpr(0), vgpr(1), OFF_ADDR), "pair"),
    ("gfx1201", "buffer_load_dword", (vgpr(0), OFF_ADDR, sgpr(4, 4), 0), "operand 4"),
    ("gfx942", "s_nop", (16,), "0..15"),
    ("gfx942", "s_waitcnt", (WaitCounts(lgkmcnt=16),), "exceeds"),
    ("gfx942", "s_setprio", (4,), "0..3"),
])
def test_bad_operands_raise_with_context(arch: str, name: str, operands: tuple, message: str) -> None:
    with pytest.raises(OperandError, match=message) as info:
        isa_for(arch).op(name)(*operands)
    assert arch in str(info.value)


def test_same_operands_pass_where_the_target_allows_them() -> None:
    # gfx10+ VOP3 takes a literal and two scalar values; gfx10+ has 106 SGPRs
    isa = isa_for("gfx1100")
    assert isa.v_lshl_add_u32(vgpr(0), 0x1234, vgpr(1), vgpr(2)).text == "v_lshl_add_u32 v0, 4660, v1, v2"
    assert isa.v_lshl_add_u32(vgpr(0), sgpr(1), sgpr(2), vgpr(2)).text == "v_lshl_add_u32 v0, s1, s2, v2"
    assert isa.s_mov_b32(sgpr(105), 0).text == "s_mov_b32 s105, 0"
    # gfx9 takes a literal in the first source of a VOP2 whose other source is a VGPR
    assert isa_for("gfx90a").v_add_u32(vgpr(0), 0x1234, vgpr(1)).text == "v_add_u32 v0, 4660, v1"


@pytest.mark.parametrize(("arch", "mods", "message"), [
    ("gfx1100", DPP.named("row_bcast:15"), "does not exist on gfx1100"),
    ("gfx90a", DPP.row("row_share", 3), "does not exist on gfx90a"),
    ("gfx942", Buf(offen=True, offset=4096), "outside 0..4095"),
    ("gfx942", Sel(op_sel=(1, 0)), "does not take Sel"),
])
def test_bad_modifiers_raise(arch: str, mods: object, message: str) -> None:
    isa = isa_for(arch)
    with pytest.raises(OperandError, match=message):
        if isinstance(mods, DPP):
            isa.v_mov_b32(vgpr(0), vgpr(1), mods=mods)
        else:
            isa.buffer_load_dword(vgpr(0), vgpr(1), sgpr(4, 4), 0, mods=mods)


def test_dpp_needs_vgpr_sources_and_spells_dpp() -> None:
    isa = isa_for("gfx942")
    ins = isa.v_add_u32(vgpr(0), vgpr(1), vgpr(2), mods=DPP.row("row_shr", 1, bound_ctrl=True))
    assert ins.text == "v_add_u32_dpp v0, v1, v2 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1"
    with pytest.raises(OperandError, match="VGPR sources only"):
        isa.v_add_u32(vgpr(0), sgpr(1), vgpr(2), mods=DPP.quad_perm(1, 0, 3, 2))


def test_mfma_formats_set_operand_widths_on_gfx950() -> None:
    isa = isa_for("gfx950")
    fp4 = isa.v_mfma_f32_16x16x128_f8f6f4(vgpr(0, 4), vgpr(4, 4), vgpr(8, 8), vgpr(0, 4), mods=Mfma(cbsz=4))
    assert fp4.text.endswith("cbsz:4")
    with pytest.raises(OperandError, match="8/8-register"):
        isa.v_mfma_f32_16x16x128_f8f6f4(vgpr(0, 4), vgpr(4, 4), vgpr(8, 8), vgpr(0, 4))


def test_instructions_survive_pickling() -> None:
    ins = isa_for("gfx1201").v_add_u32(vgpr(1), vgpr(2), 3)
    back = pickle.loads(pickle.dumps(ins))
    assert back.text == ins.text and back.op is ins.op and back.operands == ins.operands
    assert pickle.loads(pickle.dumps(get_arch("gfx942"))) is get_arch("gfx942")


def test_instructions_are_frozen_values() -> None:
    ins = isa_for("gfx942").s_endpgm()
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        ins.text = "s_nop 0"  # type: ignore[misc]
    assert ins.family == "sopp" and ins.mem is None
    assert isa_for("gfx942").s_load_dword(sgpr(2), sgpr(0, 2), 0).mem == "smem"


@pytest.mark.parametrize(("arch", "acc", "inp", "shape", "name", "regs"), [
    # spec matrix_instructions.md §1.1 and §2
    ("gfx90a", "f32", "f16", (16, 16, 16, 1), "v_mfma_f32_16x16x16f16", (2, 2, 4)),
    ("gfx90a", "f32", "bf16", (32, 32, 8, 1), "v_mfma_f32_32x32x8bf16_1k", (2, 2, 16)),
    ("gfx90a", "i32", "i8", (16, 16, 16, 1), "v_mfma_i32_16x16x16i8", (1, 1, 4)),
    ("gfx90a", "f64", "f64", (16, 16, 4, 1), "v_mfma_f64_16x16x4f64", (2, 2, 8)),
    ("gfx942", "f32", "f16", (16, 16, 4, 4), "v_mfma_f32_16x16x4_4b_f16", (2, 2, 16)),
    ("gfx942", "i32", "i8", (32, 32, 16, 1), "v_mfma_i32_32x32x16_i8", (2, 2, 16)),
    ("gfx942", "f32", "xf32", (16, 16, 8, 1), "v_mfma_f32_16x16x8_xf32", (2, 2, 4)),
    ("gfx942", "f32", "fp8", (16, 16, 32, 1), "v_mfma_f32_16x16x32_fp8_fp8", (2, 2, 4)),
    ("gfx950", "f32", "bf16", (32, 32, 16, 1), "v_mfma_f32_32x32x16_bf16", (4, 4, 16)),
    ("gfx950", "i32", "i8", (16, 16, 64, 1), "v_mfma_i32_16x16x64_i8", (4, 4, 4)),
    ("gfx1100", "i32", "iu8", (16, 16, 16, 1), "v_wmma_i32_16x16x16_iu8", (4, 4, 8)),
    ("gfx1201", "f32", "bf16", (16, 16, 16, 1), "v_wmma_f32_16x16x16_bf16", (4, 4, 8)),
    ("gfx1201", "f32", "fp8", (16, 16, 16, 1), "v_wmma_f32_16x16x16_fp8_fp8", (2, 2, 8)),
])
def test_matrix_instructions_by_shape(arch: str, acc: str, inp: str, shape: tuple, name: str, regs: tuple) -> None:
    mi = get_arch(arch).find_matrix(acc, inp, *shape)
    assert mi.spelling == name
    assert (mi.a_regs, mi.b_regs, mi.cd_regs) == regs
    assert isa_for(arch).op(mi.name).spelling == name


def test_missing_matrix_shape_names_target() -> None:
    with pytest.raises(UnsupportedInstruction, match="gfx950"):
        get_arch("gfx950").find_matrix("f32", "xf32", 16, 16, 8)
    assert not get_arch("gfx1100").find_matrix("f32", "f16", 16, 16, 16).multi_block
