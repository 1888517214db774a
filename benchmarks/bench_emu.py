"""Issue 8 figures: how fast the CPU emulator runs kernels.

    python -m benchmarks.bench_emu            # writes benchmarks/results/emu-<date>.json

Workloads (all assembled with the real toolchain):
- gemm-tile: one 256-thread workgroup of a hand-written MFMA GEMM tile, 128x128, K=256 (gfx942), checked
  against numpy; and, when the GEMM writer is there, one workgroup of its 128x128 K=256 HHS kernel;
- synthetic loops of one instruction class each (VALU, SALU, LDS, buffer loads, MFMA/WMMA), 256 threads,
  giving emulated instructions per second per class.
"""

from __future__ import annotations

import datetime
import json
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.scenarios import Context, Scenario, Skip

ROOT = Path(__file__).resolve().parents[1]

ITERATIONS = 100
# The machine is shared: report the fastest of a few runs.
REPEATS = 3

_LOOP = """
  {s_load_b64} s[4:5], s[0:1], 0x0
  {wait_smem}
  s_mov_b32 s12, {iterations}
  v_mov_b32 v1, v0
  v_mov_b32 v2, 1.0
  v_mov_b32 v3, 0.5
  v_lshlrev_b32 v20, 4, v0
  {setup}
.Lbench_loop:
{body}
  s_sub_u32 s12, s12, 1
  s_cmp_lg_u32 s12, 0
  s_cbranch_scc1 .Lbench_loop
  s_endpgm
"""
_BODIES = {
    "valu": "\n".join(["  {v_add_nc_u32} v1, v1, v0", "  v_mul_lo_u32 v4, v1, v1", "  v_fma_f32 v2, v2, v3, 1.0",
                       "  v_cvt_f32_u32 v5, v4", "  v_and_b32 v6, 0xff, v4", "  v_lshlrev_b32 v7, 2, v6",
                       "  v_max_u32 v8, v6, v7", "  v_cndmask_b32 v9, v7, v8, {vcc}", "  v_xor_b32 v10, v9, v1",
                       "  v_mul_f32 v11, v2, v5"]),
    "salu": "\n".join(["  s_add_u32 s13, s13, s12", "  s_mul_i32 s14, s13, 3", "  s_lshl_b32 s15, s14, 2",
                       "  s_and_b32 s16, s15, 0xffff", "  s_cselect_b32 s17, s16, s15", "  s_min_u32 s18, s17, s13",
                       "  s_bfe_u32 s19, s18, 0x40004", "  s_xor_b32 s20, s19, s13", "  s_sub_u32 s21, s20, 1",
                       "  s_max_i32 s22, s21, s13"]),
    "lds": "\n".join(["  {ds_store_b128} v20, v[4:7]", "  {ds_load_b64} v[8:9], v20 offset:8",
                      "  {ds_load_b32} v10, v20 offset:4", "  {wait_lds}"]),
    "buffer": "\n".join(["  {buffer_load_b128} v[4:7], v20, s[24:27], {null_soff} offen",
                         "  {buffer_load_b32} v8, v20, s[24:27], {null_soff} offen offset:4", "  {wait_vmem}"]),
}
_SETUP = {
    "lds": "  s_mov_b32 s13, 0",
    "buffer": "  s_mov_b32 s24, s4\n  s_and_b32 s25, s5, 0xffff\n  s_mov_b32 s26, 0x1000\n  s_mov_b32 s27, {srd3}",
}
_MATRIX = {
    "gfx942": ("\n".join([*(f"  v_mov_b32 v{r}, 1.0" for r in range(12, 16)),
                           *(f"  v_accvgpr_write_b32 a{r}, 0" for r in range(64))]),
               "\n".join(f"  v_mfma_f32_16x16x16_f16 a[{4 * k}:{4 * k + 3}], v[12:13], v[14:15], a[{4 * k}:{4 * k + 3}]"
                         for k in range(16))),
    "gfx1100": ("\n".join(f"  v_mov_b32 v{r}, 1.0" for r in (*range(24, 40), *range(40, 56))),
                "\n".join(f"  v_wmma_f32_16x16x16_f16 v[{24 + 8 * (k % 2)}:{31 + 8 * (k % 2)}], v[40:47], v[48:55], "
                          f"v[{24 + 8 * (k % 2)}:{31 + 8 * (k % 2)}]" for k in range(16))),
}


def _loop_specs(arch: str):
    from tests.emu.kernels import KernelSpec, dialect, ptr

    specs = []
    bodies = dict(_BODIES)
    setups = dict(_SETUP)
    setups["matrix"], bodies["matrix"] = _MATRIX[arch]
    for name, body in bodies.items():
        text = _LOOP.replace("{body}", body).replace("{setup}", setups.get(name, ""))
        text = dialect(arch, text.replace("{iterations}", str(ITERATIONS)))
        specs.append(KernelSpec(name, text, (ptr("buf"),), vgprs=64, agprs=64, sgprs=40, lds=4096 * 4,
                                max_threads=256))
    return specs


def _measure_loops(tc, work: Path, arch: str) -> dict[str, dict[str, Any]]:
    from tensile_lite.emu import DeviceMemory, Emulator
    from tests.emu.kernels import build

    emu = Emulator(build(tc, work, arch, _loop_specs(arch), name=f"bench-{arch}"), toolchain=tc)
    parts = {}
    for name in ("valu", "salu", "lds", "buffer", "matrix"):
        mem = DeviceMemory()
        buf = mem.alloc(1 << 16)
        lanes = emu.kernel(name).lanes
        runs = [emu.launch(name, grid=(1, 1, 1), block=(256, 1, 1), kernargs=struct.pack("<Q", buf), memory=mem)
                for _ in range(REPEATS)]
        best = min(r.seconds for r in runs)
        parts[f"{arch}-{name}"] = {"instructions": runs[0].instructions, "wall_s": round(best, 4),
                                   "instructions_per_s": round(runs[0].instructions / best), "waves": runs[0].waves,
                                   "lanes": lanes}
    return parts


def _measure_gemm(tc, work: Path) -> dict[str, Any]:
    from tensile_lite.emu import Emulator
    from tests.emu.gemm_tile import gemm_tile_kernel, run_gemm_tile
    from tests.emu.kernels import build

    t0 = time.perf_counter()
    emu = Emulator(build(tc, work, "gfx942", [gemm_tile_kernel("gfx942")], name="bench-gemm"), toolchain=tc)
    emu.kernel("gemm_tile")
    prepare = time.perf_counter() - t0
    runs = [run_gemm_tile(emu, 128, 128, 256) for _ in range(REPEATS)]
    got, want, stats = runs[0]
    best = min(r[2].seconds for r in runs)
    return {"arch": "gfx942", "tile": "128x128", "k": 256, "threads": 256, "waves": stats.waves,
            "instructions": stats.instructions, "wall_s": round(best, 4),
            "instructions_per_s": round(stats.instructions / best),
            "assemble_disassemble_compile_s": round(prepare, 3), "matches_numpy": bool(np.array_equal(got, want))}


def _measure_writer_gemm(tc, work: Path) -> dict[str, Any]:
    """The same figure for a kernel of the GEMM writer (tensile_lite.asm.gemm), when it is there."""
    try:
        from tensile_lite.emu import Emulator
        from tests.gemm import harness, solutions
    except ImportError as exc:
        return {"status": "skipped", "reason": f"GEMM writer not available: {exc}"}
    pt = solutions.problem_type("HHS", trans_a=True)
    sol = solutions.solution(pt, arch="gfx942", wave_tile=(4, 4), depth_u=64)
    built = harness.build(tc, sol, work)
    emu = Emulator(built.path, toolchain=tc)
    emu.kernel(built.name)
    walls = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        result = harness.run(built, harness.padded(pt, 128, 128, 256), alpha=1.5, beta=0.5, emulator=emu)
        walls.append(time.perf_counter() - t0)
    wall = min(walls)
    try:
        result.check()
        ok = True
    except AssertionError:
        ok = False
    return {"status": "ok", "kernel": built.name, "arch": "gfx942", "tile": "128x128", "k": 256,
            "threads": sol.num_threads, "instructions": result.instructions,
            "wall_s_with_host_setup": round(wall, 4), "matches_numpy": ok}


def measure() -> dict[str, Any]:
    from tensile_lite.codeobj.toolchain import find_toolchain
    from tensile_lite.errors import ToolchainError

    if str(ROOT) not in sys.path:  # the workloads reuse the hand-written test kernels in tests/emu
        sys.path.insert(0, str(ROOT))
    try:
        tc = find_toolchain()
    except ToolchainError as exc:
        raise Skip(str(exc)) from None
    with tempfile.TemporaryDirectory(prefix="bench-emu-") as tmp:
        work = Path(tmp)
        gemm = _measure_gemm(tc, work)
        writer = _measure_writer_gemm(tc, work)
        parts = {}
        for arch in ("gfx942", "gfx1100"):
            parts.update(_measure_loops(tc, work, arch))
    return {"metrics": {"wall_s": gemm["wall_s"], "gemm_tile_instructions_per_s": gemm["instructions_per_s"]},
            "parts": parts, "details": {"gemm_tile": gemm, "writer_gemm": writer, "toolchain": tc.describe(),
                                        "loop_iterations": ITERATIONS}}


def _scenario(_ctx: Context) -> Mapping[str, Any]:
    return measure()


SCENARIOS = (Scenario("emu", "CPU emulator: one 128x128 K=256 MFMA tile workgroup, and instructions/s per "
                      "instruction class", _scenario),)


def main() -> int:
    result = measure()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    result = {"scenario": "emu", "date": datetime.date.today().isoformat(), "commit": commit, **result}
    out = ROOT / "benchmarks" / "results" / f"emu-{result['date']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
