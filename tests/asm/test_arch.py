"""Architecture records: documented facts, limits checked against the assembler."""

from __future__ import annotations

import pytest

from tensile_lite.asm import ARCHS, get_arch, isa_for
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.errors import UnknownArchitecture
from tensile_lite.targets import TARGETS
from tests.asm.llvm_roundtrip import llvm_mc_errors, toolchain_knows


def test_every_pipeline_target_has_a_record() -> None:
    assert set(ARCHS) == {gfx for gfx, t in TARGETS.items() if t.instruction_tables}
    for name, arch in ARCHS.items():
        assert arch.wavefront_size == TARGETS[name].wavefront_size
        assert arch.unified_vgprs == TARGETS[name].unified_agprs
    assert get_arch("gfx90a:xnack+").name == "gfx90a"
    with pytest.raises(UnknownArchitecture, match="gfx1030"):
        get_arch("gfx1030")
    # a registry target whose instruction set is not described is refused by name, not with a KeyError
    with pytest.raises(UnknownArchitecture, match=r"gfx1250: .*does not describe"):
        get_arch("gfx1250")


@pytest.mark.parametrize(("name", "lds", "wave", "agprs", "unified", "wg_ids", "word3", "fp8"), [
    ("gfx908", 65536, 64, 256, False, "sgpr", 0x00020000, None),
    ("gfx90a", 65536, 64, 256, True, "sgpr", 0x00020000, None),
    ("gfx942", 65536, 64, 256, True, "sgpr", 0x00020000, "fnuz"),
    ("gfx950", 163840, 64, 256, True, "sgpr", 0x00020000, "ocp"),
    ("gfx1100", 65536, 32, 0, False, "sgpr", 0x31004000, None),
    ("gfx1151", 65536, 32, 0, False, "sgpr", 0x31004000, None),
    ("gfx1201", 65536, 32, 0, False, "ttmp", 0x30020000, "ocp"),
])
def test_documented_facts(name: str, lds: int, wave: int, agprs: int, unified: bool, wg_ids: str,
                          word3: int, fp8: str | None) -> None:
    a = get_arch(name)
    assert (a.lds_bytes, a.wavefront_size, a.max_agprs, a.unified_vgprs) == (lds, wave, agprs, unified)
    assert (a.workgroup_id_source, a.srd_word3, a.fp8_format) == (wg_ids, word3, fp8)
    assert a.vcc.text == ("vcc" if wave == 64 else "vcc_lo")
    assert a.lane_mask_width == wave // 32


def test_gfx940_and_gfx941_share_gfx942s_instructions() -> None:
    """LLVM 21+ dropped gfx940/gfx941, so their rows are checked through gfx942's (same tags)."""
    ref = isa_for("gfx942")
    for name in ("gfx940", "gfx941"):
        isa = isa_for(name)
        assert set(isa.ops) == set(ref.ops)
        assert all(isa.ops[n].spelling == ref.ops[n].spelling for n in ref.ops)
        assert get_arch(name).tags - {name} == ref.arch.tags - {"gfx942"}


@pytest.mark.parametrize("name", sorted(ARCHS))
def test_register_and_counter_limits_match_the_assembler(name: str, toolchain: Toolchain) -> None:
    if not toolchain_knows(toolchain, name):
        pytest.skip(f"{toolchain.describe()} does not know {name}")
    a = get_arch(name)
    ok = [f"s_mov_b32 s{a.max_sgprs - 1}, 0", f"v_mov_b32 v{a.max_vgprs - 1}, 0"]
    bad = [f"s_mov_b32 s{a.max_sgprs}, 0", f"v_mov_b32 v{a.max_vgprs}, 0"]
    if a.has_agprs:
        ok.append(f"v_accvgpr_write_b32 a{a.max_agprs - 1}, 0")
        bad.append(f"v_accvgpr_write_b32 a{a.max_agprs}, 0")
    if not a.waitcnt_split:
        for counter in ("vmcnt", "expcnt", "lgkmcnt"):
            limit = a.wait_counters[counter]
            ok.append(f"s_waitcnt {counter}({limit})")
            bad.append(f"s_waitcnt {counter}({limit + 1})")
    lines = ok + bad
    errors = llvm_mc_errors(toolchain, name, lines)
    assert not [lines[i - 1] for i in errors if i <= len(ok)], errors
    assert all(i + len(ok) + 1 in errors for i in range(len(bad))), (bad, errors)


def test_matrix_tables_are_consistent() -> None:
    for a in ARCHS.values():
        names = [m.name for m in a.matrix]
        assert len(names) == len(set(names))
        for m in a.matrix:
            # one lane holds (M*K*blocks)/wave elements of A; check the register count against it
            bits = {"f16": 16, "bf16": 16, "f32": 32, "xf32": 32, "f64": 64, "i8": 8, "iu8": 8, "iu4": 4,
                    "fp8": 8, "bf8": 8, "f8f6f4": 8}[m.a_type]
            per_lane = m.m * m.k * m.blocks * bits / a.wavefront_size / 32
            replicate = 2 if m.kind == "wmma" and a.version[0] == 11 else 1  # gfx11 copies A in both half-waves
            if m.a_type == "xf32":
                per_lane = m.m * m.k * m.blocks / a.wavefront_size
            assert m.a_regs == per_lane * replicate, (a.name, m.name)
            acc_bits = 64 if m.acc_type == "f64" else (16 if m.acc_type in ("f16", "bf16") and a.version[0] == 12 else 32)
            assert m.cd_regs == m.m * m.n * m.blocks * acc_bits / 32 / a.wavefront_size or (
                m.kind == "wmma" and a.version[0] == 11), (a.name, m.name)
