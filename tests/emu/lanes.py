"""A one-wave test-kernel frame: three per-lane inputs in v2, v3, v4 and two scalars in s8, s9; each
case writes its result to its own VGPR, which the epilogue stores as one row of the output.

Input layout: in[k * 64 + lane] for k = 0, 1, 2 (uint32). Output: out[case * 64 + lane].
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence

import attrs
import numpy as np

from tensile_lite.emu import DeviceMemory, Emulator
from tests.emu.kernels import KernelSpec, dialect, ptr, u32

FIRST_RESULT = 10

_PROLOGUE = """
  {s_load_b128} s[4:7], s[0:1], 0x0
  {s_load_b64} s[8:9], s[0:1], 0x10
  {wait_smem}
  v_lshlrev_b32 v1, 2, v0
  {global_load_b32} v2, v1, s[6:7]
  {global_load_b32} v3, v1, s[6:7] offset:256
  {global_load_b32} v4, v1, s[6:7] offset:512
  {wait_vmem}
"""
_STORE = """
  {global_store_b32} v1, v%d, s[4:5]
  {s_add_co_u32} s4, s4, 0x100
  {s_addc_co_u32} s5, s5, 0
"""


@attrs.frozen
class Case:
    """asm computes into {d} from v2, v3, v4 (a, b, c) and s8, s9 (x, y); may use v5-v9, s10-s19.

    expect(a, b, c, x, y) gives the expected uint32 lane values (a scalar broadcasts).
    """

    name: str
    asm: str
    expect: Callable[..., np.ndarray]
    archs: tuple[str, ...] | None = None  # None: every architecture


def lane_kernel(arch: str, name: str, cases: Sequence[Case]) -> KernelSpec:
    body = [dialect(arch, _PROLOGUE)]
    for k, case in enumerate(cases):
        d = f"v{FIRST_RESULT + k}"
        body.append(dialect(arch, case.asm.replace("{d}", d)))
    for k in range(len(cases)):
        body.append(dialect(arch, _STORE % (FIRST_RESULT + k)))
    body.append("  s_endpgm")
    vgprs = -(-(FIRST_RESULT + len(cases)) // 8) * 8
    return KernelSpec(name, "\n".join(body), (ptr("out"), ptr("in"), u32("x"), u32("y")), vgprs=vgprs,
                      sgprs=32, max_threads=64)


def run_lanes(emu: Emulator, name: str, ncases: int, a: np.ndarray, b: np.ndarray, c: np.ndarray,
              x: int = 0, y: int = 0) -> np.ndarray:
    """Run one wave; return results as (ncases, lanes) uint32."""
    lanes = emu.kernel(name).lanes
    mem = DeviceMemory()
    inp = np.zeros(3 * 64, dtype=np.uint32)
    for k, v in enumerate((a, b, c)):
        inp[64 * k:64 * k + lanes] = np.asarray(v, dtype=np.uint32)[:lanes]
    out = mem.alloc(4 * 64 * max(ncases, 1))
    src = mem.alloc(inp)
    emu.launch(name, grid=(1, 1, 1), block=(lanes, 1, 1), kernargs=struct.pack("<QQII", out, src, x, y),
               memory=mem)
    return mem.array(out, np.uint32, 64 * ncases).reshape(ncases, 64)[:, :lanes]


def as_u32(values) -> np.ndarray:
    v = np.asarray(values)
    if v.dtype == np.float32:
        return v.view(np.uint32)
    return (v.astype(np.int64) & 0xFFFFFFFF).astype(np.uint32)


def f32(bits) -> np.ndarray:
    return np.asarray(bits, dtype=np.uint32).view(np.float32)
