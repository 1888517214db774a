"""D16 loads under the strict rule of spec hardware_semantics.md §1: on CDNA (SRAM-ECC parts) a D16
load writes zeros to the other half of its VGPR; on RDNA the other half is kept.

Each kernel fills v10 with a marker, issues one D16 load into it and stores the whole dword, so the
test sees both what the load wrote and what became of the other half.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from tests.emu.conftest import ALL_ARCHS
from tests.emu.kernels import KernelSpec, dialect, emulators_per_arch, ptr

U = np.uint32
MARKER = 0xA5A5C3C3
# Bytes 0..3 of each source dword (the loads read at lane * 4 + 1, so bytes 1..2 of dword `lane`).
SOURCE = np.array([0x80 | (i & 0x7F) | ((0x40 + i) << 8) | ((0x90 + i) << 16) | (0x11 << 24) for i in range(64)],
                  dtype=U)

# (mnemonic suffix per dialect family, bytes, signed, high half)
_FORMS = {
    "short": ("short_d16", "d16_b16", 2, False, False),
    "short_hi": ("short_d16_hi", "d16_hi_b16", 2, False, True),
    "ubyte": ("ubyte_d16", "d16_u8", 1, False, False),
    "ubyte_hi": ("ubyte_d16_hi", "d16_hi_u8", 1, False, True),
    "sbyte": ("sbyte_d16", "d16_i8", 1, True, False),
    "sbyte_hi": ("sbyte_d16_hi", "d16_hi_i8", 1, True, True),
}
# LDS forms (same names on every family that has them).
_LDS_FORMS = {
    "u16": ("u16_d16", 2, False, False), "u16_hi": ("u16_d16_hi", 2, False, True),
    "u8": ("u8_d16", 1, False, False), "u8_hi": ("u8_d16_hi", 1, False, True),
    "i8": ("i8_d16", 1, True, False), "i8_hi": ("i8_d16_hi", 1, True, True),
}

_PROLOGUE = """
  {s_load_b128} s[4:7], s[0:1], 0x0
  {wait_smem}
  v_lshlrev_b32 v1, 2, v0
  {v_add_nc_u32} v2, 1, v1
  v_mov_b32 v10, MARKER
""".replace("MARKER", hex(MARKER))

_STORE = """
  {wait_vmem}
  {global_store_b32} v1, v10, s[4:5]
  s_endpgm
"""


def _cdna(arch: str) -> bool:
    return arch.startswith("gfx9")


def _buffer_body(suffix: str) -> str:
    return _PROLOGUE + f"""
  s_mov_b32 s12, s6
  s_and_b32 s13, s7, 0xffff
  s_mov_b32 s14, 0x1000
  s_mov_b32 s15, {{srd3}}
  buffer_load_{suffix} v10, v2, s[12:15], {{null_soff}} offen
""" + _STORE


def _global_body(seg: str, suffix: str) -> str:
    if seg == "global":
        load = f"global_load_{suffix} v10, v2, s[6:7]"
    else:
        load = ("v_mov_b32 v4, s6\n  v_mov_b32 v5, s7\n  {v_add_co} v4, {vcc}, v4, v2\n  s_nop 1\n"
                f"  {{v_addc_co}} v5, {{vcc}}, 0, v5, {{vcc}}\n  flat_load_{suffix} v10, v[4:5]\n  {{wait_lds}}")
    return _PROLOGUE + f"\n  {load}\n" + _STORE


def _lds_body(arch: str, suffix: str) -> str:
    read = "ds_read" if _cdna(arch) else "ds_load"
    return _PROLOGUE + f"""
  {{global_load_b32}} v3, v1, s[6:7]
  {{wait_vmem}}
  {{ds_store_b32}} v1, v3
  {{wait_lds}}
  {read}_{suffix} v10, v2
  {{wait_lds}}
""" + _STORE


def _specs(arch: str) -> list[KernelSpec]:
    gfx9 = _cdna(arch)
    specs = []
    for key, (old, new, *_rest) in _FORMS.items():
        suffix = old if gfx9 else new
        specs.append(KernelSpec(f"buffer_{key}", dialect(arch, _buffer_body(suffix)), (ptr("out"), ptr("src")),
                                max_threads=64))
        for seg in ("global", "flat"):
            specs.append(KernelSpec(f"{seg}_{key}", dialect(arch, _global_body(seg, suffix)),
                                    (ptr("out"), ptr("src")), max_threads=64))
    for key, (suffix, *_rest) in _LDS_FORMS.items():
        specs.append(KernelSpec(f"lds_{key}", dialect(arch, _lds_body(arch, suffix)), (ptr("out"), ptr("src")),
                                lds=64 * 4, max_threads=64))
    return specs


@pytest.fixture(scope="module")
def d16_emulators(toolchain, co_dir):
    return emulators_per_arch(toolchain, co_dir, _specs, "d16")


def _expected(arch: str, lanes: int, nbytes: int, signed: bool, high: bool) -> np.ndarray:
    """What the hardware leaves in the register: the loaded half, and zeros (CDNA) or the marker."""
    raw = SOURCE[:lanes].view(np.uint8).reshape(lanes, 4)[:, 1:1 + nbytes].copy()
    if nbytes == 2:
        half = raw.view("<u2")[:, 0].astype(U)
    elif signed:
        half = raw[:, 0].view(np.int8).astype(np.int16).view(np.uint16).astype(U)
    else:
        half = raw[:, 0].astype(U)
    other = U(0) if _cdna(arch) else (U(MARKER & 0xFFFF) if high else U(MARKER >> 16))
    return (half << U(16)) | other if high else (other << U(16)) | half


def _run(emu, name: str) -> np.ndarray:
    from tensile_lite.emu import DeviceMemory

    lanes = emu.kernel(name).lanes
    mem = DeviceMemory()
    out = mem.alloc(4 * lanes, fill=0xEE)
    src = mem.alloc(SOURCE)
    emu.launch(name, grid=(1, 1, 1), block=(lanes, 1, 1), kernargs=struct.pack("<QQ", out, src), memory=mem)
    return mem.array(out, U, lanes)


@pytest.mark.parametrize("arch", ALL_ARCHS)
@pytest.mark.parametrize("seg", ["buffer", "global", "flat"])
@pytest.mark.parametrize("form", list(_FORMS))
def test_vector_memory_d16(d16_emulators, arch, seg, form):
    emu = d16_emulators(arch)
    _old, _new, nbytes, signed, high = _FORMS[form]
    got = _run(emu, f"{seg}_{form}")
    np.testing.assert_array_equal(got, _expected(arch, len(got), nbytes, signed, high),
                                  err_msg=f"{arch} {seg}_load {form}")


@pytest.mark.parametrize("arch", ALL_ARCHS)
@pytest.mark.parametrize("form", list(_LDS_FORMS))
def test_lds_d16(d16_emulators, arch, form):
    emu = d16_emulators(arch)
    _suffix, nbytes, signed, high = _LDS_FORMS[form]
    got = _run(emu, f"lds_{form}")
    np.testing.assert_array_equal(got, _expected(arch, len(got), nbytes, signed, high), err_msg=f"{arch} ds {form}")
