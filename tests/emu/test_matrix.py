"""Every MFMA / WMMA shape our kernels use, on structured inputs, against numpy.

The register images are built here from the formulas of matrix_instructions.md §3 (written out per
shape, independently of the emulator's general layout code), so a layout mistake shows as a wrong
(block, row, column). Inputs are exactly representable and sums exact, so results compare exactly.
"""

from __future__ import annotations

import struct

import attrs
import numpy as np
import pytest

from tensile_lite.emu import DeviceMemory, Emulator, EmulatorError
from tensile_lite.targets import TARGETS
from tensile_lite.verify.float8 import FORMATS
from tests.emu.kernels import KernelSpec, dialect, emulators_per_arch, ptr

U = np.uint32


@attrs.frozen
class Mi:
    mnemonic: str
    a_type: str  # f16 bf16 f32 xf32 i8 iu8 f64 fp8 bf8
    b_type: str
    m: int
    k: int
    blocks: int
    a_regs: int
    d_regs: int
    mods: str = ""
    agpr: bool = False
    signed: bool = True

    @property
    def name(self) -> str:
        tail = self.mods.replace(":", "").replace("[", "").replace("]", "").replace(",", "").replace(" ", "_")
        return (self.mnemonic + ("_" + tail if tail else "") + ("_acc" if self.agpr else "")).replace("v_", "", 1)


def _cdna(mn, t, m, k, blocks, regs, dregs, mods="", agpr=False, b_type=None):
    return Mi(mn, t, b_type or t, m, k, blocks, regs, dregs, mods, agpr)


GFX90A = [
    _cdna("v_mfma_f32_16x16x16f16", "f16", 16, 16, 1, 2, 4, agpr=True),
    _cdna("v_mfma_f32_32x32x8f16", "f16", 32, 8, 1, 2, 16),
    _cdna("v_mfma_f32_16x16x4f16", "f16", 16, 4, 4, 2, 16, agpr=True),
    _cdna("v_mfma_f32_4x4x4f16", "f16", 4, 4, 16, 2, 4),
    _cdna("v_mfma_f32_16x16x16bf16_1k", "bf16", 16, 16, 1, 2, 4),
    _cdna("v_mfma_f32_32x32x8bf16_1k", "bf16", 32, 8, 1, 2, 16, agpr=True),
    _cdna("v_mfma_i32_16x16x16i8", "i8", 16, 16, 1, 1, 4, agpr=True),
    _cdna("v_mfma_i32_32x32x8i8", "i8", 32, 8, 1, 1, 16),
    _cdna("v_mfma_f32_16x16x4f32", "f32", 16, 4, 1, 1, 4),
    _cdna("v_mfma_f32_32x32x2f32", "f32", 32, 2, 1, 1, 16, agpr=True),
    _cdna("v_mfma_f64_16x16x4f64", "f64", 16, 4, 1, 2, 8),
]
GFX942 = [
    _cdna("v_mfma_f32_16x16x16_f16", "f16", 16, 16, 1, 2, 4, agpr=True),
    _cdna("v_mfma_f32_32x32x8_f16", "f16", 32, 8, 1, 2, 16),
    _cdna("v_mfma_f32_16x16x4_4b_f16", "f16", 16, 4, 4, 2, 16),
    _cdna("v_mfma_f32_4x4x4_16b_f16", "f16", 4, 4, 16, 2, 4, agpr=True),
    _cdna("v_mfma_f32_16x16x16_bf16", "bf16", 16, 16, 1, 2, 4),
    _cdna("v_mfma_f32_32x32x8_bf16", "bf16", 32, 8, 1, 2, 16, agpr=True),
    _cdna("v_mfma_i32_16x16x32_i8", "i8", 16, 32, 1, 2, 4),
    _cdna("v_mfma_i32_32x32x16_i8", "i8", 32, 16, 1, 2, 16, agpr=True),
    _cdna("v_mfma_f32_16x16x32_fp8_fp8", "fp8", 16, 32, 1, 2, 4, agpr=True),
    _cdna("v_mfma_f32_16x16x32_bf8_bf8", "bf8", 16, 32, 1, 2, 4),
    _cdna("v_mfma_f32_16x16x32_fp8_bf8", "fp8", 16, 32, 1, 2, 4, b_type="bf8"),
    _cdna("v_mfma_f32_16x16x32_bf8_fp8", "bf8", 16, 32, 1, 2, 4, b_type="fp8"),
    _cdna("v_mfma_f32_32x32x16_fp8_fp8", "fp8", 32, 16, 1, 2, 16),
    _cdna("v_mfma_f32_16x16x8_xf32", "xf32", 16, 8, 1, 2, 4),
    _cdna("v_mfma_f32_32x32x4_xf32", "xf32", 32, 4, 1, 2, 16, agpr=True),
    _cdna("v_mfma_f32_16x16x4_f32", "f32", 16, 4, 1, 1, 4, agpr=True),
    _cdna("v_mfma_f32_32x32x2_f32", "f32", 32, 2, 1, 1, 16),
    _cdna("v_mfma_f64_16x16x4_f64", "f64", 16, 4, 1, 2, 8, agpr=True),
]
GFX950 = [
    _cdna("v_mfma_f32_16x16x32_f16", "f16", 16, 32, 1, 4, 4, agpr=True),
    _cdna("v_mfma_f32_32x32x16_f16", "f16", 32, 16, 1, 4, 16),
    _cdna("v_mfma_f32_16x16x32_bf16", "bf16", 16, 32, 1, 4, 4),
    _cdna("v_mfma_f32_32x32x16_bf16", "bf16", 32, 16, 1, 4, 16, agpr=True),
    _cdna("v_mfma_i32_16x16x64_i8", "i8", 16, 64, 1, 4, 4),
    _cdna("v_mfma_i32_32x32x32_i8", "i8", 32, 32, 1, 4, 16),
    _cdna("v_mfma_f32_16x16x128_f8f6f4", "fp8", 16, 128, 1, 8, 4, agpr=True),
    _cdna("v_mfma_f32_16x16x128_f8f6f4", "bf8", 16, 128, 1, 8, 4, "cbsz:1 blgp:1"),
    _cdna("v_mfma_f32_16x16x128_f8f6f4", "fp8", 16, 128, 1, 8, 4, "blgp:1", b_type="bf8"),
    _cdna("v_mfma_f32_16x16x128_f8f6f4", "bf8", 16, 128, 1, 8, 4, "cbsz:1", b_type="fp8"),
    _cdna("v_mfma_f32_32x32x64_f8f6f4", "fp8", 32, 64, 1, 8, 16),
    _cdna("v_mfma_f32_16x16x16_f16", "f16", 16, 16, 1, 2, 4),
    _cdna("v_mfma_f32_16x16x32_fp8_fp8", "fp8", 16, 32, 1, 2, 4),
]
GFX1100 = [
    Mi("v_wmma_f32_16x16x16_f16", "f16", "f16", 16, 16, 1, 8, 8),
    Mi("v_wmma_f32_16x16x16_bf16", "bf16", "bf16", 16, 16, 1, 8, 8),
    Mi("v_wmma_i32_16x16x16_iu8", "iu8", "iu8", 16, 16, 1, 4, 8, "neg_lo:[1,1,1]"),
    Mi("v_wmma_i32_16x16x16_iu8", "iu8", "iu8", 16, 16, 1, 4, 8, signed=False),
]
GFX1201 = [
    Mi("v_wmma_f32_16x16x16_f16", "f16", "f16", 16, 16, 1, 4, 8),
    Mi("v_wmma_f32_16x16x16_bf16", "bf16", "bf16", 16, 16, 1, 4, 8),
    Mi("v_wmma_i32_16x16x16_iu8", "iu8", "iu8", 16, 16, 1, 2, 8, "neg_lo:[1,1]"),
    Mi("v_wmma_i32_16x16x16_iu8", "iu8", "iu8", 16, 16, 1, 2, 8, signed=False),
    Mi("v_wmma_f32_16x16x16_fp8_fp8", "fp8", "fp8", 16, 16, 1, 2, 8),
    Mi("v_wmma_f32_16x16x16_fp8_bf8", "fp8", "bf8", 16, 16, 1, 2, 8),
    Mi("v_wmma_f32_16x16x16_bf8_fp8", "bf8", "fp8", 16, 16, 1, 2, 8),
    Mi("v_wmma_f32_16x16x16_bf8_bf8", "bf8", "bf8", 16, 16, 1, 2, 8),
]
TABLE = {"gfx90a": GFX90A, "gfx942": GFX942, "gfx950": GFX950, "gfx1100": GFX1100, "gfx1201": GFX1201}


# ---------------------------------------------------------------------------------------------
# Element encodings, independent of the emulator's.

def _encode(values: np.ndarray, t: str, arch: str) -> np.ndarray:
    """Values -> little-endian element bits (uint8/uint16/uint32/uint64 array of the same shape); uint8
    8-bit float codes are taken as they are (NaN and infinity codes, which no value encodes)."""
    if t in ("fp8", "bf8") and np.asarray(values).dtype == np.uint8:
        return np.asarray(values)
    v = np.asarray(values, dtype=np.float64)
    if t == "f16":
        return v.astype(np.float16).view(np.uint16)
    if t == "bf16":
        return (v.astype(np.float32).view(U) >> U(16)).astype(np.uint16)
    if t in ("f32", "xf32"):
        return v.astype(np.float32).view(U)
    if t == "f64":
        return v.view(np.uint64)
    if t in ("i8", "iu8"):
        return v.astype(np.int64).astype(np.uint8)
    # the verifier's codec, written apart from the emulator's, in the target's encoding
    return FORMATS[(str(TARGETS[arch].fp8), t)].encode(v)


_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "xf32": 4, "f64": 8, "i8": 1, "iu8": 1, "fp8": 1, "bf8": 1}


def _pack(elems: np.ndarray, t: str, regs: int) -> np.ndarray:
    """(lanes, elements) element bits -> (regs, lanes) uint32 images, element 0 in the low bits of reg 0."""
    lanes = elems.shape[0]
    raw = np.ascontiguousarray(elems).view(np.uint8).reshape(lanes, -1)
    assert raw.shape[1] == 4 * regs, (raw.shape, regs)
    return np.ascontiguousarray(raw).view(U).reshape(lanes, regs).T.copy()


# ---------------------------------------------------------------------------------------------
# Layouts from the spec, one formula per shape.

def _input_map(mi: Mi, arch: str, lanes: int) -> list[tuple[int, int, int, int]]:
    """(lane, element t, block, row-or-column, k) tuples for the A (and, transposed, B) operand."""
    out = []
    per_lane = mi.a_regs * 4 // _BYTES[mi.a_type]
    if mi.mnemonic.startswith("v_wmma"):
        for lane in range(lanes):
            for t in range(per_lane):
                if arch == "gfx1100":
                    k = t
                elif per_lane == 8:  # gfx12 16-bit: t = 2r + h
                    r, h = divmod(t, 2)
                    k = 8 * (r // 2) + 4 * (lane // 16) + 2 * (r % 2) + h
                else:  # gfx12 8-bit: t = 4r + b
                    k = 8 * (lane // 16) + t
                out.append((lane, t, 0, lane % 16, k))
        return out
    for lane in range(64):
        for t in range(per_lane):
            if mi.blocks > 1:  # 16x16x4 (4 blocks) and 4x4x4 (16 blocks): lanes of a block hold all K
                out.append((lane, t, lane // mi.m, lane % mi.m, t))
            else:
                out.append((lane, t, 0, lane % mi.m, (lane // mi.m) * per_lane + t))
    return out


def _output_map(mi: Mi, arch: str, lanes: int) -> list[tuple[int, int, int, int, int]]:
    """(lane, register (f64: pair), block, row, column) of every D element."""
    out = []
    if mi.mnemonic.startswith("v_wmma"):
        for lane in range(lanes):
            for r in range(8):
                i = 2 * r + lane // 16 if arch == "gfx1100" else 8 * (lane // 16) + r
                out.append((lane, r, 0, i, lane % 16))
        return out
    m = mi.m
    for lane in range(64):
        if mi.a_type == "f64":
            for p in range(4):
                out.append((lane, p, 0, 4 * p + lane // 16, lane % 16))
        elif m == 16 and mi.blocks == 1:
            for r in range(4):
                out.append((lane, r, 0, 4 * (lane // 16) + r, lane % 16))
        elif m == 32:
            for r in range(16):
                out.append((lane, r, 0, 8 * (r // 4) + 4 * (lane // 32) + r % 4, lane % 32))
        elif m == 16 and mi.blocks == 4:
            for r in range(16):
                out.append((lane, r, r // 4, 4 * (lane // 16) + r % 4, lane % 16))
        else:  # 4x4x4, 16 blocks
            for r in range(4):
                out.append((lane, r, lane // 4, r, lane % 4))
    return out


# ---------------------------------------------------------------------------------------------
# The kernel: load A, B, C images register by register, one matrix instruction, store D.

def _regs(base: int, n: int, file: str = "v") -> str:
    return f"{file}{base}" if n == 1 else f"{file}[{base}:{base + n - 1}]"


def _kernel(arch: str, mi: Mi, index: int) -> KernelSpec:
    g9 = arch.startswith("gfx9")
    load, store = ("global_load_dword", "global_store_dword") if g9 else ("global_load_b32", "global_store_b32")
    lines = [dialect(arch, "  {s_load_b128} s[4:7], s[0:1], 0x0\n  {s_load_b128} s[8:11], s[0:1], 0x10\n  {wait_smem}"),
             "  v_lshlrev_b32 v1, 2, v0"]
    lines += [f"  {load} v{8 + r}, v1, s[6:7] offset:{256 * r}" for r in range(mi.a_regs)]
    lines += [f"  {load} v{16 + r}, v1, s[8:9] offset:{256 * r}" for r in range(mi.a_regs)]
    lines += [f"  {load} v{24 + r}, v1, s[10:11] offset:{256 * r}" for r in range(mi.d_regs)]
    lines.append(dialect(arch, "  {wait_vmem}"))
    if mi.agpr:
        lines += [f"  v_accvgpr_write_b32 a{r}, v{24 + r}" for r in range(mi.d_regs)]
        lines.append("  s_nop 1")  # a VALU write read by an MFMA: 2 wait states
        cd = _regs(0, mi.d_regs, "a")
    else:
        cd = _regs(24, mi.d_regs)
    lines.append(f"  {mi.mnemonic} {cd}, {_regs(8, mi.a_regs)}, {_regs(16, mi.a_regs)}, {cd} {mi.mods}".rstrip())
    # the slowest result (gfx950, a 16-pass XDL op) needs 20 wait states before a VALU reads it
    lines.append("  s_nop 7\n  s_nop 7\n  s_nop 3")
    if mi.agpr:
        lines += [f"  v_accvgpr_read_b32 v{24 + r}, a{r}" for r in range(mi.d_regs)]
    lines += [f"  {store} v1, v{24 + r}, s[4:5] offset:{256 * r}" for r in range(mi.d_regs)]
    lines.append("  s_endpgm")
    return KernelSpec(f"mi{index}", "\n".join(lines), (ptr("out"), ptr("a"), ptr("b"), ptr("c")), vgprs=40,
                      agprs=16 if mi.agpr else 0, max_threads=64)


@pytest.fixture(scope="module")
def matrix_emulators(toolchain, co_dir):
    return emulators_per_arch(toolchain, co_dir, lambda arch: [_kernel(arch, mi, n) for n, mi in enumerate(TABLE[arch])], "matrix")


def _run(emu: Emulator, arch: str, index: int, mi: Mi, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a (blocks, M, K), b (blocks, K, N), c (blocks, M, N) -> D (blocks, M, N) as computed by the emulator."""
    lanes = 64 if arch.startswith("gfx9") else 32
    per_lane = mi.a_regs * 4 // _BYTES[mi.a_type]
    a_el = np.zeros((lanes, per_lane), dtype=_encode(np.zeros(1), mi.a_type, arch).dtype)
    b_el = np.zeros((lanes, per_lane), dtype=_encode(np.zeros(1), mi.b_type, arch).dtype)
    ea, eb = _encode(a, mi.a_type, arch), _encode(b, mi.b_type, arch)
    for lane, t, blk, rc, k in _input_map(mi, arch, lanes):
        a_el[lane, t] = ea[blk, rc, k]
        b_el[lane, t] = eb[blk, k, rc]
    out_map = _output_map(mi, arch, lanes)
    out_type = "i32" if mi.a_type in ("i8", "iu8") else ("f64" if mi.a_type == "f64" else "f32")
    c_el = np.zeros((lanes, mi.d_regs // (2 if out_type == "f64" else 1)),
                    dtype={"i32": np.int32, "f64": np.float64, "f32": np.float32}[out_type])
    for lane, r, blk, i, j in out_map:
        c_el[lane, r] = c[blk, i, j]
    imgs = [np.zeros((16, 64), dtype=U) for _ in range(3)]
    imgs[0][:mi.a_regs, :lanes] = _pack(a_el, mi.a_type, mi.a_regs)
    imgs[1][:mi.a_regs, :lanes] = _pack(b_el, mi.b_type, mi.a_regs)
    imgs[2][:mi.d_regs, :lanes] = np.ascontiguousarray(c_el).view(U).reshape(lanes, mi.d_regs).T
    mem = DeviceMemory()
    out = mem.alloc(16 * 64 * 4)
    addrs = [mem.alloc(img) for img in imgs]
    emu.launch(f"mi{index}", grid=(1, 1, 1), block=(lanes, 1, 1), kernargs=struct.pack("<QQQQ", out, *addrs),
               memory=mem)
    d_img = mem.array(out, U, 16 * 64).reshape(16, 64)[:mi.d_regs, :lanes].T.copy()
    d_vals = d_img.view({"i32": np.int32, "f64": np.float64, "f32": np.float32}[out_type])
    d = np.full(c.shape, np.nan)
    for lane, r, blk, i, j in out_map:
        d[blk, i, j] = d_vals[lane, r]
    return d


def _first_wrong(got: np.ndarray, want: np.ndarray) -> str:
    bad = np.argwhere(got != want)
    blk, i, j = bad[0]
    return (f"{len(bad)} wrong elements; first D[block {blk}][row {i}][col {j}] = {got[blk, i, j]}, "
            f"expected {want[blk, i, j]}")


_FP8_VALUES = np.array([0, 1, 2, 3, 4, 6, 8, -1, -2, -3, -4, -6, -8, 0.5, -0.5, 0.25])


def _ramp(shape: tuple[int, ...], t: str) -> np.ndarray:
    n = np.arange(int(np.prod(shape))).reshape(shape)
    if t in ("fp8", "bf8"):
        return _FP8_VALUES[n % 16]
    if t in ("i8", "iu8"):
        return (n % 127).astype(np.float64)
    if t == "bf16":
        return (n % 256).astype(np.float64)
    return (n % 1024).astype(np.float64)


def _cases(arch: str) -> list[tuple[str, int]]:
    if arch not in TABLE:
        return []
    return [(arch, n) for n in range(len(TABLE[arch]))]


ALL_CASES = [c for arch in TABLE for c in _cases(arch)]


def _ids(case: tuple[str, int]) -> str:
    return f"{case[0]}-{TABLE[case[0]][case[1]].name}"


@pytest.mark.parametrize("case", ALL_CASES, ids=_ids)
def test_one_hot_times_ramp(matrix_emulators, case):
    """A one-hot (row i picks k = (3i + block) % K) times a ramp B, plus a ramp C: D = B[k(i)] + C."""
    arch, index = case
    emu = matrix_emulators(arch)
    mi = TABLE[arch][index]
    n = mi.m
    a = np.zeros((mi.blocks, mi.m, mi.k))
    for blk in range(mi.blocks):
        for i in range(mi.m):
            a[blk, i, (3 * i + blk) % mi.k] = 1
    b = _ramp((mi.blocks, mi.k, n), mi.b_type)
    c = np.arange(mi.blocks * mi.m * n).reshape(mi.blocks, mi.m, n) * 2.0
    want = np.matmul(a, b) + c
    got = _run(emu, arch, index, mi, a, b, c)
    assert np.array_equal(got, want), f"{mi.mnemonic} {mi.mods}: " + _first_wrong(got, want)


@pytest.mark.parametrize("case", ALL_CASES, ids=_ids)
def test_random_exact(matrix_emulators, case):
    arch, index = case
    emu = matrix_emulators(arch)
    mi = TABLE[arch][index]
    rng = np.random.default_rng(index)
    shape_a, shape_b = (mi.blocks, mi.m, mi.k), (mi.blocks, mi.k, mi.m)
    if mi.a_type in ("i8", "iu8"):
        lo, hi = (-128, 128) if mi.signed else (0, 256)
        a = rng.integers(lo, hi, shape_a).astype(np.float64)
        b = rng.integers(lo, hi, shape_b).astype(np.float64)
    else:
        pick = lambda shape, t: rng.choice(_FP8_VALUES if t in ("fp8", "bf8") else  # noqa: E731
                                           np.array([-2, -1, -0.5, 0, 0.5, 1, 2, 3]), shape)
        a, b = pick(shape_a, mi.a_type), pick(shape_b, mi.b_type)
    c = rng.integers(-50, 50, (mi.blocks, mi.m, mi.m)).astype(np.float64)
    want = np.matmul(a, b) + c
    got = _run(emu, arch, index, mi, a, b, c)
    assert np.array_equal(got, want), f"{mi.mnemonic} {mi.mods}: " + _first_wrong(got, want)


def test_gfx90a_flushes_f16_subnormal_inputs(matrix_emulators):
    """MI200 MFMA f16 flushes subnormal inputs (matrix_instructions.md §7.4): A*B contributes nothing."""
    mi = GFX90A[0]
    emu = matrix_emulators("gfx90a")
    a = np.full((1, 16, 16), 2.0**-20)  # f16 subnormal
    b = np.ones((1, 16, 16))
    c = np.zeros((1, 16, 16))
    assert np.array_equal(_run(emu, "gfx90a", 0, mi, a, b, c), c)
    emu942 = matrix_emulators("gfx942")
    got = _run(emu942, "gfx942", 0, GFX942[0], a, b, c)
    assert np.allclose(got, 16 * 2.0**-20)


def test_gfx11_wmma_rejects_unreplicated_inputs(matrix_emulators):
    emu = matrix_emulators("gfx1100")
    mi = GFX1100[0]
    mem = DeviceMemory()
    imgs = [np.zeros((16, 64), dtype=U) for _ in range(3)]
    imgs[0][0, 3] = 0x3C00  # lane 3 only; lane 19 must hold the same value
    addrs = [mem.alloc(img) for img in imgs]
    out = mem.alloc(16 * 64 * 4)
    with pytest.raises(EmulatorError, match="lane 19 differs from lane 3"):
        emu.launch("mi0", grid=(1, 1, 1), block=(32, 1, 1), kernargs=struct.pack("<QQQQ", out, *addrs), memory=mem)
    assert mi.mnemonic == "v_wmma_f32_16x16x16_f16"


_OCP_CASES = [(arch, n) for arch in ("gfx950", "gfx1201") for n, mi in enumerate(TABLE[arch])
              if mi.a_type in ("fp8", "bf8")]


@pytest.mark.parametrize("case", _OCP_CASES, ids=_ids)
def test_ocp_every_code_as_input(matrix_emulators, case):
    """Each of the 256 codes of A's OCP format times an identity B (in B's format): D holds each code's
    value exactly (448 / 57344 the largest finite, subnormals, -0), a row with a NaN code (E4M3 S.1111.111,
    E5M2 exponent 31 with a mantissa) is NaN, and a row with an E5M2 infinity is NaN too (inf * 0 in the
    other columns), as numpy computes it in float64."""
    arch, index = case
    emu = matrix_emulators(arch)
    mi = TABLE[arch][index]
    values = FORMATS[("ocp", mi.a_type)].values
    a = np.zeros((1, mi.m, mi.k), np.uint8)  # codes; 0 is +0 in OCP
    a[0, :16, :16] = np.arange(256, dtype=np.uint8).reshape(16, 16).T  # row i: the codes i mod 16
    b = np.zeros((1, mi.k, mi.m))
    b[0, :16, :16] = np.eye(16)
    c = np.zeros((1, mi.m, mi.m))
    with np.errstate(invalid="ignore"):
        want = np.matmul(values[a], b) + c
    got = _run(emu, arch, index, mi, a, b, c)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    assert same.all(), f"{mi.mnemonic} {mi.mods}: " + _first_wrong(np.where(same, 0, got), np.where(same, 0, want))
    # the edges the docstring names are there
    assert np.nanmax(want) == {"fp8": 448.0, "bf8": 57344.0}[mi.a_type]
    assert np.isnan(want).any(axis=2).sum() == (1 if mi.a_type == "fp8" else 4)
