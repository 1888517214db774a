"""Buffer loads/stores with range checks, LDS, barriers across waves, atomics and s_waitcnt hazards."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from tensile_lite.emu import DeviceMemory, Emulator, HazardError, MemoryFault
from tests.emu.conftest import ALL_ARCHS, BASE_ARCHS
from tests.emu.kernels import KernelSpec, dialect, emulators_per_arch, ptr, u32

U = np.uint32

_STORE_ROW = """
  {global_store_b32} v1, v%d, s[4:5]
  {s_add_co_u32} s4, s4, 0x100
  {s_addc_co_u32} s5, s5, 0
"""

_BUFFER = """
  {s_load_b128} s[4:7], s[0:1], 0x0
  {s_load_b128} s[8:11], s[0:1], 0x10
  {wait_smem}
  s_mov_b32 s12, s6
  s_and_b32 s13, s7, 0xffff
  s_mov_b32 s14, s8
  s_mov_b32 s15, {srd3}
  {s_add_co_u32} s16, s4, 0x700
  {s_addc_co_u32} s17, s5, 0
  s_and_b32 s17, s17, 0xffff
  s_mov_b32 s18, s10
  s_mov_b32 s19, {srd3}
  v_lshlrev_b32 v1, 2, v0
  v_lshlrev_b32 v2, 4, v0
  {buffer_load_b32} v10, v1, s[12:15], s9 offen
  {buffer_load_b128} v[12:15], v2, s[12:15], s9 offen
  v_and_b32 v3, 1, v0
  v_cmp_eq_u32 {vcc}, 1, v3
  s_nop 1
  v_mov_b32 v4, 0x80000000
  v_cndmask_b32 v5, v1, v4, {vcc}
  {buffer_load_b32} v11, v5, s[12:15], {null_soff} offen
  {buffer_load_d16_b16} v16, v1, s[12:15], {null_soff} offen offset:2
  {buffer_load_d16_hi_b16} v16, v1, s[12:15], {null_soff} offen
  {wait_vmem}
  {v_add_nc_u32} v7, 1, v0
  {buffer_store_b32} v7, v1, s[16:19], {null_soff} offen
""" + "".join(_STORE_ROW % r for r in (10, 12, 13, 14, 15, 11, 16)) + "  s_endpgm\n"

_LDS = """
  {s_load_b64} s[4:5], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  v_lshlrev_b32 v2, 4, v0
  v_mov_b32 v4, v0
  {v_add_nc_u32} v5, 0x64, v0
  {v_add_nc_u32} v6, 0xc8, v0
  {v_add_nc_u32} v7, 0x12c, v0
  {ds_store_b128} v2, v[4:7]
  {wait_lds}
  v_xor_b32 v3, 1, v0
  v_lshlrev_b32 v3, 4, v3
  {ds_load_b64} v[8:9], v3 offset:8
  {ds_load_2addr_b32} v[10:11], v2 offset0:1 offset1:3
  {v_add_nc_u32} v13, 1, v0
  v_lshlrev_b32 v13, 2, v13
  ds_bpermute_b32 v12, v13, v4
  {wait_lds}
  {wait_smem}
""" + "".join(_STORE_ROW % r for r in (8, 9, 10, 11, 12)) + "  s_endpgm\n"

_BARRIER = """
  {s_load_b64} s[4:5], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  {ds_store_b32} v1, v0
{wait_before}
{barrier_here}
  {v_add_nc_u32} v2, {lanes}, v0
  v_and_b32 v2, 0xff, v2
  v_lshlrev_b32 v2, 2, v2
  {ds_load_b32} v3, v2
  {wait_lds}
  {wait_smem}
  {global_store_b32} v1, v3, s[4:5]
  s_endpgm
"""

_ATOMICS = """
  {s_load_b64} s[4:5], s[0:1], 0x0
  {wait_smem}
  v_mov_b32 v1, 0
  v_mov_b32 v2, 1
  {global_atomic_add_u32} v1, v2, s[4:5]
  v_mov_b32 v3, 4
  v_mov_b32 v4, 0.5
  global_atomic_add_f32 v3, v4, s[4:5]
  v_mov_b32 v5, 8
  {v_add_nc_u32} v6, 1, v0
  v_mov_b32 v7, 0
  {global_atomic_cmpswap_b32} v8, v5, v[6:7], s[4:5] {atomic_rtn}
  {wait_vmem}
  v_lshlrev_b32 v9, 2, v0
  {global_store_b32} v9, v8, s[4:5] offset:64
  s_endpgm
"""

_LDS_OOB = """
  {s_load_b64} s[4:5], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  v_lshlrev_b32 v2, 4, v0
  {v_add_nc_u32} v3, 7, v0
  {ds_store_b32} v2, v3
  {wait_lds}
  {ds_load_b32} v4, v2
  {wait_lds}
  {wait_smem}
  {global_store_b32} v1, v4, s[4:5]
  s_endpgm
"""

_LOAD2 = """
  {s_load_b64} s[4:5], s[0:1], 0x0
  {wait_smem}
  v_lshlrev_b32 v1, 2, v0
  {global_load_b32} v5, v1, s[4:5]
  {global_load_b32} v6, v1, s[4:5] offset:256
"""
_HAZARDS = {
    "read_no_wait": _LOAD2 + "  {v_add_nc_u32} v7, 1, v5\n  s_endpgm\n",
    "partial_ok": _LOAD2 + "  {wait_vmem1}\n  {v_add_nc_u32} v7, 1, v5\n  {wait_vmem}\n  {v_add_nc_u32} v7, 1, v6\n"
                           "  s_endpgm\n",
    "partial_bad": _LOAD2 + "  {wait_vmem1}\n  {v_add_nc_u32} v7, 1, v6\n  s_endpgm\n",
    "smem_no_wait": "  {s_load_b64} s[4:5], s[0:1], 0x0\n  s_add_u32 s6, s4, 1\n  s_endpgm\n",
    "smem_twice": "  {s_load_b64} s[4:5], s[0:1], 0x0\n  {s_load_b64} s[4:5], s[0:1], 0x0\n  {wait_smem}\n"
                  "  s_endpgm\n",
}


def _specs(arch: str) -> list[KernelSpec]:
    lanes = 32 if arch.startswith("gfx1") else 64
    barrier = dialect(arch, "{barrier}")

    def barrier_body(wait: bool, with_barrier: bool) -> str:
        body = _BARRIER.replace("{lanes}", str(lanes))
        body = body.replace("{wait_before}", "  {wait_lds}" if wait else "")
        body = body.replace("{barrier_here}", "  " + barrier if with_barrier else "")
        return dialect(arch, body)

    return [
        KernelSpec("buffer", dialect(arch, _BUFFER), (ptr("out"), ptr("in"), u32("n"), u32("soff"), u32("m"),
                                                       u32("pad")), max_threads=64),
        KernelSpec("lds", dialect(arch, _LDS), (ptr("out"),), lds=64 * 16, max_threads=64),
        KernelSpec("barrier", barrier_body(True, True), (ptr("out"),), lds=1024),
        KernelSpec("barrier_missing", barrier_body(True, False), (ptr("out"),), lds=1024),
        KernelSpec("barrier_unwaited", barrier_body(False, True), (ptr("out"),), lds=1024),
        KernelSpec("atomics", dialect(arch, _ATOMICS), (ptr("buf"),), max_threads=64),
        KernelSpec("lds_oob", dialect(arch, _LDS_OOB), (ptr("out"),), lds=256, max_threads=64),
        *(KernelSpec(name, dialect(arch, body), (ptr("buf"),), max_threads=64) for name, body in _HAZARDS.items()),
    ]


@pytest.fixture(scope="module")
def memory_emulators(toolchain, co_dir):
    return emulators_per_arch(toolchain, co_dir, _specs, "memory")


@pytest.mark.parametrize("arch", ALL_ARCHS)
def test_buffer_range_checks(memory_emulators, arch):
    emu = memory_emulators(arch)
    lanes = emu.kernel("buffer").lanes
    n, soff, m = lanes * 8 + 4, 8, 100
    inp = (np.arange(512, dtype=U) + 1000) | (np.arange(512, dtype=U) << 16)
    mem = DeviceMemory()
    out = mem.alloc(4 * 64 * 8, fill=0xEE)
    src = mem.alloc(inp)
    emu.launch("buffer", grid=(1, 1, 1), block=(lanes, 1, 1), kernargs=struct.pack("<QQIIII", out, src, n, soff, m, 0),
               memory=mem)
    rows = mem.array(out, U, 64 * 8).reshape(8, 64)[:, :lanes]
    lane = np.arange(lanes)
    limit = n - soff
    # dword loads: in range when offset + 4 <= num_records - soffset; data at soffset + offset.
    np.testing.assert_array_equal(rows[0], np.where(lane * 4 + 4 <= limit, inp[(lane * 4 + soff) // 4], 0))
    for k in range(4):
        off = lane * 16 + 4 * k
        np.testing.assert_array_equal(rows[1 + k], np.where(off + 4 <= limit, inp[(off + soff) // 4], 0),
                                      err_msg=f"dwordx4 component {k}")
    # 0x80000000 offsets are out of range: odd lanes read 0.
    np.testing.assert_array_equal(rows[5], np.where(lane % 2 == 1, 0, np.where(lane * 4 + 4 <= n, inp[lane], 0)))
    # d16 loads fill one half each, here swapping the halves of each dword; on CDNA (SRAM ECC) the
    # second load zeroes the half the first one wrote (hardware_semantics.md §1).
    high = inp[lane] << U(16)
    swapped = high if arch.startswith("gfx9") else high | (inp[lane] >> U(16))
    np.testing.assert_array_equal(rows[6], swapped)
    # stores past num_records are dropped.
    np.testing.assert_array_equal(rows[7], np.where(lane * 4 + 4 <= m, lane + 1, 0xEEEEEEEE))


@pytest.mark.parametrize("arch", ALL_ARCHS)
def test_lds_reads_writes_and_permute(memory_emulators, arch):
    emu = memory_emulators(arch)
    lanes = emu.kernel("lds").lanes
    mem = DeviceMemory()
    out = mem.alloc(4 * 64 * 5)
    emu.launch("lds", grid=(1, 1, 1), block=(lanes, 1, 1), kernargs=struct.pack("<Q", out), memory=mem)
    rows = mem.array(out, U, 64 * 5).reshape(5, 64)[:, :lanes]
    lane = np.arange(lanes)
    np.testing.assert_array_equal(rows[0], (lane ^ 1) + 200)
    np.testing.assert_array_equal(rows[1], (lane ^ 1) + 300)
    np.testing.assert_array_equal(rows[2], lane + 100)
    np.testing.assert_array_equal(rows[3], lane + 300)
    np.testing.assert_array_equal(rows[4], (lane + 1) % lanes)


@pytest.mark.parametrize("arch", ALL_ARCHS)
def test_barrier_synchronises_waves(memory_emulators, arch):
    emu = memory_emulators(arch)
    lanes = emu.kernel("barrier").lanes
    mem = DeviceMemory()
    out = mem.alloc(4 * 256)
    stats = emu.launch("barrier", grid=(1, 1, 1), block=(256, 1, 1), kernargs=struct.pack("<Q", out), memory=mem)
    assert stats.waves == 256 // lanes
    np.testing.assert_array_equal(mem.array(out, U, 256), (np.arange(256) + lanes) % 256)


@pytest.mark.parametrize("arch", BASE_ARCHS)
def test_lds_race_and_unwaited_store_are_reported(memory_emulators, arch):
    emu = memory_emulators(arch)
    mem = DeviceMemory()
    out = mem.alloc(4 * 256)
    with pytest.raises(HazardError, match="LDS race"):
        emu.launch("barrier_missing", grid=(1, 1, 1), block=(256, 1, 1), kernargs=struct.pack("<Q", out), memory=mem)
    with pytest.raises(HazardError, match=r"LDS store .* has not been waited for"):
        emu.launch("barrier_unwaited", grid=(1, 1, 1), block=(256, 1, 1), kernargs=struct.pack("<Q", out), memory=mem)


@pytest.mark.parametrize("arch", ALL_ARCHS)
def test_atomics(memory_emulators, arch):
    emu = memory_emulators(arch)
    lanes = emu.kernel("atomics").lanes
    mem = DeviceMemory()
    buf = mem.alloc(64 + 4 * 64)
    emu.launch("atomics", grid=(1, 1, 1), block=(lanes, 1, 1), kernargs=struct.pack("<Q", buf), memory=mem)
    words = mem.array(buf, U, 16 + 64)
    assert words[0] == lanes
    assert words[1:2].view(np.float32)[0] == 0.5 * lanes
    assert words[2] == 1  # only lane 0 found the compare value 0
    np.testing.assert_array_equal(words[16:16 + lanes], np.r_[0, np.ones(lanes - 1)])


@pytest.mark.parametrize("arch", BASE_ARCHS)
def test_waitcnt_hazards(memory_emulators, arch):
    emu = memory_emulators(arch)
    lanes = emu.kernel("read_no_wait").lanes

    def run(name):
        mem = DeviceMemory()
        buf = mem.alloc(1024)
        emu.launch(name, grid=(1, 1, 1), block=(lanes, 1, 1), kernargs=struct.pack("<Q", buf), memory=mem)

    with pytest.raises(HazardError, match=r"v5 read before the load .* was waited for"):
        run("read_no_wait")
    run("partial_ok")
    with pytest.raises(HazardError, match=r"v6 read before the load"):
        run("partial_bad")
    with pytest.raises(HazardError, match=r"s4 read before the load"):
        run("smem_no_wait")
    with pytest.raises(HazardError, match=r"s4 is the destination .* may complete later"):
        run("smem_twice")


def test_unmapped_address_is_a_fault(memory_emulators):
    emu = memory_emulators("gfx942")
    mem = DeviceMemory()
    buf = mem.alloc(16)  # the kernel's second load reads 256 bytes further
    with pytest.raises(MemoryFault, match=r"not inside any allocation|run past the end"):
        emu.launch("partial_ok", grid=(1, 1, 1), block=(64, 1, 1), kernargs=struct.pack("<Q", buf), memory=mem)


@pytest.mark.parametrize("arch", BASE_ARCHS)
def test_lds_out_of_bounds(memory_emulators, arch, toolchain):
    emu = memory_emulators(arch)
    lanes = emu.kernel("lds_oob").lanes
    mem = DeviceMemory()
    out = mem.alloc(4 * 64)
    args = struct.pack("<Q", out)
    with pytest.raises(MemoryFault, match=r"lane 16 accesses LDS bytes 256..259, outside the 256 bytes"):
        emu.launch("lds_oob", grid=(1, 1, 1), block=(lanes, 1, 1), kernargs=args, memory=mem)
    lenient = Emulator(emu.path, toolchain=toolchain, lds_out_of_bounds="hardware")
    lenient.launch("lds_oob", grid=(1, 1, 1), block=(lanes, 1, 1), kernargs=args, memory=mem)
    lane = np.arange(lanes)
    np.testing.assert_array_equal(mem.array(out, U, lanes), np.where(lane * 16 < 256, lane + 7, 0))
