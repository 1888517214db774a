"""The strict readings of hardware_semantics.md §2, each shown by a hand-written kernel that relies on
the permissive reading (and fails) next to its fixed variant (which passes):

- wait states CDNA does not insert itself: MFMA results and operands (emu/hazards.py MatrixTiming),
  VALU-written SGPRs read by memory instructions, lane selects or (gfx940+) other VALUs, exec and
  VGPRs before lane reads, the data of stores wider than 8 bytes;
- every class of load is outstanding until its s_waitcnt;
- garbage where the hardware initialises nothing (LDS, AGPRs, SCC, the kernarg slack);
- f32 denormals flushed when the descriptor says so.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from tensile_lite.asm.arch import get_arch
from tensile_lite.asm.gemm.hazards import HazardGuard
from tensile_lite.asm.isa import isa_for
from tensile_lite.asm.operands import VCC, sgpr, vgpr
from tensile_lite.emu import DeviceMemory, Emulator, HazardError
from tests.emu.conftest import require_arch
from tests.emu.kernels import KernelSpec, build, dialect, ptr

U = np.uint32
CDNA = ("gfx90a", "gfx942", "gfx950")
# store lane i's v2 to out[i]: the ending of every kernel below
_OUT = "  v_lshlrev_b32 v1, 2, v0\n  global_store_dword v1, v2, s[4:5]\n  s_endpgm\n"
_START = "  s_load_dwordx2 s[4:5], s[0:1], 0x0\n  s_waitcnt lgkmcnt(0)\n"


def _nops(states: int) -> str:
    """Exactly `states` wait states of s_nop (0 gives nothing)."""
    out = []
    while states > 0:
        n = min(states, 8)
        out.append(f"  s_nop {n - 1}\n")
        states -= n
    return "".join(out)


def _regs(file: str, first: int, count: int) -> str:
    return f"{file}{first}" if count == 1 else f"{file}[{first}:{first + count - 1}]"


def _zero(file: str, first: int, count: int) -> str:
    op = "v_accvgpr_write_b32" if file == "a" else "v_mov_b32"
    return "".join(f"  {op} {file}{first + r}, 0\n" for r in range(count))


def _mfma(mnemonic: str, a_regs: int, d: str, c: str) -> str:
    return f"  {mnemonic} {d}, {_regs('v', 8, a_regs)}, {_regs('v', 16, a_regs)}, {c}\n"


def _mfma_setup(a_regs: int, d_regs: int) -> str:
    return _START + _zero("v", 8, a_regs) + _zero("v", 16, a_regs) + _zero("a", 0, d_regs) + "  s_nop 1\n"


class _Kernels:
    """One code object per architecture holding every kernel a test adds (built on first launch)."""

    def __init__(self, toolchain, co_dir) -> None:
        self.toolchain, self.co_dir = toolchain, co_dir
        self.specs: dict[str, dict[str, KernelSpec]] = {}
        self.emus: dict[str, Emulator] = {}

    def add(self, arch: str, name: str, body: str, **kw) -> None:
        kw.setdefault("agprs", 32 if arch in CDNA else 0)
        self.specs.setdefault(arch, {})[name] = KernelSpec(name, body, (ptr("out"),), vgprs=48, max_threads=64, **kw)

    def run(self, arch: str, name: str) -> np.ndarray:
        emu = self.emus.get(arch)
        if emu is None:
            require_arch(self.toolchain, arch)
            co = build(self.toolchain, self.co_dir, arch, list(self.specs[arch].values()), name="hazards")
            emu = self.emus[arch] = Emulator(co, toolchain=self.toolchain)
        mem = DeviceMemory()
        out = mem.alloc(16 * 64, fill=0xEE)
        lanes = emu.kernel(name).lanes
        emu.launch(name, grid=(1, 1, 1), block=(lanes, 1, 1), kernargs=struct.pack("<Q", out), memory=mem)
        return mem.array(out, U, lanes)


# ---------------------------------------------------------------------------------------------
# MFMA results: a VALU may read them only after the instruction's passes (+ the table's margin).
# (arch, mnemonic, A regs, D regs, wait states a VALU read of D needs)
_RESULT = (
    ("gfx90a", "v_mfma_f32_16x16x16f16", 2, 4, 11),      # 8 passes
    ("gfx90a", "v_mfma_f32_32x32x8f16", 2, 16, 19),      # 16 passes
    ("gfx90a", "v_mfma_f32_4x4x4f16", 2, 4, 5),          # 2 passes
    ("gfx942", "v_mfma_f32_16x16x16_f16", 2, 4, 7),      # XDL, 4 passes
    ("gfx942", "v_mfma_f32_32x32x8_f16", 2, 16, 11),     # XDL, 8 passes
    ("gfx942", "v_mfma_f32_32x32x2_f32", 1, 16, 18),     # not XDL, 16 passes
    ("gfx942", "v_mfma_f32_4x4x4_16b_f16", 2, 4, 5),     # XDL, 2 passes
    ("gfx950", "v_mfma_f32_16x16x32_f16", 4, 4, 8),      # XDL, 4 passes, gfx950's extra one
    ("gfx950", "v_mfma_f32_32x32x16_f16", 4, 16, 12),    # XDL, 8 passes
)


def _result_body(mnemonic: str, a_regs: int, d_regs: int, states: int) -> str:
    acc = _regs("a", 0, d_regs)
    return (_mfma_setup(a_regs, d_regs) + _mfma(mnemonic, a_regs, acc, acc) + _nops(states)
            + "  v_accvgpr_read_b32 v2, a0\n" + _OUT)


@pytest.fixture(scope="module")
def kernels(toolchain, co_dir):
    k = _Kernels(toolchain, co_dir)
    for arch, mnemonic, a_regs, d_regs, need in _RESULT:
        for states in (need - 1, need):
            k.add(arch, f"result_{mnemonic}_{states}", _result_body(mnemonic, a_regs, d_regs, states))
    _matrix_kernels(k)
    _sgpr_kernels(k)
    _store_kernels(k)
    _load_kernels(k)
    _init_kernels(k)
    return k


@pytest.mark.parametrize(("arch", "mnemonic", "a_regs", "d_regs", "need"), _RESULT)
def test_mfma_result_read_needs_its_passes(kernels, arch, mnemonic, a_regs, d_regs, need):
    with pytest.raises(HazardError, match=rf"a0 read {need - 1} wait states after the MFMA .*needs {need}"):
        kernels.run(arch, f"result_{mnemonic}_{need - 1}")
    kernels.run(arch, f"result_{mnemonic}_{need}")


def _matrix_kernels(k: _Kernels) -> None:
    for arch in ("gfx90a", "gfx942"):
        mfma = "v_mfma_f32_16x16x16f16" if arch == "gfx90a" else "v_mfma_f32_16x16x16_f16"
        acc = "a[0:3]"
        setup = _mfma_setup(2, 4)
        # back-to-back accumulation into the same registers: chained by the hardware
        k.add(arch, "chain", setup + _mfma(mfma, 2, acc, acc) * 2 + _nops(19) + "  v_accvgpr_read_b32 v2, a0\n" + _OUT)
        # a VALU write of an operand, then the MFMA
        for states in (1, 2):
            body = _START + _zero("v", 8, 2) + _zero("v", 16, 2) + _zero("a", 0, 4) + _nops(states)
            k.add(arch, f"valu_then_mfma_{states}", body + _mfma(mfma, 2, acc, acc) + _nops(19)
                  + "  v_accvgpr_read_b32 v2, a0\n" + _OUT)
        # overwriting the result (WAW) before it is written
        k.add(arch, "overwrite_result", setup + _mfma(mfma, 2, acc, acc) + "  v_accvgpr_write_b32 a0, 0\n"
              + _nops(19) + "  v_accvgpr_read_b32 v2, a0\n" + _OUT)
        # a store reading a VGPR result
        k.add(arch, "store_result", setup + _zero("v", 24, 4) + "  s_nop 1\n" + _mfma(mfma, 2, "v[24:27]", "v[24:27]")
              + "  v_lshlrev_b32 v1, 2, v0\n  global_store_dword v1, v24, s[4:5]\n  s_endpgm\n")
        # overwriting C while the MFMA still reads it (WAR): 8 passes - 1 on gfx90a, 4 - 1 on gfx942
        war = 7 if arch == "gfx90a" else 3
        for states in (war - 1, war):
            k.add(arch, f"overwrite_c_{states}", setup + _zero("v", 24, 4) + "  s_nop 1\n"
                  + _mfma(mfma, 2, "v[28:31]", "v[24:27]") + _nops(states) + "  v_mov_b32 v24, 1\n" + _nops(19)
                  + "  v_mov_b32 v2, v28\n" + _OUT)
    # gfx942's 2-pass MFMAs need 2 wait states even for back-to-back accumulation
    for states in (1, 2):
        acc = "a[0:3]"
        k.add("gfx942", f"chain_2pass_{states}", _mfma_setup(2, 4) + _mfma("v_mfma_f32_4x4x4_16b_f16", 2, acc, acc)
              + _nops(states) + _mfma("v_mfma_f32_4x4x4_16b_f16", 2, acc, acc) + _nops(19)
              + "  v_accvgpr_read_b32 v2, a0\n" + _OUT)


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942"])
def test_mfma_operand_rules(kernels, arch):
    kernels.run(arch, "chain")
    with pytest.raises(HazardError, match=r"a3 read by the MFMA .* 1 wait states after a VALU wrote it; .*needs 2"):
        kernels.run(arch, "valu_then_mfma_1")
    kernels.run(arch, "valu_then_mfma_2")
    with pytest.raises(HazardError, match=r"a0 written 0 wait states after the MFMA"):
        kernels.run(arch, "overwrite_result")
    with pytest.raises(HazardError, match=r"v24 read by a memory instruction 1 wait states after the MFMA"):
        kernels.run(arch, "store_result")
    war = 7 if arch == "gfx90a" else 3
    with pytest.raises(HazardError, match=rf"v24 written {war - 1} wait states after the MFMA .* read it as C"):
        kernels.run(arch, f"overwrite_c_{war - 1}")
    kernels.run(arch, f"overwrite_c_{war}")


def test_two_pass_mfma_chain_needs_two_wait_states(kernels):
    with pytest.raises(HazardError, match=r"read as C of .* 1 wait states .* needs 2"):
        kernels.run("gfx942", "chain_2pass_1")
    kernels.run("gfx942", "chain_2pass_2")


# ---------------------------------------------------------------------------------------------
# SGPRs, exec and VGPRs a VALU wrote: what CDNA does not interlock.

def _sgpr_kernels(k: _Kernels) -> None:
    for arch in ("gfx90a", "gfx942"):
        # the low half of the output pointer through a VALU (v_readfirstlane), then a global store
        for states in (4, 5):
            k.add(arch, f"vmem_sgpr_{states}", _START + "  v_mov_b32 v2, 7\n  v_lshlrev_b32 v1, 2, v0\n"
                  "  v_mov_b32 v3, s4\n  s_nop 0\n  v_readfirstlane_b32 s6, v3\n  s_mov_b32 s7, s5\n"
                  + _nops(states - 1) + "  global_store_dword v1, v2, s[6:7]\n  s_endpgm\n")
        # a lane select written by a VALU
        for states in (3, 4):
            k.add(arch, f"lane_select_{states}", _START + "  v_mov_b32 v3, 5\n  s_nop 0\n  v_readfirstlane_b32 s6, v3\n"
                  + _nops(states) + "  v_readlane_b32 s7, v0, s6\n  s_nop 1\n  v_mov_b32 v2, s7\n" + _OUT)
        # v_cmp writes vcc, v_cndmask reads it: interlocked on gfx90a, 2 wait states on gfx940+
        for states in (0, 2):
            k.add(arch, f"valu_sgpr_{states}", _START + "  v_cmp_gt_u32 vcc, 32, v0\n" + _nops(states)
                  + "  v_cndmask_b32 v2, 2, 1, vcc\n" + _OUT)
        # exec written by v_cmpx, then v_readfirstlane (gfx940+: 4)
        for states in (3, 4):
            k.add(arch, f"exec_lane_{states}", _START + "  v_cmpx_gt_u32 vcc, 32, v0\n" + _nops(states)
                  + "  v_readfirstlane_b32 s6, v0\n  s_mov_b64 exec, -1\n  s_nop 1\n  v_mov_b32 v2, s6\n" + _OUT)
        # vcc written by a VALU, read as src_vccz by a VALU (5)
        for states in (4, 5):
            k.add(arch, f"vccz_{states}", _START + "  v_cmp_eq_u32 vcc, v0, v0\n" + _nops(states)
                  + "  v_mov_b32 v2, src_vccz\n" + _OUT)
        # a transcendental result read by another VALU (gfx940+: 1), or by a transcendental (interlocked)
        for states in (0, 1):
            k.add(arch, f"trans_{states}", _START + "  v_mov_b32 v3, 1.0\n  v_exp_f32 v4, v3\n" + _nops(states)
                  + "  v_add_f32 v2, v4, v4\n" + _OUT)
        k.add(arch, "trans_chain", _START + "  v_mov_b32 v3, 1.0\n  v_exp_f32 v4, v3\n  v_rcp_f32 v2, v4\n" + _OUT)
        # a VGPR a VALU just wrote, read by v_readfirstlane (gfx940+: 1)
        for states in (0, 1):
            k.add(arch, f"vgpr_lane_{states}", _START + "  v_mov_b32 v3, 9\n" + _nops(states)
                  + "  v_readfirstlane_b32 s6, v3\n  s_nop 1\n  v_mov_b32 v2, s6\n" + _OUT)


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942"])
def test_valu_written_sgpr_read_by_vector_memory(kernels, arch):
    with pytest.raises(HazardError, match=r"s6 read by a vector memory instruction 4 wait states .*needs 5"):
        kernels.run(arch, "vmem_sgpr_4")
    kernels.run(arch, "vmem_sgpr_5")


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942"])
def test_valu_written_vcc_read_as_vccz(kernels, arch):
    with pytest.raises(HazardError, match=r"vcc_lo read as src_vccz by a VALU 4 wait states .*needs 5"):
        kernels.run(arch, "vccz_4")
    assert (kernels.run(arch, "vccz_5") == 0).all()


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942"])
def test_valu_written_lane_select(kernels, arch):
    with pytest.raises(HazardError, match=r"s6 used as the lane select 3 wait states .*needs 4"):
        kernels.run(arch, "lane_select_3")
    assert (kernels.run(arch, "lane_select_4") == 5).all()


def test_gfx940_forwarding_of_valu_results(kernels):
    expect = np.where(np.arange(64) < 32, 1, 2)
    # gfx90a interlocks all three
    np.testing.assert_array_equal(kernels.run("gfx90a", "valu_sgpr_0"), expect)
    kernels.run("gfx90a", "exec_lane_3")
    kernels.run("gfx90a", "vgpr_lane_0")
    with pytest.raises(HazardError, match=r"vcc_lo read by a VALU 0 wait states .*needs 2"):
        kernels.run("gfx942", "valu_sgpr_0")
    np.testing.assert_array_equal(kernels.run("gfx942", "valu_sgpr_2"), expect)
    with pytest.raises(HazardError, match=r"exec_lo in force for `v_readfirstlane_b32 s6, v0` 3 wait states"):
        kernels.run("gfx942", "exec_lane_3")
    kernels.run("gfx942", "exec_lane_4")
    np.testing.assert_array_equal(kernels.run("gfx90a", "trans_0"), np.float32(4.0).view(U))
    with pytest.raises(HazardError, match=r"v4 read 0 wait states after the transcendental `v_exp_f32_e32 v4, v3`"):
        kernels.run("gfx942", "trans_0")
    np.testing.assert_array_equal(kernels.run("gfx942", "trans_1"), np.float32(4.0).view(U))
    np.testing.assert_array_equal(kernels.run("gfx942", "trans_chain"), np.float32(0.5).view(U))
    with pytest.raises(HazardError, match=r"v3 read by `v_readfirstlane_b32 s6, v3` 0 wait states .*needs 1"):
        kernels.run("gfx942", "vgpr_lane_0")
    assert (kernels.run("gfx942", "vgpr_lane_1") == 9).all()


# ---------------------------------------------------------------------------------------------
# Store data: gfx9 stores read their data when they issue (LLVM's vmemWriteNeedsExpWaitcnt is for
# GCN1 only), except that stores of more than 8 bytes need 1 (gfx94x+: 2) wait states before a
# VALU overwrites the data (MUBUF with an SGPR soffset exempt).

def _store_kernels(k: _Kernels) -> None:
    for arch in ("gfx90a", "gfx942"):
        for states in (0, 1, 2):
            k.add(arch, f"wide_store_{states}", _START + "  v_lshlrev_b32 v1, 4, v0\n" + _zero("v", 8, 4)
                  + "  global_store_dwordx4 v1, v[8:11], s[4:5]\n" + _nops(states) + "  v_mov_b32 v8, 1\n"
                  "  s_endpgm\n")
        k.add(arch, "narrow_store", _START + "  v_lshlrev_b32 v1, 3, v0\n" + _zero("v", 8, 2)
              + "  global_store_dwordx2 v1, v[8:9], s[4:5]\n  v_mov_b32 v8, 1\n  s_endpgm\n")
        k.add(arch, "wide_buffer_store_sgpr_soffset", _START + "  s_mov_b32 s8, s4\n  s_and_b32 s9, s5, 0xffff\n"
              "  s_mov_b32 s10, 0x400\n  s_mov_b32 s11, 0x00020000\n  s_mov_b32 s12, 0\n  v_lshlrev_b32 v1, 4, v0\n"
              + _zero("v", 8, 4) + "  buffer_store_dwordx4 v[8:11], v1, s[8:11], s12 offen\n  v_mov_b32 v8, 1\n"
              "  s_endpgm\n")


@pytest.mark.parametrize(("arch", "need"), [("gfx90a", 1), ("gfx942", 2)])
def test_wide_store_data_overwritten(kernels, arch, need):
    with pytest.raises(HazardError, match=rf"v8 written {need - 1} wait states after the store .*needs {need}"):
        kernels.run(arch, f"wide_store_{need - 1}")
    kernels.run(arch, f"wide_store_{need}")
    kernels.run(arch, "narrow_store")
    kernels.run(arch, "wide_buffer_store_sgpr_soffset")


# ---------------------------------------------------------------------------------------------
# Every load class is outstanding until an s_waitcnt covers it.

_LOADS = {
    "buffer": ("  s_mov_b32 s8, s4\n  s_and_b32 s9, s5, 0xffff\n  s_mov_b32 s10, 0x400\n  s_mov_b32 s11, {srd3}\n"
               "  {buffer_load_b32} v2, v1, s[8:11], 0 offen\n", "{wait_vmem}"),
    "global": ("  {global_load_b32} v2, v1, s[4:5]\n", "{wait_vmem}"),
    "lds": ("  {ds_load_b32} v2, v1\n", "{wait_lds}"),
    "bpermute": ("  ds_bpermute_b32 v2, v1, v0\n", "{wait_lds}"),
    "atomic_return": ("  v_mov_b32 v3, 1\n  {global_atomic_add_u32} v2, v1, v3, s[4:5] {atomic_rtn}\n", "{wait_vmem}"),
    # a flat load counts on both counters: vmcnt alone does not cover it
    "flat": ("  v_mov_b32 v4, s4\n  v_mov_b32 v5, s5\n  s_nop 4\n  {flat_load} v2, v[4:5]\n  {wait_vmem}\n",
             "{wait_lds}"),
    # nor does lgkmcnt(1) with a younger LDS read: flat accesses retire only at a count of 0
    "flat_then_lds": ("  v_mov_b32 v4, s4\n  v_mov_b32 v5, s5\n  s_nop 4\n  {flat_load} v2, v[4:5]\n"
                      "  {ds_load_b32} v6, v1\n  {wait_vmem}\n  {wait_lds1}\n", "{wait_lds}"),
}
_LOAD_ARCHS = ("gfx90a", "gfx1100")


def _load_kernels(k: _Kernels) -> None:
    for arch in _LOAD_ARCHS:
        flat = "flat_load_dword" if arch.startswith("gfx9") else "flat_load_b32"
        for name, (load, wait) in _LOADS.items():
            head = dialect(arch, "  {s_load_b64} s[4:5], s[0:1], 0x0\n  {wait_smem}\n  v_lshlrev_b32 v1, 2, v0\n")
            body = dialect(arch, load.replace("{flat_load}", flat).replace("{wait_lds1}", "s_waitcnt lgkmcnt(1)"))
            use = dialect(arch, "  {v_add_nc_u32} v3, 1, v2\n")
            tail = dialect(arch, "  {global_store_b32} v1, v3, s[4:5]\n  s_endpgm\n")
            k.add(arch, f"load_{name}_early", head + body + use + tail, lds=256)
            k.add(arch, f"load_{name}_waited", head + body + "  " + dialect(arch, wait) + "\n" + use + tail, lds=256)


@pytest.mark.parametrize("arch", _LOAD_ARCHS)
@pytest.mark.parametrize("name", list(_LOADS))
def test_every_load_class_waits(kernels, arch, name):
    with pytest.raises(HazardError, match=r"v2 read before the load .* was waited for"):
        kernels.run(arch, f"load_{name}_early")
    kernels.run(arch, f"load_{name}_waited")


# ---------------------------------------------------------------------------------------------
# What the hardware does not initialise holds garbage; f32 denormals follow the descriptor.

def _init_kernels(k: _Kernels) -> None:
    for arch in ("gfx90a", "gfx942"):
        k.add(arch, "lds_unwritten", _START + "  v_lshlrev_b32 v1, 2, v0\n  ds_read_b32 v2, v1\n  s_waitcnt lgkmcnt(0)\n"
              + _OUT, lds=256)
        k.add(arch, "lds_written", _START + "  v_lshlrev_b32 v1, 2, v0\n  v_mov_b32 v3, 0\n  ds_write_b32 v1, v3\n"
              "  s_waitcnt lgkmcnt(0)\n  ds_read_b32 v2, v1\n  s_waitcnt lgkmcnt(0)\n" + _OUT, lds=256)
        k.add(arch, "agpr_unwritten", _START + "  v_accvgpr_read_b32 v2, a5\n" + _OUT)
        k.add(arch, "scc_unwritten", _START + "  s_cselect_b32 s6, 1, 0\n  v_mov_b32 v2, s6\n" + _OUT)
        k.add(arch, "kernarg_slack", _START + "  s_load_dword s6, s[0:1], 0x40\n  s_waitcnt lgkmcnt(0)\n"
              "  v_mov_b32 v2, s6\n" + _OUT)
        for mode in (0, 3):
            # 1 is the smallest f32 denormal: flushed to 0 in mode 0, kept in mode 3
            k.add(arch, f"denorm_{mode}", _START + "  v_mov_b32 v3, 1\n  v_add_f32 v2, 0, v3\n" + _OUT,
                  denorm_mode_32=mode)


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942"])
def test_uninitialised_state_is_garbage(kernels, arch):
    # a kernel that takes fresh LDS, AGPRs or SCC for zero computes garbage
    assert (kernels.run(arch, "lds_unwritten") == 0xFFFFFFFF).all()
    assert (kernels.run(arch, "lds_written") == 0).all()
    assert (kernels.run(arch, "agpr_unwritten") == 0xFFBADBAD).all()
    assert (kernels.run(arch, "scc_unwritten") == 1).all()
    assert (kernels.run(arch, "kernarg_slack") == 0xADADADAD).all()


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942"])
def test_f32_denormals_follow_the_descriptor(kernels, arch):
    assert (kernels.run(arch, "denorm_0") == 0).all()
    assert (kernels.run(arch, "denorm_3") == 1).all()


# ---------------------------------------------------------------------------------------------
# The kernel writer's guard (asm/gemm/hazards.py) pads exactly these sequences: the same
# instructions fail on the emulator without it and run with it.

def _writer_sequence(isa):
    v, s = vgpr, sgpr
    return [
        isa.v_cmp_gt_u32(VCC, 32, v(0)), isa.v_cndmask_b32(v(2), 2, 1, VCC),      # gfx94x+: 2
        isa.v_mov_b32(v(3), 9), isa.v_readfirstlane_b32(s(6), v(3)),               # gfx94x+: 1
        isa.v_lshlrev_b32(v(1), 4, v(0)), isa.v_mov_b32(v(8), v(2)), isa.v_mov_b32(v(9), s(6)),
        isa.v_mov_b32(v(10), 0), isa.v_mov_b32(v(11), 0),
        isa.global_store_dwordx4(v(1), v(8, 4), s(4, 2)), isa.v_mov_b32(v(8), 0),  # 1, gfx94x+: 2
    ]


def _guarded(arch: str, guard_on: bool) -> str:
    isa = isa_for(arch)
    guard = HazardGuard(get_arch(arch))
    lines = []
    for ins in _writer_sequence(isa):
        wait = guard.wait_states(ins) if guard_on else 0
        if wait:
            nop = isa.s_nop(wait - 1)
            lines.append(f"  {nop}")
            guard.issued(nop, wait)
        lines.append(f"  {ins}")
        guard.issued(ins)
    return _START + "\n".join(lines) + "\n  s_endpgm\n"


@pytest.fixture(scope="module")
def writer_kernels(toolchain, co_dir):
    k = _Kernels(toolchain, co_dir)
    for arch in ("gfx90a", "gfx942"):
        k.add(arch, "unguarded", _guarded(arch, False))
        k.add(arch, "guarded", _guarded(arch, True))
    return k


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942"])
def test_writer_guard_pads_what_the_emulator_rejects(writer_kernels, arch):
    with pytest.raises(HazardError, match="does not wait by itself"):
        writer_kernels.run(arch, "unguarded")
    out = writer_kernels.run(arch, "guarded")
    np.testing.assert_array_equal(out[:16].reshape(-1, 4)[:, :2], [[1, 9]] * 4)
