"""Run a kernel of a real code object on the CPU: dispatch state, workgroups, waves and barriers.

    emu = Emulator("lib.co")          # plain ELF, or an offload bundle holding it (compressed or not)
    mem = DeviceMemory()
    a = mem.alloc(np.arange(64, dtype=np.float32))
    emu.launch("kernel", grid=(1, 1, 1), block=(64, 1, 1), kernargs=struct.pack("<Q", a), memory=mem)

Workgroups run one after another; the waves of a workgroup run round-robin, each until it reaches a
barrier or ends, and the barrier releases when every wave that has not ended is waiting at it.
"""

from __future__ import annotations

import struct
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

import attrs
import numpy as np

from tensile_lite.codeobj.bundle import PLAIN_ELF, read_code_object_file
from tensile_lite.codeobj.elf import CodeObjectInfo, read_code_object
from tensile_lite.codeobj.toolchain import Toolchain, find_toolchain_for
from tensile_lite.emu.access import Ctx
from tensile_lite.emu.arch import ArchInfo, arch_info, gfx_from_e_flags, gfx_from_target
from tensile_lite.emu.descriptor import KernelDescriptor
from tensile_lite.emu.disasm import CodeLayout, Disassembly, code_layout, decode_line, disassemble
from tensile_lite.emu.errors import CodeObjectError, EmulatorError, HazardError, LaunchError
from tensile_lite.emu.hazards import wait_states_for
from tensile_lite.emu.memory import DeviceMemory
from tensile_lite.emu.operands import TTMP0
from tensile_lite.emu.program import Program, compile_program
from tensile_lite.emu.sdwa import SCRATCH_COLUMNS
from tensile_lite.emu.state import BARRIER, END, POISON32, MemoryContext, Wave, Workgroup
from tensile_lite.errors import BuildError

# Above this much code, each kernel is disassembled on its own instead of the whole `.text` at once.
_WHOLE_TEXT_LIMIT = 1 << 20
_KERNARG_SLACK = 256  # kernels bulk-load kernargs with wide s_loads that read past the last argument
_POISON_BYTE = 0xAD
# Firmware that preloads kernel arguments starts the wave this many bytes past the entry
# (AMDGPUUsage, "Preloaded Kernel Arguments"); older firmware starts at the entry.
_PRELOAD_ENTRY_SKIP = 256


@attrs.frozen(slots=True)
class LaunchStats:
    kernel: str
    workgroups: int
    waves: int
    instructions: int
    seconds: float


@attrs.frozen(slots=True)
class KernelImage:
    """One kernel as the emulator sees it: descriptor, metadata, wave size and compiled program."""

    name: str
    arch: ArchInfo
    descriptor: KernelDescriptor
    metadata: dict = attrs.field(hash=False)
    lanes: int
    program: Program


class Emulator:
    """Emulates the kernels of one code object. Disassembly and compiled kernels are cached."""

    def __init__(self, code_object: str | Path, *, toolchain: Toolchain | None = None,
                 check_hazards: bool = True, lds_races: bool = True, lds_out_of_bounds: str = "error",
                 max_instructions_per_wave: int = 50_000_000, kernarg_preload: bool = True) -> None:
        """`kernarg_preload`: the emulated firmware preloads kernel arguments into SGPRs where a
        kernel's descriptor asks (False: firmware without the feature; `launch` can override)."""
        if lds_out_of_bounds not in ("error", "hardware"):
            raise LaunchError("lds_out_of_bounds must be 'error' or 'hardware'")
        self.path = Path(code_object)
        self._toolchain = toolchain
        self.check_hazards = check_hazards
        self.lds_races = lds_races
        self.lds_out_of_bounds = lds_out_of_bounds
        self.max_instructions = max_instructions_per_wave
        self.kernarg_preload = kernarg_preload
        try:
            self.info: CodeObjectInfo = read_code_object(self.path)
        except BuildError as exc:
            raise CodeObjectError(exc.message) from None
        # llvm-objdump and the layout reader need the ELF itself on disk: a bundled `.co` (ROCm 7.x) is
        # unpacked once, into a folder removed with this emulator.
        self._unbundled: tempfile.TemporaryDirectory[str] | None = None
        self.elf_path = self.path
        if self.info.container != PLAIN_ELF:
            self._unbundled = tempfile.TemporaryDirectory(prefix="tensile-lite-emu-")
            self.elf_path = Path(self._unbundled.name) / f"{self.path.name}.elf"
            try:
                self.elf_path.write_bytes(read_code_object_file(self.path))
            except (OSError, BuildError) as exc:
                raise CodeObjectError(f"cannot unpack the code object of {self.path}: {exc}") from None
        self.gfx = self._target_gfx()
        self.arch = arch_info(self.gfx)
        self._disassembly: dict[bool, Disassembly] = {}
        self._layout: CodeLayout | None = None
        self._kernels: dict[str, KernelImage] = {}

    def _target_gfx(self) -> str:
        if self.info.target:
            return gfx_from_target(self.info.target)
        from elftools.elf.elffile import ELFFile
        with self.elf_path.open("rb") as f:
            gfx = gfx_from_e_flags(ELFFile(f).header.e_flags)
        if gfx is None:
            raise CodeObjectError(f"{self.path}: no amdhsa.target in the metadata and unknown e_flags")
        return gfx

    @property
    def toolchain(self) -> Toolchain:
        if self._toolchain is None:
            # the first toolchain that knows the target (gfx940/941 need an LLVM older than 21)
            self._toolchain = find_toolchain_for(self.gfx)
        return self._toolchain

    def kernel_names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.info.kernels if k.descriptor)

    def kernel(self, name: str) -> KernelImage:
        """Decode and compile `name` (once)."""
        image = self._kernels.get(name)
        if image is None:
            image = self._build(name)
            self._kernels[name] = image
        return image

    def release(self, name: str) -> None:
        """Forget the compiled image of `name` (a later `kernel` or `launch` builds it again): a
        compiled kernel holds tens of MB, so a caller going through many kernels of one code object
        releases each when done with it. Unknown names are ignored."""
        self._kernels.pop(name, None)

    def problems(self, name: str) -> dict[str, str]:
        """Instructions of the kernel that cannot be emulated (mnemonic -> reason); empty when all can."""
        return dict(self.kernel(name).program.problems)

    def _build(self, name: str) -> KernelImage:
        try:
            info = self.info.kernel(name)
        except KeyError:
            raise CodeObjectError(f"{self.path} has no kernel {name!r}; it has "
                                  + ", ".join(self.kernel_names())) from None
        desc = KernelDescriptor.from_bytes(info.descriptor, name)
        arch = self.arch
        # The emulator rounds to nearest even and keeps f16/f64 denormals (mode 3); f32 denormal
        # flushing (modes 0-2) is emulated by flushing inputs and outputs of f32 arithmetic.
        if desc.float_round_mode_32 or desc.float_round_mode_16_64:
            raise CodeObjectError(f"kernel {name}: float round modes {desc.float_round_mode_32}/"
                                  f"{desc.float_round_mode_16_64} are not emulated (only round-to-nearest-even)")
        if desc.float_denorm_mode_16_64 != 3:
            raise CodeObjectError(f"kernel {name}: float_denorm_mode_16_64 {desc.float_denorm_mode_16_64} "
                                  "(flushing f16/f64 denormals) is not emulated")
        lanes = 32 if desc.wave32 else 64
        if lanes not in arch.wave_sizes:
            raise CodeObjectError(f"kernel {name}: wave{lanes} is not valid on {arch.gfx}")
        wave64 = None if arch.wave_sizes == (64,) else lanes == 64
        instrs = tuple(decode_line(ln) for ln in self._kernel_lines(name, wave64))
        accum = desc.accum_offset(arch)
        vgprs = desc.allocated_vgprs(arch, lanes)
        ctx = Ctx(arch=arch, lanes=lanes, kernel=name, vgprs=vgprs, accum_offset=accum,
                  sgprs=desc.allocated_sgprs(arch), flush_f32=desc.float_denorm_mode_32 != 3,
                  check_hazards=self.check_hazards, hazards=wait_states_for(arch))
        program = compile_program(name, instrs, ctx)
        return KernelImage(name, arch, desc, dict(info.metadata), lanes, program)

    def _kernel_lines(self, name: str, wave64: bool | None):
        if self._layout is None:
            self._layout = code_layout(self.elf_path, frozenset(self.kernel_names()))
        span = self._layout.ranges.get(name)
        if span is None:
            raise CodeObjectError(f"{self.path}: kernel {name!r} has no symbol in .text")
        if self._layout.text_size > _WHOLE_TEXT_LIMIT:
            return disassemble(self.toolchain, self.elf_path, wave64=wave64, span=span).lines_in(*span)
        dis = self._disassembly.get(bool(wave64))
        if dis is None:
            dis = disassemble(self.toolchain, self.elf_path, wave64=wave64)
            self._disassembly[bool(wave64)] = dis
        return dis.lines_in(*span)

    # -------------------------------------------------------------------------------------------
    def launch(self, kernel: str, *, grid: tuple[int, int, int], block: tuple[int, int, int],
               kernargs: bytes, memory: DeviceMemory, dynamic_lds: int = 0,
               workgroups: Iterable[tuple[int, int, int]] | None = None,
               preload: bool | None = None) -> LaunchStats:
        """Run `kernel` on a grid of `grid` workgroups of `block` work-items (hipModuleLaunchKernel's
        gridDim/blockDim), or only the listed `workgroups` of that grid. `preload` says whether the
        firmware preloads kernel arguments (None: the emulator's `kernarg_preload`); it matters only
        for kernels whose descriptor asks for it."""
        image = self.kernel(kernel)
        desc = image.descriptor
        grid = _dims(grid, "grid")
        block = _dims(block, "block")
        threads = block[0] * block[1] * block[2]
        if threads > 1024:
            raise LaunchError(f"block {block} has {threads} work-items; at most 1024")
        meta_max = image.metadata.get(".max_flat_workgroup_size")
        if isinstance(meta_max, int) and threads > meta_max:
            raise LaunchError(f"block {block} has {threads} work-items but kernel {kernel} declares "
                              f".max_flat_workgroup_size {meta_max}")
        lds_bytes = desc.group_segment_fixed_size + dynamic_lds
        if lds_bytes > image.arch.max_lds_bytes:
            raise LaunchError(f"kernel {kernel} needs {lds_bytes} bytes of LDS; {image.arch.gfx} has "
                              f"{image.arch.max_lds_bytes}")
        if desc.private_segment_enabled or desc.private_segment_fixed_size:
            raise LaunchError(f"kernel {kernel} uses scratch (private segment), which is not emulated")
        kernarg_size = max(desc.kernarg_size, int(image.metadata.get(".kernarg_segment_size", 0) or 0))
        if len(kernargs) > kernarg_size and kernarg_size:
            raise LaunchError(f"{len(kernargs)} bytes of kernel arguments for kernel {kernel}, whose "
                              f"kernarg segment is {kernarg_size} bytes")
        segment = np.full(max(kernarg_size, len(kernargs)) + _KERNARG_SLACK, _POISON_BYTE, dtype=np.uint8)
        segment[:len(kernargs)] = np.frombuffer(bytes(kernargs), dtype=np.uint8)
        kernarg_addr = memory.alloc(segment, align=64)
        preloading = desc.kernarg_preload_dwords > 0 and (self.kernarg_preload if preload is None else preload)
        # the hardware copies from the segment as the kernel's own loads would see it
        source = segment.tobytes() if preloading else None
        first_pc = _preloaded_start(image) if preloading else 0
        dispatch_addr = memory.alloc(_dispatch_packet(grid, block, desc, kernarg_addr), align=64)
        ids = list(workgroups) if workgroups is not None else [
            (x, y, z) for z in range(grid[2]) for y in range(grid[1]) for x in range(grid[0])]
        mem = MemoryContext(memory, self.lds_out_of_bounds)
        start = time.perf_counter()
        total = waves = 0
        with np.errstate(all="ignore"):
            for wg_id in ids:
                if not all(0 <= wg_id[d] < grid[d] for d in range(3)):
                    raise LaunchError(f"workgroup {wg_id} is outside the grid {grid}")
                n, nw = self._run_workgroup(image, wg_id, block, lds_bytes, mem, kernarg_addr,
                                            dispatch_addr, source, first_pc)
                total += n
                waves += nw
        return LaunchStats(kernel, len(ids), waves, total, time.perf_counter() - start)

    def _run_workgroup(self, image: KernelImage, wg_id: tuple[int, int, int], block: tuple[int, int, int],
                       lds_bytes: int, mem: MemoryContext, kernarg_addr: int, dispatch_addr: int,
                       preload_source: bytes | None, start: int) -> tuple[int, int]:
        wg = Workgroup(wg_id, lds_bytes, self.lds_races and self.check_hazards, mem)
        waves = _make_waves(image, wg, wg_id, block, kernarg_addr, dispatch_addr, preload_source, start)
        while True:
            for w in waves:
                if not w.ended and not w.at_barrier:
                    self._run_wave(image, w)
            live = [w for w in waves if not w.ended]
            if not live:
                break
            for w in live:
                w.at_barrier = False
            wg.barrier_generation += 1
        return sum(w.icount for w in waves), len(waves)

    def _run_wave(self, image: KernelImage, w: Wave) -> None:
        ops = image.program.ops
        pc = w.pc
        n = 0
        budget = self.max_instructions - w.icount
        try:
            while True:
                r = ops[pc](w)
                w.clock += 1
                n += 1
                if r is None:
                    pc += 1
                elif r >= 0:
                    pc = r
                    if n > budget:
                        raise EmulatorError(f"wave did not finish within {self.max_instructions} "
                                            "instructions (endless loop?)")
                elif r == END:
                    w.ended = True
                    break
                elif r == BARRIER:
                    pc += 1
                    w.at_barrier = True
                    break
        except EmulatorError as exc:
            message = exc.message
            if pc < len(image.program.instrs):
                message = message.removeprefix(f"`{image.program.instrs[pc].text}`: ")
            raise type(exc)(self._where(image, w, pc) + message) from None
        except Exception as exc:  # an emulator bug: keep the trace, add where it happened
            raise EmulatorError(self._where(image, w, pc) + f"internal error: {exc!r}") from exc
        finally:
            w.pc = pc
            w.icount += n

    def _where(self, image: KernelImage, w: Wave, pc: int) -> str:
        instrs = image.program.instrs
        at = f"{instrs[pc].address:#x} `{instrs[pc].text}`" if pc < len(instrs) else "end of code"
        return f"kernel {image.name}, workgroup {w.workgroup.id}, wave {w.wave_id}, at {at}: "


def _dims(v: tuple[int, ...], what: str) -> tuple[int, int, int]:
    t = tuple(int(x) for x in v) + (1,) * (3 - len(tuple(v)))
    if len(t) != 3 or any(x < 1 for x in t):
        raise LaunchError(f"{what} must be 1 to 3 positive sizes, got {v}")
    return t


def _dispatch_packet(grid: tuple[int, int, int], block: tuple[int, int, int], desc: KernelDescriptor,
                     kernarg_addr: int) -> bytes:
    """An AQL kernel dispatch packet, for kernels that ask for the dispatch pointer."""
    dims = 3 if grid[2] > 1 or block[2] > 1 else (2 if grid[1] > 1 or block[1] > 1 else 1)
    return struct.pack("<HHHHHHIIIIIQQQQ", 0, dims, *block, 0, *(g * b for g, b in zip(grid, block, strict=True)),
                       desc.private_segment_fixed_size, desc.group_segment_fixed_size, 0, kernarg_addr, 0, 0)


def _preloaded_start(image: KernelImage) -> int:
    """Index of the instruction where preloading firmware starts the kernel (entry + 256 bytes)."""
    instrs = image.program.instrs
    target = instrs[0].address + _PRELOAD_ENTRY_SKIP if instrs else None
    index = image.program.index_of(target) if target is not None else None
    if index is None:
        raise CodeObjectError(f"kernel {image.name} asks for kernarg preload but no instruction starts "
                              f"{_PRELOAD_ENTRY_SKIP} bytes past its entry, where preloading firmware begins")
    return index


def _make_waves(image: KernelImage, wg: Workgroup, wg_id: tuple[int, int, int], block: tuple[int, int, int],
                kernarg_addr: int, dispatch_addr: int, preload_source: bytes | None, start: int) -> list[Wave]:
    desc, arch, lanes = image.descriptor, image.arch, image.lanes
    threads = block[0] * block[1] * block[2]
    nwaves = -(-threads // lanes)
    vgprs = image.program.ctx.vgprs + SCRATCH_COLUMNS
    counters = arch.counter_names()
    tid = np.arange(threads)
    tx, ty, tz = tid % block[0], (tid // block[0]) % block[1], tid // (block[0] * block[1])
    dims = desc.workitem_id_dims
    packed = tx | ((ty << 10) if dims >= 1 else 0) | ((tz << 20) if dims >= 2 else 0)
    sgprs = _initial_sgprs(image, wg_id, kernarg_addr, dispatch_addr, preload_source)
    waves = []
    for k in range(nwaves):
        w = Wave(k, lanes, vgprs, counters, wg)
        w.accum_offset = image.program.ctx.accum_offset
        w.pc = start
        first, last = k * lanes, min((k + 1) * lanes, threads)
        w.v[: last - first, 0] = packed[first:last]
        for slot, value in sgprs.items():
            w.s[slot] = value & 0xFFFFFFFF
        if arch.wg_ids_in_ttmp:
            w.s[TTMP0 + 9] = wg_id[0]
            w.s[TTMP0 + 7] = (wg_id[1] & 0xFFFF) | ((wg_id[2] & 0xFFFF) << 16)
        w.set_exec((1 << (last - first)) - 1)
        waves.append(w)
    return waves


def _initial_sgprs(image: KernelImage, wg_id: tuple[int, int, int], kernarg_addr: int, dispatch_addr: int,
                   preload_source: bytes | None) -> dict[int, int]:
    """SGPR values at wave start, in the order AMDGPUUsage gives: user SGPRs, then system SGPRs.
    The preloaded kernarg dwords come from `preload_source`; None (firmware without preload) leaves
    their SGPRs unwritten, while USER_SGPR_COUNT still places the system SGPRs after them."""
    desc = image.descriptor
    flags = desc.user_sgpr_flags
    out: dict[int, int] = {}
    n = 0

    def put(value: int, count: int) -> None:
        nonlocal n
        for k in range(count):
            out[n + k] = (value >> (32 * k)) & 0xFFFFFFFF
        n += count

    if flags["private_segment_buffer"]:
        put(POISON32 | (POISON32 << 32) | (POISON32 << 64) | (POISON32 << 96), 4)
    if flags["dispatch_ptr"]:
        put(dispatch_addr, 2)
    if flags["queue_ptr"]:
        put(POISON32 | (POISON32 << 32), 2)
    if flags["kernarg_segment_ptr"]:
        put(kernarg_addr, 2)
    if flags["dispatch_id"]:
        put(0, 2)
    if flags["flat_scratch_init"]:
        put(POISON32 | (POISON32 << 32), 2)
    if flags["private_segment_size"]:
        put(0, 1)
    preload = desc.kernarg_preload_dwords
    if preload and preload_source is not None:
        raw = preload_source + bytes(4 * (desc.kernarg_preload_offset + preload))
        words = struct.unpack_from(f"<{preload}I", raw, 4 * desc.kernarg_preload_offset)
        for word in words:
            put(word, 1)
    else:
        n += preload
    if n > desc.user_sgpr_count:
        raise CodeObjectError(f"kernel {image.name}: the descriptor enables {n} user SGPRs but "
                              f"USER_SGPR_COUNT is {desc.user_sgpr_count}")
    n = desc.user_sgpr_count
    if not image.arch.wg_ids_in_ttmp:
        for dim, enabled in enumerate(desc.workgroup_id_enabled):
            if enabled:
                put(wg_id[dim], 1)
    if desc.workgroup_info_enabled:
        put(0, 1)
    return out


__all__ = ["Emulator", "HazardError", "KernelImage", "LaunchStats"]
