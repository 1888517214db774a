"""The parts of a kernel around its instructions, generated from data: the typed argument list and
its packed offsets, the header (`.amdgcn_target`, symbol, entry label), and the trailer (the
`.amdhsa_kernel` descriptor and the `.amdgpu_metadata` document).

The trailer comes after the body on purpose: the register counts are the allocator's high-water
marks, known only once the body is written, and the assembler accepts the descriptor anywhere.
So a kernel streams as header, body, trailer. Formats: `spec/kernel_anatomy.md` §1.3-1.5.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import yaml

from tensile_lite.asm.arch import Arch, get_arch
from tensile_lite.asm.errors import AsmError
from tensile_lite.asm.operands import Reg, sgpr, vgpr
from tensile_lite.asm.registers import RegisterCounts, Registers, accum_offset
from tensile_lite.asm.writer import has_comment_marker
from tensile_lite.model.elements import ELEMENT_TYPES, STRUCT

# Sizes of by-value kernel arguments: the element types' metadata types (the element-type registry)
# and the others the metadata knows (unsigned offsets and counts, packed f16 pairs, opaque structs).
VALUE_TYPE_SIZES: Mapping[str, int] = {
    **{t.value_type: t.storage_bytes for t in ELEMENT_TYPES if t.value_type != STRUCT},
    "u8": 1, "i16": 2, "u16": 2, "u32": 4, "u64": 8, "pkf16": 4, STRUCT: 8,
}
BY_VALUE = "by_value"
GLOBAL_BUFFER = "global_buffer"
# amdhsa.version per code object version: upstream writes [1,1] for v4 and [1,2] for v5; v6 is [1,3].
METADATA_VERSIONS: Mapping[int, tuple[int, int]] = {4: (1, 1), 5: (1, 2), 6: (1, 3)}
# The hardware initialises at most 16 user SGPRs (USER_SGPR_COUNT); the kernarg pointer takes two.
MAX_USER_SGPRS = 16
KERNARG_POINTER_SGPRS = 2
MAX_KERNARG_PRELOAD = MAX_USER_SGPRS - KERNARG_POINTER_SGPRS

_SYMBOL = re.compile(r"^[A-Za-z_][A-Za-z0-9_.$]*$")


@attrs.frozen(slots=True)
class KernelArgument:
    """One kernel argument as the `.args` metadata describes it (size in bytes)."""

    name: str
    size: int
    value_kind: str
    value_type: str
    address_space: str | None = None

    def __attrs_post_init__(self) -> None:
        if self.value_kind not in (BY_VALUE, GLOBAL_BUFFER):
            raise AsmError(f"kernel argument {self.name!r}: value_kind must be {BY_VALUE} or {GLOBAL_BUFFER}")
        if self.size <= 0:
            raise AsmError(f"kernel argument {self.name!r}: size must be positive, got {self.size}")
        if "\n" in self.name or has_comment_marker(self.name):
            raise AsmError(f"kernel argument name {self.name!r} may not contain newlines or comment markers")

    @classmethod
    def value(cls, name: str, value_type: str) -> KernelArgument:
        """A by-value argument; its size follows from the type (u32 -> 4, f64 -> 8, pkf16 -> 4...)."""
        size = VALUE_TYPE_SIZES.get(value_type)
        if size is None:
            raise AsmError(f"kernel argument {name!r}: unknown value type {value_type!r}")
        return cls(name, size, BY_VALUE, value_type)

    @classmethod
    def pointer(cls, name: str, value_type: str = "struct", address_space: str = "generic") -> KernelArgument:
        """A global buffer pointer (8 bytes)."""
        return cls(name, 8, GLOBAL_BUFFER, value_type, address_space)


@attrs.frozen(slots=True)
class PlacedArgument:
    argument: KernelArgument
    offset: int


@attrs.frozen(slots=True)
class ArgumentLayout:
    """Arguments with their offsets. Packing is tight with no alignment padding, because the
    runtime's `KernelArguments::append` memcpys each value at the current end (spec §1.1)."""

    arguments: tuple[PlacedArgument, ...]
    size: int               # sum of the sizes
    segment_size: int       # `.kernarg_segment_size`: size rounded up to 8

    def offset_of(self, name: str) -> int:
        for p in self.arguments:
            if p.argument.name == name:
                return p.offset
        raise KeyError(name)


def pack_arguments(arguments: Sequence[KernelArgument]) -> ArgumentLayout:
    """Offsets of tightly packed arguments and the 8-byte-aligned segment size."""
    placed = []
    offset = 0
    for arg in arguments:
        placed.append(PlacedArgument(arg, offset))
        offset += arg.size
    return ArgumentLayout(tuple(placed), offset, (offset + 7) // 8 * 8)


def _arch_of(arch: str | Arch) -> Arch:
    return get_arch(arch) if isinstance(arch, str) else arch


def _argument_tuple(arguments: Iterable[KernelArgument]) -> tuple[KernelArgument, ...]:
    # A typed converter: the attrs plugin cannot see through a bare `tuple` converter.
    return tuple(arguments)


@attrs.frozen(slots=True)
class KernelSpec:
    """Everything the header and trailer need except the register counts."""

    name: str
    arch: Arch = attrs.field(converter=_arch_of)
    arguments: tuple[KernelArgument, ...] = attrs.field(converter=_argument_tuple)
    workgroup_size: int               # threads per workgroup (`.max_flat_workgroup_size`)
    lds_bytes: int = 0
    # which system SGPRs carry workgroup ids x, y, z (upstream enables z only when batched)
    workgroup_ids: tuple[bool, bool, bool] = (True, True, False)
    code_object_version: int = 4
    wavefront_size: int | None = None  # None: the target's
    float_denorm_mode_32: int = 3
    float_denorm_mode_16_64: int = 3
    # Leading kernarg dwords the hardware copies into s[2:2+n] before the first instruction (0:
    # none). Such a kernel must begin with `preload.compat_block`: firmware with the feature starts
    # it 256 bytes past the entry, older firmware at the entry.
    kernarg_preload: int = 0
    # extra top-level metadata maps, e.g. {"custom.config": {"InternalSupportParams": {...}}}
    extra_metadata: Mapping[str, Any] | None = attrs.field(default=None, eq=False)

    def __attrs_post_init__(self) -> None:
        a = self.arch
        if not _SYMBOL.match(self.name):
            raise AsmError(f"kernel name {self.name!r} is not a valid symbol")
        if self.code_object_version not in METADATA_VERSIONS:
            raise AsmError(f"kernel {self.name}: code object version {self.code_object_version} is not one "
                           f"of {sorted(METADATA_VERSIONS)}")
        if not 0 <= self.lds_bytes <= a.lds_bytes:
            raise AsmError(f"kernel {self.name}: {self.lds_bytes} bytes of LDS exceed the {a.lds_bytes} "
                           f"of {a.name}")
        wave = self.wave
        if wave not in (32, 64) or (wave == 32 and not a.has_wave32):
            raise AsmError(f"kernel {self.name}: wavefront size {wave} is not available on {a.name}")
        if not 1 <= self.workgroup_size <= 1024 or self.workgroup_size % wave:
            raise AsmError(f"kernel {self.name}: workgroup size {self.workgroup_size} must be 1..1024 and a "
                           f"multiple of the wavefront size {wave}")
        if not self.workgroup_ids[0]:
            raise AsmError(f"kernel {self.name}: workgroup id x cannot be disabled")
        n = self.kernarg_preload
        if n:
            if not a.kernarg_preload:
                raise AsmError(f"kernel {self.name}: {a.name} cannot preload kernel arguments into SGPRs")
            # dwords past the declared arguments were never written by the runtime
            dwords = -(-self.layout.size // 4)
            if not 0 < n <= min(MAX_KERNARG_PRELOAD, dwords):
                raise AsmError(f"kernel {self.name}: kernarg preload of {n} dwords must be 1..{MAX_KERNARG_PRELOAD} "
                               f"and within the {dwords} dwords of arguments")

    @property
    def wave(self) -> int:
        return self.wavefront_size or self.arch.wavefront_size

    @property
    def layout(self) -> ArgumentLayout:
        return pack_arguments(self.arguments)

    @property
    def user_sgprs(self) -> int:
        """User SGPRs at entry: the kernarg pointer, then the preloaded dwords."""
        return KERNARG_POINTER_SGPRS + self.kernarg_preload


@attrs.frozen(slots=True)
class EntryRegisters:
    """Registers the hardware fills before the first instruction."""

    kernarg: Reg                          # s[0:1]: the kernel-argument segment pointer
    workgroup_ids: tuple[Reg | None, ...]  # x, y, z system SGPRs (None when not enabled)
    workitem_id: Reg                      # v0: flat workitem id within the workgroup
    preloaded: Reg | None = None          # s[2:2+n]: kernarg dwords 0..n-1 (None without preload)


def reserve_entry_registers(spec: KernelSpec, regs: Registers) -> EntryRegisters:
    """Claim the entry SGPRs/VGPR in the allocator: s[0:1], the preloaded dwords, then one SGPR per
    enabled workgroup id, then v0 (the SGPR order is fixed by the hardware: user SGPRs first, then
    system SGPRs)."""
    kernarg = regs.s.reserve(0, 2, "kernarg")
    n = spec.kernarg_preload
    preloaded = regs.s.reserve(KERNARG_POINTER_SGPRS, n, "kernarg_preload") if n else None
    ids: list[Reg | None] = []
    nxt = spec.user_sgprs
    for axis, enabled in zip("xyz", spec.workgroup_ids, strict=True):
        if enabled:
            ids.append(regs.s.reserve(nxt, 1, f"workgroup_id_{axis}"))
            nxt += 1
        else:
            ids.append(None)
    return EntryRegisters(kernarg, tuple(ids), regs.v.reserve(0, 1, "workitem_id"), preloaded)


def entry_registers(spec: KernelSpec) -> EntryRegisters:
    """The entry registers without an allocator (for readers such as the emulator)."""
    ids: list[Reg | None] = []
    nxt = spec.user_sgprs
    for enabled in spec.workgroup_ids:
        ids.append(sgpr(nxt) if enabled else None)
        nxt += int(enabled)
    n = spec.kernarg_preload
    return EntryRegisters(sgpr(0, 2), tuple(ids), vgpr(0), sgpr(KERNARG_POINTER_SGPRS, n) if n else None)


def _symbol_lines(spec: KernelSpec) -> list[str]:
    n = spec.name
    return [
        f'.amdgcn_target "amdgcn-amd-amdhsa--{spec.arch.name}"',
        ".text",
        f".protected {n}",
        f".globl {n}",
        ".p2align 8",
        f".type {n},@function",
    ]


def kernel_header(spec: KernelSpec) -> list[str]:
    """Lines before the first instruction when the descriptor follows the body: target, text
    section, symbol, entry label."""
    return [*_symbol_lines(spec), f"{spec.name}:"]


def descriptor_counts(spec: KernelSpec, counts: RegisterCounts) -> dict[str, int]:
    """The VGPR/SGPR figures of the descriptor and metadata (see `kernel_trailer`)."""
    a = spec.arch
    if a.unified_vgprs:
        acc = accum_offset(counts)
        next_vgpr = acc + counts.agprs
    else:
        acc = 0
        # gfx908's separate AGPR file is allocated alongside: the larger of the two counts.
        next_vgpr = max(counts.vgprs, counts.agprs)
    return {"accum_offset": acc, "next_free_vgpr": max(1, next_vgpr), "next_free_sgpr": max(1, counts.sgprs),
            "vgpr_count": counts.vgprs, "agpr_count": counts.agprs}


def descriptor_lines(spec: KernelSpec, counts: RegisterCounts) -> list[str]:
    """The `.amdhsa_kernel` block (in .rodata, 64-byte aligned), then back to .text."""
    a = spec.arch
    n = spec.name
    c = descriptor_counts(spec, counts)
    if c["next_free_sgpr"] > a.max_sgprs or counts.vgprs > a.max_vgprs:
        raise AsmError(f"kernel {n}: {counts.sgprs} SGPRs / {counts.vgprs} VGPRs exceed {a.name}")
    ids = spec.workgroup_ids
    lines = [
        ".rodata",
        ".p2align 6",
        f".amdhsa_kernel {n}",
        "  .amdhsa_user_sgpr_kernarg_segment_ptr 1",
    ]
    if spec.kernarg_preload:
        lines += [
            f"  .amdhsa_user_sgpr_count {spec.user_sgprs}",
            f"  .amdhsa_user_sgpr_kernarg_preload_length {spec.kernarg_preload}",
            "  .amdhsa_user_sgpr_kernarg_preload_offset 0",
        ]
    if a.unified_vgprs:
        lines.append(f"  .amdhsa_accum_offset {c['accum_offset']}")
    lines += [
        f"  .amdhsa_next_free_vgpr {c['next_free_vgpr']}",
        f"  .amdhsa_next_free_sgpr {c['next_free_sgpr']}",
        f"  .amdhsa_group_segment_fixed_size {spec.lds_bytes}",
        # the runtime packs arguments from the metadata; the descriptor says the same size
        f"  .amdhsa_kernarg_size {spec.layout.segment_size}",
    ]
    if a.has_wave32:
        lines.append(f"  .amdhsa_wavefront_size32 {1 if spec.wave == 32 else 0}")
    lines += [
        "  .amdhsa_private_segment_fixed_size 0",
        f"  .amdhsa_system_sgpr_workgroup_id_x {int(ids[0])}",
        f"  .amdhsa_system_sgpr_workgroup_id_y {int(ids[1])}",
        f"  .amdhsa_system_sgpr_workgroup_id_z {int(ids[2])}",
        "  .amdhsa_system_vgpr_workitem_id 0",
        f"  .amdhsa_float_denorm_mode_32 {spec.float_denorm_mode_32}",
        f"  .amdhsa_float_denorm_mode_16_64 {spec.float_denorm_mode_16_64}",
        ".end_amdhsa_kernel",
        ".text",
    ]
    return lines


def _checked(spec: KernelSpec, lines: list[str]) -> list[str]:
    for line in lines:
        if has_comment_marker(line):
            raise AsmError(f"kernel {spec.name}: generated line contains a comment marker: {line!r}")
    return lines


def kernel_trailer(spec: KernelSpec, counts: RegisterCounts) -> list[str]:
    """Lines after the last instruction: symbol size, `.amdhsa_kernel` and `.amdgpu_metadata`."""
    return _checked(spec, [f".size {spec.name}, .-{spec.name}", *descriptor_lines(spec, counts),
                           *metadata_lines(spec, counts)])


def kernel_prologue(spec: KernelSpec, counts: RegisterCounts) -> list[str]:
    """Everything before the first instruction, for callers that know the register counts up
    front (upstream's order): symbol, descriptor, metadata, entry label. End the body with
    `kernel_epilogue`."""
    return _checked(spec, [*_symbol_lines(spec), *descriptor_lines(spec, counts), *metadata_lines(spec, counts),
                           f"{spec.name}:"])


def kernel_epilogue(spec: KernelSpec) -> list[str]:
    """The line after the last instruction of a kernel started with `kernel_prologue`."""
    return [f".size {spec.name}, .-{spec.name}"]


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def metadata_lines(spec: KernelSpec, counts: RegisterCounts) -> list[str]:
    """The `.amdgpu_metadata` block: amdhsa.version per code object version, one kernel whose
    `.args` carry the packed offsets, no hidden arguments, `.vgpr_count` without AGPRs."""
    layout = spec.layout
    c = descriptor_counts(spec, counts)
    major, minor = METADATA_VERSIONS[spec.code_object_version]
    lines = [".amdgpu_metadata", "---"]
    if spec.extra_metadata:
        extra = yaml.safe_dump(dict(spec.extra_metadata), default_flow_style=False, sort_keys=True)
        lines += extra.rstrip("\n").split("\n")
    lines += [
        "amdhsa.version:",
        f"  - {major}",
        f"  - {minor}",
        "amdhsa.kernels:",
        f"  - .name: {spec.name}",
        f"    .symbol: {spec.name}.kd",
        "    .language: OpenCL C",
        "    .language_version:",
        "      - 2",
        "      - 0",
    ]
    if layout.arguments:
        lines.append("    .args:")
    else:
        lines.append("    .args: []")
    for p in layout.arguments:
        arg = p.argument
        lines += [
            f"      - .name: {_quoted(arg.name)}",
            f"        .size: {arg.size}",
            f"        .offset: {p.offset}",
            f"        .value_kind: {arg.value_kind}",
            f"        .value_type: {arg.value_type}",
        ]
        if arg.address_space is not None:
            lines.append(f"        .address_space: {arg.address_space}")
    lines += [
        f"    .group_segment_fixed_size: {spec.lds_bytes}",
        "    .kernarg_segment_align: 8",
        f"    .kernarg_segment_size: {layout.segment_size}",
        f"    .max_flat_workgroup_size: {spec.workgroup_size}",
        "    .private_segment_fixed_size: 0",
        f"    .sgpr_count: {c['next_free_sgpr']}",
        "    .sgpr_spill_count: 0",
        f"    .vgpr_count: {c['vgpr_count']}",
        "    .vgpr_spill_count: 0",
        f"    .wavefront_size: {spec.wave}",
        "...",
        ".end_amdgpu_metadata",
    ]
    return lines
