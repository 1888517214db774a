"""The one way to run a kernel on the emulator: `verify-library` and the emulator tests both launch here.

A `Launch` is one dispatch, fixed before it runs: the code object's emulator and the kernel's name, the
grid and workgroup size, the kernarg bytes, the device memory holding the named buffers the arguments
point at (A, B, C, D, the epilogue's vectors, a split-K call's workspace and Synchronizer, the amax
outputs), for a grouped launch the argument table to copy into memory first, and optionally the
workgroups to run (a subset of the grid). `run` dispatches one, `run_all` several in order on their
memory (a MultipleBuffer split-K call: the GEMM kernel, then the runtime's conversion kernel).

The builders make a launch the way the runtime would: `gemm` (argType 0) and `grouped` (argType 1 and
2) with the arguments packed from the `.dat` entry (runtime_args), `conversion` and
`grouped_conversion` with the conversion kernels' records (host.conversion). Grids and workgroup counts
are the host package's (host.grid); a call without workgroups (an empty problem) runs nothing.

Before a dispatch the kernarg bytes of an inline launch must reach the end of every argument the kernel
declares (a grouped launch's are in its table), and a
memory fault names the buffer the faulting address belongs to, so a launch packed for another kernel
or a buffer smaller than the problem fails with one clear message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray

from tensile_lite.emu import DeviceMemory, Emulator, LaunchError, MemoryFault
from tensile_lite.host import ARG_TYPE_INLINE, ARG_TYPE_TABLE, EpilogueArgs, GemmProblem, launch_grid, tiles
from tensile_lite.host import conversion as host_conversion
from tensile_lite.verify import runtime_args
from tensile_lite.verify.runtime_view import RuntimeSolution

LaunchId = tuple[int, int, int]


@attrs.frozen(slots=True)
class Buffers:
    """The named device buffers of one GEMM call in one memory: each one's address, and the element
    type and count it was placed with (what reading it back returns)."""

    memory: DeviceMemory = attrs.field(eq=False, repr=False)
    addresses: Mapping[str, int]
    layouts: Mapping[str, tuple[np.dtype[Any], int]] = attrs.field(repr=False)

    def __contains__(self, name: str) -> bool:
        return name in self.addresses

    def read(self, name: str) -> NDArray[Any]:
        """A copy of buffer `name`'s contents now."""
        dtype, count = self.layouts[name]
        return self.memory.array(self.addresses[name], dtype, count)

    def size(self, name: str) -> int:
        dtype, count = self.layouts[name]
        return dtype.itemsize * count


def place(memory: DeviceMemory, contents: Mapping[str, NDArray[Any]], onto: Buffers | None = None) -> Buffers:
    """`contents` copied into `memory`, by name (added to `onto`'s buffers, in the same memory, when given)."""
    addresses = dict(onto.addresses) if onto is not None else {}
    layouts = dict(onto.layouts) if onto is not None else {}
    for name, data in contents.items():
        addresses[name] = memory.alloc(data)
        layouts[name] = (data.dtype, data.size)
    return Buffers(memory, addresses, layouts)


def place_group(memory: DeviceMemory, contents: Sequence[Mapping[str, NDArray[Any]]],
                shared: Iterable[str] = ()) -> tuple[Buffers, ...]:
    """Each GEMM's buffers of a grouped launch in one memory; the buffers named in `shared` are one for
    the whole launch (the first GEMM's contents), as the runtime shares them."""
    common = frozenset(shared)
    first: dict[str, int] = {}
    out = []
    for gemm in contents:
        addresses, layouts = {}, {}
        for name, data in gemm.items():
            if name in common and name in first:
                addresses[name] = first[name]
            else:
                addresses[name] = memory.alloc(data)
                if name in common:
                    first[name] = addresses[name]
            layouts[name] = (data.dtype, data.size)
        out.append(Buffers(memory, addresses, layouts))
    return tuple(out)


@attrs.frozen(slots=True)
class Table:
    """Argument bytes a launch reads from device memory (a grouped launch's records), copied there first."""

    address: int
    data: bytes = attrs.field(repr=False)


@attrs.frozen(slots=True)
class Launch:
    emulator: Emulator = attrs.field(eq=False, repr=False)
    kernel: str
    grid: LaunchId
    workgroup: LaunchId
    kernargs: bytes = attrs.field(repr=False)
    memory: DeviceMemory = attrs.field(eq=False, repr=False)
    buffers: tuple[Buffers, ...] = attrs.field(default=(), repr=False)  # per GEMM, to name a faulting address
    table: Table | None = None
    workgroups: tuple[LaunchId, ...] | None = None  # only these, in this order (None: the whole grid)

    def only(self, workgroups: Iterable[LaunchId]) -> Launch:
        return attrs.evolve(self, workgroups=tuple(workgroups))


@attrs.frozen(slots=True)
class Ran:
    """What one or more dispatches executed."""

    instructions: int = 0
    workgroups: int = 0

    def __add__(self, other: Ran) -> Ran:
        return Ran(self.instructions + other.instructions, self.workgroups + other.workgroups)


def run(launch: Launch) -> Ran:
    """Dispatch `launch` on its memory. LaunchError when its arguments stop short of what the kernel
    declares; MemoryFault (naming the buffer) when the kernel accesses memory outside every buffer."""
    if launch.workgroups == ():
        return Ran()
    _check_arguments(launch)
    if launch.table is not None:
        launch.memory.write(launch.table.address, launch.table.data)
    try:
        stats = launch.emulator.launch(launch.kernel, grid=launch.grid, block=launch.workgroup,
                                       kernargs=launch.kernargs, memory=launch.memory, workgroups=launch.workgroups)
    except MemoryFault as exc:
        raise MemoryFault(f"{exc.message}{_owners(launch, exc.message)}") from None
    return Ran(stats.instructions, stats.workgroups)


def run_all(launches: Iterable[Launch]) -> Ran:
    """Dispatch each launch in turn (each sees what the previous ones wrote to the same memory)."""
    total = Ran()
    for launch in launches:
        total += run(launch)
    return total


def _check_arguments(launch: Launch) -> None:
    if launch.table is not None:
        return  # the arguments are in the table; the kernarg segment holds the header and pointers only
    args = launch.emulator.kernel(launch.kernel).metadata.get(".args") or []
    ends = [(int(a.get(".offset", 0)) + int(a.get(".size", 0)), str(a.get(".name", "?"))) for a in args
            if not str(a.get(".value_kind", "")).startswith("hidden_")]
    if ends:
        end, name = max(ends)
        if len(launch.kernargs) < end:
            raise LaunchError(f"kernel {launch.kernel} declares arguments up to byte {end} ({name}); the launch "
                              f"packs {len(launch.kernargs)} bytes")


def _owners(launch: Launch, message: str) -> str:
    """Which named buffer each address in a fault message falls in or follows (the nearest below it)."""
    named = [(addr, b.size(name), f"{name} of GEMM {i}" if len(launch.buffers) > 1 else name)
             for i, b in enumerate(launch.buffers) for name, addr in b.addresses.items()]
    notes = []
    for text in dict.fromkeys(re.findall(r"0x[0-9a-fA-F]+", message)):
        address = int(text, 16)
        below = [n for n in named if n[0] <= address]
        if below:
            base, size, name = max(below)
            where = "inside" if address < base + size else f"{address - base - size} bytes past the end of"
            notes.append(f"{text} is {where} buffer {name} ({size} bytes at {base:#x})")
    return f" ({'; '.join(notes)})" if notes else ""


def _ids(workgroups: Iterable[LaunchId] | None, count: int) -> tuple[LaunchId, ...] | None:
    """The workgroups to run: none for a call without any, else those given (None: all)."""
    if count == 0:
        return ()
    return tuple(workgroups) if workgroups is not None else None


def gemm(emulator: Emulator, kernel: str, rs: RuntimeSolution, problem: GemmProblem, buffers: Buffers,
         alpha: float, beta: float, epilogue: EpilogueArgs | None = None, *, gsu: int | None = None,
         gemm_count: int = 1, arg_type: int = ARG_TYPE_INLINE,
         workgroups: Iterable[LaunchId] | None = None) -> Launch:
    """One argType-0 call of `kernel` on `problem` with the runtime's arguments and grid; `gsu` is the
    user's GSU override (runtime_args.launch_gsu)."""
    sol = rs.solution
    used = runtime_args.launch_gsu(rs, gsu)
    kernargs = runtime_args.pack(rs, problem, buffers.addresses, alpha, beta, epilogue, gsu=gsu,
                                 gemm_count=gemm_count, arg_type=arg_type)
    grid = launch_grid(sol, problem, gsu=used, args_version=runtime_args.version(rs))
    return Launch(emulator, kernel, grid, (sol.num_threads, 1, 1), kernargs, buffers.memory, (buffers,),
                  workgroups=_ids(workgroups, tiles(sol, problem, gsu=used)))


def grouped(emulator: Emulator, kernel: str, rs: RuntimeSolution, problems: Sequence[GemmProblem],
            buffers: Sequence[Buffers], alphas: Sequence[float], betas: Sequence[float],
            epilogues: Sequence[EpilogueArgs | None], *, arg_type: int = ARG_TYPE_TABLE,
            workgroups: Iterable[LaunchId] | None = None) -> Launch:
    """One grouped launch over `problems` (argType 1: the library's table, 2: user arguments), 1-D over
    every GEMM's workgroups; the table goes into the GEMMs' memory."""
    sol = rs.solution
    memory = buffers[0].memory
    addresses = [b.addresses for b in buffers]
    # the table's size does not depend on where it is: pack once to size it, then at its address
    _, sizing = runtime_args.pack_grouped(rs, problems, addresses, alphas, betas, epilogues, arg_type=arg_type)
    address = memory.alloc(max(len(sizing), 1))
    kernargs, table = runtime_args.pack_grouped(rs, problems, addresses, alphas, betas, epilogues,
                                                arg_type=arg_type, table_address=address)
    count = sum(tiles(sol, p) for p in problems)
    return Launch(emulator, kernel, (max(count, 1), 1, 1), (sol.num_threads, 1, 1), kernargs, memory,
                  tuple(buffers), Table(address, table), _ids(workgroups, count))


def conversion(helper: Emulator, rs: RuntimeSolution, name: host_conversion.ConversionKernelName,
               call: host_conversion.ConversionCall, memory: DeviceMemory,
               workgroups: Iterable[LaunchId] | None = None) -> Launch:
    """The runtime's conversion launch `name` of a MultipleBuffer call, after its GEMM launch on the same
    memory: `host_conversion.THREADS` threads per workgroup over the call's elements."""
    pt = rs.problem_type
    count = host_conversion.work_groups(pt, call.problem, name.vw)
    return Launch(helper, name.name, (max(count, 1), 1, 1), (host_conversion.THREADS, 1, 1),
                  host_conversion.pack_call(pt, call), memory, workgroups=_ids(workgroups, count))


def grouped_conversion(helper: Emulator, rs: RuntimeSolution, name: host_conversion.ConversionKernelName,
                       calls: Sequence[host_conversion.ConversionCall], memory: DeviceMemory) -> Launch:
    """The grouped (`_GG`) conversion launch after a grouped MultipleBuffer argType-1 launch: every GEMM's
    record in a table in `memory`, one 1-D grid over all their elements."""
    pt = rs.problem_type
    _, sizing = host_conversion.pack_grouped(pt, calls, name.vw, 0)
    address = memory.alloc(max(len(sizing), 1))
    kernargs, table = host_conversion.pack_grouped(pt, calls, name.vw, address)
    count = sum(host_conversion.work_groups(pt, c.problem, name.vw) for c in calls)
    return Launch(helper, name.name, (max(count, 1), 1, 1), (host_conversion.THREADS, 1, 1), kernargs, memory,
                  table=Table(address, table), workgroups=_ids(None, count))
