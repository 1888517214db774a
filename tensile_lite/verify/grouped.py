"""Grouped-GEMM kernels, launched the way hipBLASLt's runtime launches them (spec/epilogue_semantics.md §4):
one 1-D launch over several GEMMs whose arguments sit in device memory, either the library's table
(argType 1: wgTable, then one packed record per GEMM) or hipBLASLt's `UserArguments` array (argType 2,
only for problem types that support user arguments).

The GEMMs of a group are the kernel's cases (problems.cases: each kept inside the solution's predicates,
with edge tiles, a K tail, a batch, padded strides, alpha 0, K 0), each with its own alpha, beta and
epilogue inputs (bias type, activation). The argument bytes come from the writer's packers
(`host.pack_grouped`), with the header words the runtime derives from the `.dat` entry
(runtime_args.pack_grouped). In argType 2 structs StrideBias goes in the field hipBLASLt calls
`reserved` (which its setDeviceUserArgs leaves alone, spec §4.3): a user who batches the bias sets it.

Workgroup ids map to GEMMs as the runtime's numWorkGroups prefix sums say: the id is first remapped over
the whole launch by WorkGroupMappingXCC, then falls in one GEMM, whose tiles it walks in that GEMM's
WorkGroupMapping order (or row-major, for a kernel that ignores those arguments; both are correct and
the tiles written tell which). Small GEMMs run whole, larger ones their representative tiles only.

OutputAmaxD kernels: every GEMM has its own AddrAmaxOut and AmaxWS, and all share one AmaxSync, as they
share the runtime's Synchronizer (GEMM i counts on dword i, amax.py). In argType 1 each GEMM that ran
whole must hold its own amax and leave its counter at 0; in argType 2 (no amax fields in
UserArguments) every AddrAmaxOut must stay untouched and every counter 0.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

import attrs
import numpy as np

from tensile_lite.emu import DeviceMemory, Emulator, EmulatorError, UnsupportedInstruction
from tensile_lite.host import ARG_TYPE_TABLE, ARG_TYPE_USER
from tensile_lite.host.grouped import user_struct
from tensile_lite.verify import amax, compare, device, runtime_args
from tensile_lite.verify.errors import NotVerifiable
from tensile_lite.verify.launch import (
    FULL_GRID_LIMIT,
    Inputs,
    contents,
    e_mismatch,
    make_inputs,
    read_after,
    reference_of,
)
from tensile_lite.verify.mapping import ROW_MAJOR, Grid, LaunchId, Tile, TileOrder, representative_tiles
from tensile_lite.verify.problems import Case
from tensile_lite.verify.reference import Expected
from tensile_lite.verify.runtime_view import RuntimeSolution
from tensile_lite.verify.tensors import read_back

ARG_TYPE_NAMES = {ARG_TYPE_TABLE: "argType 1 (argument table)", ARG_TYPE_USER: "argType 2 (UserArguments)"}
# A group of fewer GEMMs than this says so in the kernel's notes.
MIN_GROUP = 3

GroupTile = tuple[int, Tile]  # (GEMM index in the group, tile of that GEMM)


def arg_types(rs: RuntimeSolution) -> list[int]:
    """The argument kinds the runtime may launch this kernel with."""
    return [ARG_TYPE_TABLE] + ([ARG_TYPE_USER] if rs.problem_type.support_user_args else [])


def notes(rs: RuntimeSolution) -> list[str]:
    """What a reader of the report should know about how this kernel's grouped launches were made."""
    out = []
    if not rs.problem_type.support_user_args:
        out.append("argType 2 not run: the problem type does not support device user arguments")
    elif "factorDim" in user_struct(rs.problem_type).offsets:
        out.append("argType 2 used the extended struct with factorDim before e (4 bytes longer than hipBLASLt's "
                   "UserArguments, spec/epilogue_semantics.md §4.3)")
    return out


def check_launchable(rs: RuntimeSolution) -> None:
    """NotVerifiable for grouped launches the runtime could not make, or the verifier does not make."""
    if runtime_args.version(rs) < 1:
        raise NotVerifiable("grouped GEMM with argument version 0: the 8-byte header has no numWorkGroups")
    if rs.split_k:
        # one GSU for the whole launch, and each GEMM's workspace and counters: not driven yet
        raise NotVerifiable("grouped GEMM with in-kernel split-K (globalAccumulation 3) is not verified")
    if rs.multiple_buffer and rs.solution.runtime.global_split_u > 1:
        raise NotVerifiable("grouped GEMM with MultipleBuffer split-K (the grouped conversion kernel) is not verified")


@attrs.frozen(slots=True)
class GroupLayout:
    """Which workgroup of a grouped launch computes which tile of which GEMM."""

    grids: tuple[Grid, ...]

    @property
    def starts(self) -> tuple[int, ...]:
        """wgTable: the first workgroup of each GEMM."""
        out, total = [], 0
        for g in self.grids:
            out.append(total)
            total += g.count
        return tuple(out)

    @property
    def count(self) -> int:
        return sum(g.count for g in self.grids)

    def tile(self, order: TileOrder, wg: LaunchId) -> GroupTile:
        # XCC remap over the whole launch (a 1-row grid of all workgroups), then the GEMM's own order
        flat = attrs.evolve(order, wgm=1).tile(Grid(self.count, 1, 1), wg)[0]
        starts = self.starts
        gemm = max(i for i, s in enumerate(starts) if s <= flat and self.grids[i].count)
        local = flat - starts[gemm]
        return gemm, attrs.evolve(order, xcc=1).tile(self.grids[gemm], (local, 0, 0))

    def table(self, order: TileOrder) -> dict[GroupTile, LaunchId]:
        out: dict[GroupTile, LaunchId] = {}
        for w in range(self.count):
            out.setdefault(self.tile(order, (w, 0, 0)), (w, 0, 0))
        return out


def grid_of(rs: RuntimeSolution, case: Case) -> Grid:
    """One GEMM's tiles; a grouped launch is 1-D on every architecture."""
    mt0, mt1 = rs.solution.macro_tile
    p = case.problem
    batch = p.batch if rs.problem_type.num_indices_c == 3 else 1
    return Grid(math.ceil(p.m / mt0), math.ceil(p.n / mt1), batch)


def wanted_tiles(grid: Grid) -> list[Tile]:
    if grid.tiles <= FULL_GRID_LIMIT:
        return [(i, j, b) for b in range(grid.batch) for j in range(grid.tiles1) for i in range(grid.tiles0)]
    return representative_tiles(grid)


@attrs.frozen(slots=True)
class GemmError:
    index: int  # position in the group
    case: Case
    error: str


@attrs.frozen(slots=True)
class GroupResult:
    arg_type: int
    cases: tuple[Case, ...]
    errors: tuple[GemmError, ...]  # GEMMs whose D is wrong (or the launch as a whole, index -1)
    workgroups: int  # workgroups emulated
    grid: int  # workgroups of the whole launch
    instructions: int
    seconds: float
    order: TileOrder | None = None  # the tile order seen, when a subset ran and the orders differ
    notes: tuple[str, ...] = ()  # what this launch could not check, and why

    def describe(self) -> str:
        names = ", ".join(c.name for c in self.cases)
        return f"{ARG_TYPE_NAMES[self.arg_type]}, {len(self.cases)} GEMMs [{names}]"


def _launch(emu: Emulator, kernel: str, rs: RuntimeSolution, cases: Sequence[Case], inputs: Sequence[Inputs],
            arg_type: int, ids: list[LaunchId]) -> tuple[list[dict[str, np.ndarray]], int]:
    """Each GEMM's D buffer ('D') and extra buffers after running workgroups `ids` of one grouped launch,
    and the instructions executed. AmaxSync is one buffer for the launch (the first GEMM's)."""
    buffers = device.place_group(DeviceMemory(), [contents(t) for t in inputs], shared=(amax.SYNC,))
    launch = device.grouped(emu, kernel, rs, [c.problem for c in cases], buffers, [c.alpha for c in cases],
                            [c.beta for c in cases], [t.epilogue.args if t.epilogue else None for t in inputs],
                            arg_type=arg_type, workgroups=ids)
    ran = device.run(launch)
    return [read_after(b, t) for b, t in zip(buffers, inputs, strict=True)], ran.instructions


def _amax_errors(cases: Sequence[Case], arg_type: int, want: Sequence[Expected], after: Sequence[dict[str, np.ndarray]],
                 whole: Sequence[bool]) -> tuple[list[GemmError], list[str]]:
    """(errors, notes) of an OutputAmaxD kernel's amax outputs and their shared counters after a launch."""
    errors: list[GemmError] = []
    notes: list[str] = []
    for i, (c, ref, a) in enumerate(zip(cases, want, after, strict=True)):
        if arg_type == ARG_TYPE_USER:
            error = amax.untouched(a[amax.OUT])
        elif whole[i]:
            error = amax.mismatch(a[amax.OUT], ref)
        else:
            error = None
            notes.append(f"{ARG_TYPE_NAMES[arg_type]}: amax of GEMM {i} ({c.name}) not checked: only some of its "
                         "tiles ran and the amax needs every workgroup")
        if error:
            errors.append(GemmError(i, c, error))
    sync = after[0][amax.SYNC]
    # dword i counts GEMM i's workgroups: only a GEMM that ran whole has its counter back at 0
    checked = np.ones(sync.size, dtype=bool)
    checked[:len(cases)] = [arg_type == ARG_TYPE_USER or ran for ran in whole]
    error = amax.sync_left(sync, checked)
    if error:
        errors.append(GemmError(-1, cases[0], error))
    return errors, notes


def _written(inputs: Sequence[Inputs], after: Sequence[dict[str, np.ndarray]],
             macro_tile: tuple[int, int]) -> set[GroupTile]:
    out: set[GroupTile] = set()
    for i, (t, a) in enumerate(zip(inputs, after, strict=True)):
        bits = compare.as_mnb(read_back(t.d, a["D"])[0])
        out |= {(i, tile) for tile in compare.written_tiles(bits, t.d.element.sentinel, macro_tile)}
    return out


def run_group(emu: Emulator, kernel: str, rs: RuntimeSolution, cases: Sequence[Case], arg_type: int,
              rng_of: Callable[[Case], np.random.Generator]) -> GroupResult:
    """One grouped launch over `cases` (argType `arg_type`), every GEMM's D (and amax) compared with its
    reference. NotVerifiable when the emulator cannot run the kernel or the arguments cannot be packed."""
    start = time.perf_counter()
    sol = rs.solution
    inputs = [make_inputs(rs, c, rng_of(c)) for c in cases]
    layout = GroupLayout(tuple(grid_of(rs, c) for c in cases))
    wanted = {(i, tile) for i, g in enumerate(layout.grids) for tile in wanted_tiles(g)}
    subset = len(wanted) < layout.count
    declared = runtime_args.tile_order(rs)
    orders = [declared] + ([] if declared.is_row_major else [ROW_MAJOR])
    candidates = list(orders)
    ran = instructions = 0
    ids: list[LaunchId] = []
    written: set[GroupTile] = set()

    def result(errors: list[GemmError], order: TileOrder | None = None, notes: Sequence[str] = ()) -> GroupResult:
        return GroupResult(arg_type, tuple(cases), tuple(errors), ran, layout.count, instructions,
                           time.perf_counter() - start, order, tuple(notes))

    try:
        while True:
            table = layout.table(candidates.pop(0))
            ids = sorted({table[gt] for gt in wanted})
            after, count = _launch(emu, kernel, rs, cases, inputs, arg_type, ids)
            ran += len(ids)
            instructions += count
            written = _written(inputs, after, sol.macro_tile)
            if not subset or written <= wanted:
                break
            # other tiles were written: if another known order explains them, run under that order
            candidates = [o for o in candidates if {layout.tile(o, w) for w in ids} == written]
            if not candidates:
                break
    except UnsupportedInstruction as exc:
        raise NotVerifiable(f"the emulator does not implement: {exc.message}") from None
    except EmulatorError as exc:
        return result([GemmError(-1, cases[0], f"{type(exc).__name__}: {exc.message}")])
    errors: list[GemmError] = []
    if subset and written - wanted:
        stray = sorted(written - wanted)[:8]
        errors.append(GemmError(-1, cases[0], f"workgroups {[w[0] for w in ids]} wrote (GEMM, tile) {stray}, not "
                                "the tiles the runtime's WorkGroupMapping or a row-major order give"))
    want = [reference_of(rs, c, t) for c, t in zip(cases, inputs, strict=True)]
    for i, (c, t, a, ref) in enumerate(zip(cases, inputs, after, want, strict=True)):
        d_bits, d_values, outside = read_back(t.d, a["D"])
        sentinel = np.asarray(t.d.element.sentinel).astype(outside.dtype)
        if (outside != sentinel).any():
            errors.append(GemmError(i, c, f"wrote {int((outside != sentinel).sum())} elements of D's buffer outside "
                                    "the problem (padding or gaps between batches)"))
            continue
        bits, got = compare.as_mnb(d_bits), compare.as_mnb(d_values)
        mask = compare.tile_mask(bits.shape, sol.macro_tile, [tile for g, tile in wanted if g == i])
        for error in (compare.mismatches(bits, got, ref, t.d.element, mask), e_mismatch(t, a, ref, mask)):
            if error is not None:
                errors.append(GemmError(i, c, error))
    notes: list[str] = []
    if amax.enabled(rs.problem_type):
        whole = [sum(g == i for g, _ in wanted) == grid.tiles for i, grid in enumerate(layout.grids)]
        amax_errors, notes = _amax_errors(cases, arg_type, want, after, whole)
        errors += amax_errors
    seen = [o for o in orders if {layout.tile(o, w) for w in ids} == written]
    return result(errors, seen[0] if subset and len(orders) > 1 and len(seen) == 1 else None, notes)
