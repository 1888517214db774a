"""A hand-written GEMM macro-tile kernel for CDNA (wave64, MFMA 16x16x16 f16): the emulator's end-to-end
check and its benchmark workload until the GEMM writer exists.

D (f32, column-major, ld = M) = A (f16, row i holds its K values contiguously) x B (f16, column j holds
its K values contiguously). 256 threads = 2 x 2 waves, each wave a 64x64 quarter of the 128x128 tile,
DepthU 16: buffer loads -> LDS -> ds_read_b64 -> 16 MFMAs per wave per step, accumulators in AGPRs.
"""

from __future__ import annotations

import struct

import numpy as np

from tensile_lite.emu import DeviceMemory, Emulator, LaunchStats
from tests.emu.kernels import KernelSpec, ptr, u32

MFMA = {"gfx90a": "v_mfma_f32_16x16x16f16", "gfx942": "v_mfma_f32_16x16x16_f16",
        "gfx950": "v_mfma_f32_16x16x16_f16"}
TILE = 128
DEPTH_U = 16


def gemm_tile_kernel(arch: str, name: str = "gemm_tile") -> KernelSpec:
    mfma = MFMA[arch]
    lines = [
        "  s_load_dwordx8 s[4:11], s[0:1], 0x0",      # D, A, B, (M, N)
        "  s_load_dword s12, s[0:1], 0x20",          # K
        "  s_waitcnt lgkmcnt(0)",
        "  s_lshl_b32 s29, s12, 1",                  # row pitch in bytes: K * 2
        "  s_lshl_b32 s13, s2, 7",                   # row0 = wg_x * 128
        "  s_lshl_b32 s14, s3, 7",                   # col0 = wg_y * 128
        # SRD A: the tile's 128 rows of A
        "  s_mul_i32 s15, s13, s29",
        "  s_add_u32 s16, s6, s15",
        "  s_addc_u32 s17, s7, 0",
        "  s_and_b32 s17, s17, 0xffff",
        "  s_lshl_b32 s18, s29, 7",
        "  s_mov_b32 s19, 0x20000",
        # SRD B: the tile's 128 columns of B
        "  s_mul_i32 s15, s14, s29",
        "  s_add_u32 s20, s8, s15",
        "  s_addc_u32 s21, s9, 0",
        "  s_and_b32 s21, s21, 0xffff",
        "  s_lshl_b32 s22, s29, 7",
        "  s_mov_b32 s23, 0x20000",
        # SRD D: all of D
        "  s_mov_b32 s24, s4",
        "  s_and_b32 s25, s5, 0xffff",
        "  s_mul_i32 s26, s10, s11",
        "  s_lshl_b32 s26, s26, 2",
        "  s_mov_b32 s27, 0x20000",
        # global read offset: row (t >> 1) of the tile, 16 bytes (t & 1) into its DepthU slice
        "  v_lshrrev_b32 v1, 1, v0",
        "  v_mul_lo_u32 v1, v1, s29",
        "  v_and_b32 v2, 1, v0",
        "  v_lshl_add_u32 v1, v2, 4, v1",
        "  v_lshlrev_b32 v2, 4, v0",                 # LDS write address: t * 16
        # LDS read addresses: (wave row/col * 64 + l % 16) * 32 + (l / 16) * 8
        "  v_lshrrev_b32 v30, 6, v0",                # wave id
        "  v_and_b32 v31, 1, v30",                   # wave row
        "  v_lshrrev_b32 v32, 1, v30",               # wave column
        "  v_and_b32 v33, 63, v0",                   # lane
        "  v_and_b32 v34, 15, v33",
        "  v_lshrrev_b32 v35, 4, v33",
        "  v_lshl_add_u32 v3, v31, 6, v34",
        "  v_lshlrev_b32 v3, 5, v3",
        "  v_lshl_add_u32 v3, v35, 3, v3",
        "  v_lshl_add_u32 v28, v32, 6, v34",
        "  v_lshlrev_b32 v28, 5, v28",
        "  v_lshl_add_u32 v28, v35, 3, v28",
        "  v_add_u32 v28, 0x1000, v28",
        # store offset: ((col0 + wc*64 + l%16) * M + row0 + wr*64 + 4*(l/16)) * 4
        "  v_lshl_add_u32 v36, v32, 6, v34",
        "  v_add_u32 v36, s14, v36",
        "  v_mul_lo_u32 v36, v36, s10",
        "  v_lshl_add_u32 v37, v31, 6, s13",
        "  v_lshl_add_u32 v37, v35, 2, v37",
        "  v_add_u32 v36, v36, v37",
        "  v_lshlrev_b32 v29, 2, v36",
        *[f"  v_accvgpr_write_b32 a{r}, 0" for r in range(64)],
        "  s_lshr_b32 s28, s12, 4",                  # K / DepthU iterations
        "  s_mov_b32 s30, 0",                        # byte offset of the current DepthU slice
        ".Lloop:",
        "  buffer_load_dwordx4 v[4:7], v1, s[16:19], s30 offen",
        "  buffer_load_dwordx4 v[8:11], v1, s[20:23], s30 offen",
        "  s_waitcnt vmcnt(0)",
        "  s_barrier",
        "  ds_write_b128 v2, v[4:7]",
        "  ds_write_b128 v2, v[8:11] offset:4096",
        "  s_waitcnt lgkmcnt(0)",
        "  s_barrier",
        *[f"  ds_read_b64 v[{12 + 2 * m}:{13 + 2 * m}], v3 offset:{512 * m}" for m in range(4)],
        *[f"  ds_read_b64 v[{20 + 2 * n}:{21 + 2 * n}], v28 offset:{512 * n}" for n in range(4)],
        "  s_waitcnt lgkmcnt(0)",
        *[f"  {mfma} a[{4 * (4 * m + n)}:{4 * (4 * m + n) + 3}], v[{12 + 2 * m}:{13 + 2 * m}], "
          f"v[{20 + 2 * n}:{21 + 2 * n}], a[{4 * (4 * m + n)}:{4 * (4 * m + n) + 3}]"
          for m in range(4) for n in range(4)],
        "  s_add_u32 s30, s30, 32",
        "  s_sub_u32 s28, s28, 1",
        "  s_cmp_lg_u32 s28, 0",
        "  s_cbranch_scc1 .Lloop",
        "  s_nop 7",
        "  s_nop 7",
    ]
    for n in range(4):
        lines.append(f"  s_mul_i32 s31, s10, {64 * n}")   # column block n: 16 * M * 4 bytes
        for m in range(4):
            for r in range(4):
                acc = 4 * (4 * m + n) + r
                lines.append(f"  v_accvgpr_read_b32 v40, a{acc}")
                lines.append(f"  buffer_store_dword v40, v29, s[24:27], s31 offen offset:{(16 * m + r) * 4}")
    lines.append("  s_endpgm")
    return KernelSpec(name, "\n".join(lines), (ptr("d"), ptr("a"), ptr("b"), u32("m"), u32("n"), u32("k")),
                      vgprs=48, agprs=64, sgprs=40, lds=8192, wg_ids=(1, 1, 0), max_threads=256)


def run_gemm_tile(emu: Emulator, m: int, n: int, k: int, seed: int = 0, name: str = "gemm_tile",
                  workgroups: list[tuple[int, int, int]] | None = None
                  ) -> tuple[np.ndarray, np.ndarray, LaunchStats]:
    """(emulated D, numpy D, launch stats) for random small-integer f16 inputs (exact sums)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, (m, k)).astype(np.float16)
    b = rng.integers(-2, 3, (k, n)).astype(np.float16)
    mem = DeviceMemory()
    d = mem.alloc(4 * m * n, fill=0xFF)
    pa = mem.alloc(np.ascontiguousarray(a))            # row i: K contiguous values
    pb = mem.alloc(np.ascontiguousarray(b.T))          # column j: K contiguous values
    stats = emu.launch(name, grid=(m // TILE, n // TILE, 1), block=(256, 1, 1),
                       kernargs=struct.pack("<QQQIII", d, pa, pb, m, n, k), memory=mem, workgroups=workgroups)
    got = mem.array(d, np.float32, m * n).reshape(n, m).T
    want = a.astype(np.float64) @ b.astype(np.float64)
    return got, want, stats
