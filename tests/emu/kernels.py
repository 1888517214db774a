"""Hand-written test kernels: the `.amdhsa_kernel` / `.amdgpu_metadata` prologue, and assembling and
linking several kernels into one code object with the real toolchain.

Per-architecture spellings that the test bodies share are in DIALECTS, so one kernel body can be
written once for gfx9 (CDNA, wave64) and gfx11/gfx12 (RDNA, wave32).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from tensile_lite.codeobj.assemble import assemble, link
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.emu import Emulator
from tests.emu.conftest import require_arch

UNIFIED_AGPRS = ("gfx90a", "gfx942", "gfx950")
WAVE32 = ("gfx1100", "gfx1101", "gfx1102", "gfx1151", "gfx1200", "gfx1201")


@attrs.frozen
class Arg:
    name: str
    size: int  # 8 for pointers, 4 for scalars
    kind: str = "global_buffer"  # or by_value
    value_type: str = "u32"


def ptr(name: str) -> Arg:
    return Arg(name, 8, "global_buffer", "struct")


def u32(name: str) -> Arg:
    return Arg(name, 4, "by_value", "u32")


@attrs.frozen
class KernelSpec:
    name: str
    body: str
    args: tuple[Arg, ...] = ()
    vgprs: int = 32
    agprs: int = 0
    sgprs: int = 32
    lds: int = 0
    wg_ids: tuple[int, int, int] = (1, 1, 1)
    workitem_dims: int = 0
    max_threads: int = 256
    wave64: bool | None = None
    denorm_mode_32: int = 3


def _metadata(spec: KernelSpec, wave: int) -> list[str]:
    lines = ["    - .name: " + spec.name, f"      .symbol: '{spec.name}.kd'", "      .language: OpenCL C",
             "      .language_version: [2, 0]", "      .args:"]
    off = 0
    for a in spec.args:
        lines += [f"        - .name: {a.name}", f"          .size: {a.size}", f"          .offset: {off}",
                  f"          .value_kind: {a.kind}", f"          .value_type: {a.value_type}"]
        if a.kind == "global_buffer":
            lines.append("          .address_space: global")
        off += a.size
    size = -(-off // 8) * 8
    lines += [f"      .group_segment_fixed_size: {spec.lds}", "      .kernarg_segment_align: 8",
              f"      .kernarg_segment_size: {size}", f"      .max_flat_workgroup_size: {spec.max_threads}",
              "      .private_segment_fixed_size: 0", f"      .sgpr_count: {spec.sgprs}",
              "      .sgpr_spill_count: 0", f"      .vgpr_count: {spec.vgprs}", "      .vgpr_spill_count: 0",
              f"      .wavefront_size: {wave}"]
    return lines


def kernel_text(arch: str, spec: KernelSpec) -> str:
    """Prologue, descriptor and metadata of one kernel, in tensilelite's layout."""
    wave64 = spec.wave64 if spec.wave64 is not None else arch not in WAVE32
    wave = 64 if wave64 else 32
    unified = arch in UNIFIED_AGPRS
    accum = -(-spec.vgprs // 8) * 8
    next_free = accum + spec.agprs if unified else spec.vgprs
    d = [
        f'.amdgcn_target "amdgcn-amd-amdhsa--{arch}"',
        ".text",
        f".protected {spec.name}",
        f".globl {spec.name}",
        ".p2align 8",
        f".type {spec.name},@function",
        ".section .rodata,#alloc",
        ".p2align 6",
        f".amdhsa_kernel {spec.name}",
        "  .amdhsa_user_sgpr_kernarg_segment_ptr 1",
    ]
    if unified:
        d.append(f"  .amdhsa_accum_offset {accum}")
    d += [
        f"  .amdhsa_next_free_vgpr {next_free}",
        f"  .amdhsa_next_free_sgpr {spec.sgprs}",
        f"  .amdhsa_group_segment_fixed_size {spec.lds}",
    ]
    if arch in WAVE32 or arch.startswith("gfx1"):
        d.append(f"  .amdhsa_wavefront_size32 {0 if wave64 else 1}")
    d += [
        "  .amdhsa_private_segment_fixed_size 0",
        f"  .amdhsa_system_sgpr_workgroup_id_x {spec.wg_ids[0]}",
        f"  .amdhsa_system_sgpr_workgroup_id_y {spec.wg_ids[1]}",
        f"  .amdhsa_system_sgpr_workgroup_id_z {spec.wg_ids[2]}",
        f"  .amdhsa_system_vgpr_workitem_id {spec.workitem_dims}",
        f"  .amdhsa_float_denorm_mode_32 {spec.denorm_mode_32}",
        "  .amdhsa_float_denorm_mode_16_64 3",
        ".end_amdhsa_kernel",
        ".text",
        ".amdgpu_metadata",
        "---",
        "amdhsa.version: [1, 1]",
        "amdhsa.kernels:",
        *_metadata(spec, wave),
        ".end_amdgpu_metadata",
        f"{spec.name}:",
        spec.body.strip("\n"),
        "",
    ]
    return "\n".join(d)


def build(toolchain: Toolchain, out_dir: Path, arch: str, specs: Sequence[KernelSpec],
          name: str = "kernels") -> Path:
    """Assemble each kernel (one object per kernel, like the library build) and link one `.co`."""
    objects = []
    for spec in specs:
        wave64 = spec.wave64 if spec.wave64 is not None else arch not in WAVE32
        obj = out_dir / f"{name}-{arch}-{spec.name}.o"
        assemble(toolchain, kernel_text(arch, spec), arch, obj, code_object_version=4, wave64=wave64)
        objects.append(obj)
    return link(toolchain, objects, out_dir / f"{name}-{arch}.co")


def emulators_per_arch(toolchain: Toolchain, out_dir: Path, specs: Callable[[str], Sequence[KernelSpec]],
                       name: str) -> Callable[[str], Emulator]:
    """A getter that builds `specs(arch)` into one code object per architecture, on first use, and
    returns that code object's emulator (skipping targets the toolchain cannot build)."""
    cache: dict[str, Emulator] = {}

    def get(arch: str) -> Emulator:
        if arch not in cache:
            require_arch(toolchain, arch)
            cache[arch] = Emulator(build(toolchain, out_dir, arch, specs(arch), name=name), toolchain=toolchain)
        return cache[arch]
    return get


# Spellings shared by test bodies: {load_args2} etc. are filled per architecture.
_GFX9 = {
    "s_load_b64": "s_load_dwordx2", "s_load_b128": "s_load_dwordx4", "s_load_b32": "s_load_dword",
    "wait_smem": "s_waitcnt lgkmcnt(0)", "wait_vmem": "s_waitcnt vmcnt(0)", "wait_lds": "s_waitcnt lgkmcnt(0)",
    "global_load_b32": "global_load_dword", "global_store_b32": "global_store_dword",
    "global_store_b64": "global_store_dwordx2", "global_store_b128": "global_store_dwordx4",
    "buffer_load_b32": "buffer_load_dword", "buffer_load_b128": "buffer_load_dwordx4",
    "buffer_store_b32": "buffer_store_dword", "buffer_load_d16_b16": "buffer_load_short_d16",
    "buffer_load_d16_hi_b16": "buffer_load_short_d16_hi", "buffer_store_b16": "buffer_store_short",
    "ds_store_b32": "ds_write_b32", "ds_load_b32": "ds_read_b32", "ds_store_b128": "ds_write_b128",
    "ds_load_b128": "ds_read_b128", "ds_load_b64": "ds_read_b64", "ds_store_b64": "ds_write_b64",
    "v_add_nc_u32": "v_add_u32", "v_sub_nc_u32": "v_sub_u32", "vcc": "vcc", "exec": "exec",
    "s_and_saveexec": "s_and_saveexec_b64", "s_or_saveexec": "s_or_saveexec_b64", "smask": "s[20:21]",
    "barrier": "s_barrier", "null_soff": "0", "s_add_co_u32": "s_add_u32", "s_addc_co_u32": "s_addc_u32",
    "srd3": "0x00020000", "v_add_co": "v_add_co_u32", "v_addc_co": "v_addc_co_u32",
    "v_sub_co": "v_sub_co_u32", "v_subb_co": "v_subb_co_u32", "v_mad_u64_u32": "v_mad_u64_u32",
    "s_ctz": "s_ff1_i32_b32", "v_max_f32": "v_max_f32", "v_min_f32": "v_min_f32", "v_med3_f32": "v_med3_f32",
    "s_load_b256": "s_load_dwordx8", "s_buffer_load_b64": "s_buffer_load_dwordx2", "s_or_exec": "s_or_b64 exec, exec, s[20:21]",
    "s_and_exec_vcc": "s_and_b64 exec, exec, vcc",
    "wait_vmem1": "s_waitcnt vmcnt(1)", "global_load_b128": "global_load_dwordx4",
    "buffer_store_b128": "buffer_store_dwordx4", "global_atomic_add_u32": "global_atomic_add",
    "global_atomic_cmpswap_b32": "global_atomic_cmpswap", "atomic_rtn": "glc",
    "buffer_atomic_add_f32": "buffer_atomic_add_f32", "ds_load_2addr_b32": "ds_read2_b32",
}
_GFX11 = {
    "s_load_b64": "s_load_b64", "s_load_b128": "s_load_b128", "s_load_b32": "s_load_b32",
    "wait_smem": "s_waitcnt lgkmcnt(0)", "wait_vmem": "s_waitcnt vmcnt(0)", "wait_lds": "s_waitcnt lgkmcnt(0)",
    "global_load_b32": "global_load_b32", "global_store_b32": "global_store_b32",
    "global_store_b64": "global_store_b64", "global_store_b128": "global_store_b128",
    "buffer_load_b32": "buffer_load_b32", "buffer_load_b128": "buffer_load_b128",
    "buffer_store_b32": "buffer_store_b32", "buffer_load_d16_b16": "buffer_load_d16_b16",
    "buffer_load_d16_hi_b16": "buffer_load_d16_hi_b16", "buffer_store_b16": "buffer_store_b16",
    "ds_store_b32": "ds_store_b32", "ds_load_b32": "ds_load_b32", "ds_store_b128": "ds_store_b128",
    "ds_load_b128": "ds_load_b128", "ds_load_b64": "ds_load_b64", "ds_store_b64": "ds_store_b64",
    "v_add_nc_u32": "v_add_nc_u32", "v_sub_nc_u32": "v_sub_nc_u32", "vcc": "vcc_lo", "exec": "exec_lo",
    "s_and_saveexec": "s_and_saveexec_b32", "s_or_saveexec": "s_or_saveexec_b32", "smask": "s20",
    "barrier": "s_barrier", "null_soff": "0", "s_add_co_u32": "s_add_u32", "s_addc_co_u32": "s_addc_u32",
    "srd3": "0x31014000", "v_add_co": "v_add_co_u32", "v_addc_co": "v_add_co_ci_u32",
    "v_sub_co": "v_sub_co_u32", "v_subb_co": "v_sub_co_ci_u32", "v_mad_u64_u32": "v_mad_u64_u32",
    "s_ctz": "s_ctz_i32_b32", "v_max_f32": "v_max_f32", "v_min_f32": "v_min_f32", "v_med3_f32": "v_med3_f32",
    "s_load_b256": "s_load_b256", "s_buffer_load_b64": "s_buffer_load_b64", "s_or_exec": "s_or_b32 exec_lo, exec_lo, s20",
    "s_and_exec_vcc": "s_and_b32 exec_lo, exec_lo, vcc_lo",
    "wait_vmem1": "s_waitcnt vmcnt(1)", "global_load_b128": "global_load_b128",
    "buffer_store_b128": "buffer_store_b128", "global_atomic_add_u32": "global_atomic_add_u32",
    "global_atomic_cmpswap_b32": "global_atomic_cmpswap_b32", "atomic_rtn": "glc",
    "buffer_atomic_add_f32": "buffer_atomic_add_f32", "ds_load_2addr_b32": "ds_load_2addr_b32",
}
_GFX12 = {
    **_GFX11,
    "wait_smem": "s_wait_kmcnt 0x0", "wait_vmem": "s_wait_loadcnt 0x0", "wait_lds": "s_wait_dscnt 0x0",
    "barrier": "s_barrier_signal -1\n  s_barrier_wait -1", "null_soff": "null",
    "s_add_co_u32": "s_add_co_u32", "s_addc_co_u32": "s_add_co_ci_u32", "srd3": "0x30804000",
    "v_mad_u64_u32": "v_mad_co_u64_u32", "v_max_f32": "v_max_num_f32", "v_min_f32": "v_min_num_f32",
    "v_med3_f32": "v_med3_num_f32", "wait_vmem1": "s_wait_loadcnt 0x1", "atomic_rtn": "th:TH_ATOMIC_RETURN",
}
_GFX94 = {**_GFX9, "atomic_rtn": "sc0"}
DIALECTS = {"gfx90a": _GFX9, "gfx942": _GFX94, "gfx950": _GFX94, "gfx1100": _GFX11, "gfx1201": _GFX12,
            "gfx1200": _GFX12}


def dialect(arch: str, body: str) -> str:
    """Fill `{name}` placeholders of a body with the architecture's spelling."""
    return body.format(**DIALECTS[arch])
