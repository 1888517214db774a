"""Exec masking, branches, pc moves, dispatch state (workgroup ids, thread ids) and error reporting."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from tensile_lite.emu import (
    CodeObjectError,
    DeviceMemory,
    Emulator,
    EmulatorError,
    LaunchError,
    UnsupportedInstruction,
)
from tests.emu.conftest import ALL_ARCHS, BASE_ARCHS, require_arch
from tests.emu.kernels import KernelSpec, build, dialect, ptr, u32
from tests.emu.lanes import Case, lane_kernel, run_lanes

U = np.uint32

CONTROL_CASES = [
    Case("masked_write", "  v_mov_b32 {d}, 7\n  v_cmp_gt_u32 {vcc}, v2, v3\n  {s_and_saveexec} {smask}, {vcc}\n"
         "  v_mov_b32 {d}, v4\n  {s_or_exec}", lambda a, b, c, x, y: np.where(a > b, c, 7)),
    Case("execz_branch", "  v_mov_b32 {d}, 1\n  v_cmp_gt_u32 {vcc}, 0, v2\n  {s_and_saveexec} {smask}, {vcc}\n"
         "  s_cbranch_execz .Lskip_execz\n  v_mov_b32 {d}, 2\n.Lskip_execz:\n  {s_or_exec}",
         lambda a, b, c, x, y: np.ones_like(a)),
    Case("scalar_runs_without_exec", "  v_mov_b32 {d}, 1\n  s_mov_b32 s13, 0\n  v_cmp_gt_u32 {vcc}, 0, v2\n"
         "  {s_and_saveexec} {smask}, {vcc}\n  s_mov_b32 s13, 5\n  v_mov_b32 {d}, 2\n  {s_or_exec}\n"
         "  {v_add_nc_u32} {d}, s13, {d}", lambda a, b, c, x, y: np.full_like(a, 6)),
    Case("loop", "  s_mov_b32 s13, 0\n  v_mov_b32 {d}, 0\n.Lloop_top:\n  {v_add_nc_u32} {d}, {d}, v2\n"
         "  s_add_u32 s13, s13, 1\n  s_cmp_lt_u32 s13, 5\n  s_cbranch_scc1 .Lloop_top",
         lambda a, b, c, x, y: (a.astype(np.uint64) * 5).astype(U)),
    Case("vccz", "  v_mov_b32 {d}, 3\n  v_cmp_eq_u32 {vcc}, -1, v2\n  s_cbranch_vccz .Lskip_vccz\n"
         "  v_mov_b32 {d}, 4\n.Lskip_vccz:", lambda a, b, c, x, y: np.full_like(a, 3)),
    Case("vccnz", "  v_mov_b32 {d}, 3\n  v_cmp_eq_u32 {vcc}, v2, v2\n  s_cbranch_vccnz .Lskip_vccnz\n"
         "  v_mov_b32 {d}, 4\n.Lskip_vccnz:", lambda a, b, c, x, y: np.full_like(a, 3)),
    Case("setpc", "  s_getpc_b64 s[14:15]\n.Lpc_base:\n  s_add_u32 s14, s14, .Lpc_target-.Lpc_base\n"
         "  s_addc_u32 s15, s15, 0\n  v_mov_b32 {d}, 3\n  s_setpc_b64 s[14:15]\n  v_mov_b32 {d}, 4\n.Lpc_target:",
         lambda a, b, c, x, y: np.full_like(a, 3)),
    Case("call_return", "  s_getpc_b64 s[14:15]\n.Lcall_base:\n  s_add_u32 s14, s14, .Lcall_fn-.Lcall_base\n"
         "  s_addc_u32 s15, s15, 0\n  v_mov_b32 {d}, v2\n  s_swappc_b64 s[16:17], s[14:15]\n"
         "  s_branch .Lcall_after\n.Lcall_fn:\n  {v_add_nc_u32} {d}, 10, {d}\n  s_setpc_b64 s[16:17]\n.Lcall_after:",
         lambda a, b, c, x, y: a + U(10)),
    Case("cmpx", "  v_mov_b32 {d}, 0\n  s_mov_b64 s[18:19], exec\n  v_cmpx_lt_u32 {cmpx_dst}v2, v3\n  v_mov_b32 {d}, 9\n"
         "  s_mov_b64 exec, s[18:19]", lambda a, b, c, x, y: np.where(a < b, 9, 0), archs=("gfx90a", "gfx942", "gfx950")),
    Case("cmpx32", "  v_mov_b32 {d}, 0\n  s_mov_b32 s18, exec_lo\n  v_cmpx_lt_u32 v2, v3\n  v_mov_b32 {d}, 9\n"
         "  s_mov_b32 exec_lo, s18", lambda a, b, c, x, y: np.where(a < b, 9, 0), archs=("gfx1100", "gfx1201")),
]


@pytest.fixture(scope="module")
def control(toolchain, co_dir):
    cache = {}

    def get(arch):
        if arch not in cache:
            require_arch(toolchain, arch)
            cases = [c for c in CONTROL_CASES if c.archs is None or arch in c.archs]
            cases = [Case(c.name, c.asm.replace("{cmpx_dst}", "vcc, "), c.expect, c.archs) for c in cases]
            specs = [lane_kernel(arch, "control", cases), _ids_kernel(arch), *_error_kernels(arch)]
            co = build(toolchain, co_dir, arch, specs, name="control")
            cache[arch] = (Emulator(co, toolchain=toolchain, max_instructions_per_wave=2000), cases)
        return cache[arch]
    return get


@pytest.mark.parametrize("arch", ALL_ARCHS)
def test_exec_masking_and_branches(control, arch):
    emu, cases = control(arch)
    lanes = emu.kernel("control").lanes
    rng = np.random.default_rng(3)
    a, b, c = (rng.integers(0, 1000, lanes).astype(U) for _ in range(3))
    res = run_lanes(emu, "control", len(cases), a, b, c)
    for k, case in enumerate(cases):
        np.testing.assert_array_equal(res[k], np.asarray(case.expect(a, b, c, 0, 0), dtype=U), err_msg=case.name)


_IDS_BODY = """
  {s_load_b128} s[20:23], s[0:1], 0x0
  {wait_smem}
{wg_ids}
  s_mul_i32 s13, s12, s23
  s_add_u32 s13, s13, s11
  s_mul_i32 s13, s13, s22
  s_add_u32 s13, s13, s10
  v_and_b32 v5, 0x3ff, v0
  v_bfe_u32 v6, v0, 10, 10
  v_mov_b32 v7, {block_x}
  v_mad_u32_u24 v5, v6, v7, v5
  s_mul_i32 s13, s13, {threads}
  {v_add_nc_u32} v5, s13, v5
  v_lshlrev_b32 v5, 4, v5
  v_mov_b32 v8, v0
  v_mov_b32 v9, s10
  v_mov_b32 v10, s11
  v_mov_b32 v11, s12
  global_store_{b128} v5, v[8:11], s[20:21]
  s_endpgm
"""
_WG_IDS = {
    "sgpr": "  s_mov_b32 s10, s2\n  s_mov_b32 s11, s3\n  s_mov_b32 s12, s4",
    "ttmp": "  s_mov_b32 s10, ttmp9\n  s_and_b32 s11, ttmp7, 0xffff\n  s_lshr_b32 s12, ttmp7, 16",
}
BLOCK = (5, 7)


def _ids_kernel(arch: str) -> KernelSpec:
    body = _IDS_BODY.replace("{wg_ids}", _WG_IDS["ttmp" if arch == "gfx1201" else "sgpr"])
    body = body.replace("{block_x}", str(BLOCK[0])).replace("{threads}", str(BLOCK[0] * BLOCK[1]))
    body = body.replace("{b128}", "dwordx4" if arch.startswith("gfx9") else "b128")
    return KernelSpec("ids", dialect(arch, body), (ptr("out"), u32("gx"), u32("gy")), workitem_dims=1,
                      max_threads=64, sgprs=32, vgprs=16)


@pytest.mark.parametrize("arch", BASE_ARCHS)
def test_dispatch_state_workgroup_and_thread_ids(control, arch):
    emu, _ = control(arch)
    grid = (3, 2, 2)
    threads = BLOCK[0] * BLOCK[1]
    mem = DeviceMemory()
    out = mem.alloc(16 * threads * 12)
    stats = emu.launch("ids", grid=grid, block=(*BLOCK, 1), kernargs=struct.pack("<QII", out, *grid[:2]),
                       memory=mem)
    lanes = emu.kernel("ids").lanes
    assert stats.workgroups == 12 and stats.waves == 12 * -(-threads // lanes)
    got = mem.array(out, np.uint32, 4 * threads * 12).reshape(2, 2, 3, BLOCK[1], BLOCK[0], 4)
    for z in range(2):
        for y in range(2):
            for x in range(3):
                for ty in range(BLOCK[1]):
                    for tx in range(BLOCK[0]):
                        assert tuple(got[z, y, x, ty, tx]) == (tx | (ty << 10), x, y, z), (z, y, x, ty, tx)


def test_only_selected_workgroups_run(control):
    emu, _ = control("gfx942")
    mem = DeviceMemory()
    threads = BLOCK[0] * BLOCK[1]
    out = mem.alloc(16 * threads * 4, fill=0xEE)
    emu.launch("ids", grid=(2, 2, 1), block=(*BLOCK, 1), kernargs=struct.pack("<QII", out, 2, 2), memory=mem,
               workgroups=[(1, 1, 0)])
    got = mem.array(out, np.uint32).reshape(4, threads, 4)
    assert (got[:3] == 0xEEEEEEEE).all()
    assert (got[3, :, 1:] == [1, 1, 0]).all()


def _error_kernels(arch: str) -> list[KernelSpec]:
    return [
        KernelSpec("unknown", "  s_mov_b32 s10, 1\n  s_getreg_b32 s11, hwreg(HW_REG_MODE)\n  s_endpgm", ()),
        KernelSpec("endless", ".Lforever:\n  s_branch .Lforever\n  s_endpgm", ()),
        KernelSpec("no_end", "  s_mov_b32 s10, 1", ()),
        KernelSpec("too_few_vgprs", "  v_mov_b32 v40, 0\n  s_endpgm", (), vgprs=8),
        KernelSpec("one_arg", "  s_endpgm", (u32("x"),)),
        # A branch label without the .L prefix is a symbol in the code object, not a kernel boundary.
        KernelSpec("plain_label", "  s_mov_b32 s10, 0\nlabel_emu_loop:\n  s_add_u32 s10, s10, 1\n"
                   "  s_cmp_lt_u32 s10, 3\n  s_cbranch_scc1 label_emu_loop\n  s_endpgm", ()),
    ]


@pytest.mark.parametrize("arch", BASE_ARCHS)
def test_unknown_instruction_is_an_error_naming_it(control, arch):
    emu, _ = control(arch)
    assert "s_getreg_b32" in emu.problems("unknown")
    with pytest.raises(UnsupportedInstruction, match=r"s_getreg_b32.*not emulated") as info:
        emu.launch("unknown", grid=(1, 1, 1), block=(1, 1, 1), kernargs=b"", memory=DeviceMemory())
    assert "kernel unknown" in str(info.value) and "wave 0" in str(info.value)


@pytest.mark.parametrize("arch", BASE_ARCHS)
def test_symbols_inside_a_kernel_do_not_split_it(control, arch):
    emu, _ = control(arch)
    assert emu.kernel("plain_label").program.instrs[-1].mnemonic == "s_endpgm"
    stats = emu.launch("plain_label", grid=(1, 1, 1), block=(1, 1, 1), kernargs=b"", memory=DeviceMemory())
    assert stats.instructions == 1 + 3 * 3 + 1


def test_kernel_errors_are_reported(control):
    emu, _ = control("gfx942")
    run = lambda name, args=b"": emu.launch(name, grid=(1, 1, 1), block=(64, 1, 1), kernargs=args,  # noqa: E731
                                            memory=DeviceMemory())
    with pytest.raises(EmulatorError, match="did not finish within 2000 instructions"):
        run("endless")
    with pytest.raises(CodeObjectError, match="without s_endpgm"):
        run("no_end")
    with pytest.raises(CodeObjectError, match="v40 is outside the 8 VGPRs"):
        run("too_few_vgprs")
    with pytest.raises(LaunchError, match="12 bytes of kernel arguments"):
        run("one_arg", b"\0" * 12)
    with pytest.raises(LaunchError, match="max_flat_workgroup_size"):
        emu.launch("one_arg", grid=(1, 1, 1), block=(512, 1, 1), kernargs=b"", memory=DeviceMemory())


def test_large_code_objects_are_disassembled_per_kernel(control, monkeypatch, toolchain):
    from tensile_lite.emu import emulator as emulator_module

    emu, cases = control("gfx942")
    monkeypatch.setattr(emulator_module, "_WHOLE_TEXT_LIMIT", 0)
    fresh = Emulator(emu.path, toolchain=toolchain)
    whole = [ins.text for ins in emu.kernel("control").program.instrs]
    alone = [ins.text for ins in fresh.kernel("control").program.instrs]
    assert alone == whole and fresh._disassembly == {}
    rng = np.random.default_rng(3)
    a, b, c = (rng.integers(0, 1000, 64).astype(U) for _ in range(3))
    assert np.array_equal(run_lanes(fresh, "control", len(cases), a, b, c), run_lanes(emu, "control", len(cases), a, b, c))
