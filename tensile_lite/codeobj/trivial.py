"""A tiny valid kernel for any target in the table: descriptor, metadata and `s_endpgm`.

Used by the pipeline's tests and benchmark (the pipeline must not care what kernels do), by the
toolchain probe, and by the TCL driver for an empty-but-valid `Kernels.so-000-<gfx>.hsaco`.
"""

from __future__ import annotations

import re

import attrs

from tensile_lite.targets import bare_gfx, get_target

# amdhsa.version in the metadata must match the code object version we assemble for.
METADATA_VERSION = {4: (1, 1), 5: (1, 2)}
_SYMBOL = re.compile(r"^[A-Za-z_.][A-Za-z0-9_.$]*$")


def _check_name(_inst: object, _attr: object, value: str) -> None:
    if not _SYMBOL.match(value):
        raise ValueError(f"not a valid kernel symbol: {value!r}")


@attrs.frozen(slots=True)
class TrivialKernel:
    """A kernel that ends at once. `padding` adds that many `s_nop 0` lines, so benchmarks can
    model larger texts without changing what the kernel does."""

    name: str = attrs.field(validator=_check_name)
    arch: str = attrs.field(converter=bare_gfx)
    code_object_version: int = 4
    padding: int = 0

    def __attrs_post_init__(self) -> None:
        get_target(self.arch)
        if self.code_object_version not in METADATA_VERSION:
            raise ValueError(f"code object version {self.code_object_version} is not 4 or 5")

    def assembly_text(self) -> str:
        info = get_target(self.arch)
        major, minor = METADATA_VERSION[self.code_object_version]
        n = self.name
        body = "  s_nop 0\n" * self.padding
        descriptor = ["  .amdhsa_next_free_vgpr 1", "  .amdhsa_next_free_sgpr 1"]
        if info.unified_agprs:
            descriptor.append("  .amdhsa_accum_offset 4")
        if info.wavefront_size != 64:
            descriptor.append("  .amdhsa_wavefront_size32 1")
        return (
            f'.amdgcn_target "amdgcn-amd-amdhsa--{self.arch}"\n'
            ".text\n"
            f".protected {n}\n.globl {n}\n.p2align 8\n.type {n},@function\n"
            f"{n}:\n{body}  s_endpgm\n"
            f".L{n}_end:\n.size {n}, .L{n}_end-{n}\n\n"
            ".rodata\n.p2align 6\n"
            f".amdhsa_kernel {n}\n" + "\n".join(descriptor) + "\n.end_amdhsa_kernel\n\n"
            ".amdgpu_metadata\n---\n"
            f"amdhsa.version: [ {major}, {minor} ]\n"
            f"amdhsa.target: amdgcn-amd-amdhsa--{self.arch}\n"
            "amdhsa.kernels:\n"
            f"  - .name: {n}\n"
            f"    .symbol: {n}.kd\n"
            "    .kernarg_segment_size: 0\n"
            "    .kernarg_segment_align: 8\n"
            "    .group_segment_fixed_size: 0\n"
            "    .private_segment_fixed_size: 0\n"
            f"    .wavefront_size: {info.wavefront_size}\n"
            "    .sgpr_count: 8\n"
            "    .vgpr_count: 1\n"
            "    .max_flat_workgroup_size: 256\n"
            "    .args: []\n"
            "...\n.end_amdgpu_metadata\n"
        )
