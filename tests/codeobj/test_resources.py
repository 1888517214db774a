"""The occupancy figure 7.x's runtime ranks by (codeobj/resources.py), on hand-worked cases, and the
resources read back from a real code object."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tensile_lite.codeobj.assemble import assemble, link
from tensile_lite.codeobj.elf import read_code_object
from tensile_lite.codeobj.resources import KernelResources, kernel_resources, runtime_occupancy
from tensile_lite.codeobj.trivial import TrivialKernel
from tensile_lite.targets import get_target

GFX942, GFX1100 = get_target("gfx942"), get_target("gfx1100")


@pytest.mark.parametrize("res, target, want", [
    # unified file: 100 VGPRs -> 104, + 128 AGPRs = 232 of 512 -> 2; LDS 33000 -> 33024 B of 64 KiB -> 1
    (KernelResources(256, 100, 128, 90, 33000), GFX942, 1),
    # the same without LDS: registers decide (2)
    (KernelResources(256, 100, 128, 90, 0), GFX942, 2),
    # few registers: the 10-wave cap; SGPRs 800 // 100 = 8 decide
    (KernelResources(256, 20, 0, 100, 0), GFX942, 8),
    # a 512-thread workgroup counts twice: cap 5, 64 VGPRs x 2 = 128 of 512 -> 4
    (KernelResources(512, 64, 0, 10, 0), GFX942, 4),
    # separate files (RDNA): 96 VGPRs of 256 -> 2; LDS 16 KiB -> 4
    (KernelResources(256, 96, 0, 50, 16384), GFX1100, 2),
    # never below 1: a kernel that assembled runs
    (KernelResources(1024, 256, 256, 100, 65536), GFX942, 1),
])
def test_runtime_occupancy(res: KernelResources, target: Any, want: int) -> None:
    assert runtime_occupancy(res, target) == want


def _kernel(vgprs: int, agprs: int, lds: int) -> str:
    """A gfx942 kernel declaring `vgprs` architectural registers and `agprs` accumulation registers above
    them (the descriptor allocates both from the unified file), as the kernel writer declares them."""
    offset = -(-vgprs // 4) * 4
    return TrivialKernel("k", "gfx942", 5).assembly_text() \
        .replace(".amdhsa_next_free_vgpr 1", f".amdhsa_next_free_vgpr {offset + agprs}") \
        .replace(".amdhsa_accum_offset 4", f".amdhsa_accum_offset {offset}") \
        .replace(".vgpr_count: 1", f".vgpr_count: {vgprs}") \
        .replace(".group_segment_fixed_size: 0", f".group_segment_fixed_size: {lds}")


@pytest.mark.parametrize("vgprs, agprs, allocated", [(100, 128, 232), (37, 0, 40), (61, 16, 80)])
def test_resources_are_read_from_the_code_object(tmp_path: Path, toolchain: Any, vgprs: int, agprs: int,
                                                 allocated: int) -> None:
    obj = assemble(toolchain, _kernel(vgprs, agprs, 12345), "gfx942", tmp_path / "k.o", code_object_version=5)
    res = kernel_resources(read_code_object(link(toolchain, [obj], tmp_path / "k.co")), GFX942)["k"]
    assert (res.vgprs, res.sgprs, res.threads, res.lds_bytes) == (vgprs, 8, 256, 12345)
    # what upstream's formula adds up (VGPRs in 8-blocks, then the AGPRs) is what the descriptor allocates
    assert -(-vgprs // 8) * 8 + res.agprs == allocated
