"""Run one problem of one kernel on the emulator, the way the runtime launches it, and check D.

Arguments are packed as the runtime packs them from the `.dat` entry (runtime_args); the grid is the
runtime's (flattened to 1-D except on gfx12 or for argument version 0) with `workGroup` threads per
workgroup.
Small grids run whole. Larger ones run only representative tiles (mapping.representative_tiles):
the workgroups for them are chosen by the runtime's WorkGroupMapping order, or row-major if the
kernel turns out to ignore that argument (both are correct; the tiles a launch writes tell which).
A split-K launch (splitk.py) has GSU workgroups per tile: a tile that runs runs all of them, since
its reduction needs every slice, and its Synchronizer must be back at 0 afterwards. A MultipleBuffer
call with GSU > 1 (conversion.py) runs the GEMM kernel into the workspace, tells the tiles written from
it, then runs the runtime's conversion kernel from the helper code object into D. An OutputAmaxD
kernel's amax (amax.py) is compared only when the whole grid ran; otherwise the case says so. A UseE
kernel's E (epilogue.py) is compared over the same tiles as D, and its padding must stay untouched.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping

import attrs
import numpy as np

from tensile_lite.asm.gemm.features import epilogue_features
from tensile_lite.emu import DeviceMemory, Emulator, EmulatorError, UnsupportedInstruction
from tensile_lite.host import num_workgroups
from tensile_lite.host.epilogue import activation_sent
from tensile_lite.targets import get_target
from tensile_lite.verify import amax, bias_grad, compare, conversion, device, epilogue, runtime_args, splitk
from tensile_lite.verify.elements import element, operand_types
from tensile_lite.verify.epilogue import Epilogue
from tensile_lite.verify.errors import NotVerifiable
from tensile_lite.verify.mapping import (
    ROW_MAJOR,
    Grid,
    LaunchId,
    Tile,
    TileOrder,
    representative_tiles,
    workgroups_of,
)
from tensile_lite.verify.problems import Case
from tensile_lite.verify.reference import Expected, expected
from tensile_lite.verify.runtime_view import RuntimeSolution
from tensile_lite.verify.tensors import Tensor, make_tensor, read_back

# Grids up to this many tiles run whole; larger ones run representative tiles only.
FULL_GRID_LIMIT = 6
# The extra buffers read back after a launch (the workspaces are the kernel's own business).
READ_BACK = (splitk.SYNCHRONIZER, amax.OUT, amax.SYNC)


@attrs.frozen(slots=True)
class CaseResult:
    case: Case
    error: str | None
    workgroups: int  # workgroups emulated (over all launches of this case)
    grid: int  # workgroups of the whole problem
    instructions: int
    seconds: float
    order: TileOrder | None = None  # the tile order the kernel was seen to follow, when a subset ran
    notes: tuple[str, ...] = ()  # what this case could not check, and why
    conversion_workgroups: int = 0  # of the MultipleBuffer conversion kernel, after the GEMM launch


def grid_of(rs: RuntimeSolution, case: Case) -> Grid:
    """The launch of `case`: its tiles, with the GSU and GSU mapping of the header the runtime packs."""
    sol, p = rs.solution, case.problem
    mt0, mt1 = sol.macro_tile
    batch = p.batch if rs.problem_type.num_indices_c == 3 else 1
    # gfx12 keeps the runtime's 3-D grid (ids in ttmp registers); the others get it flattened
    flatten = not get_target(sol.arch).workgroup_ids_in_ttmp and runtime_args.version(rs) >= 1
    gsu = runtime_args.launch_gsu(rs, case.gsu)
    round_robin = bool(runtime_args.header_words(rs, gsu)[0] >> splitk.GSU_ROUND_ROBIN_BIT & 1)
    return Grid(math.ceil(p.m / mt0), math.ceil(p.n / mt1), batch, three_d=not flatten, gsu=max(gsu, 1),
                gsu_round_robin=round_robin)


@attrs.frozen(slots=True)
class Inputs:
    """One problem's tensors and epilogue inputs, on the host and as device buffer contents."""

    a: Tensor
    b: Tensor
    c: Tensor
    d: Tensor
    epilogue: Epilogue | None
    # buffers the kernel writes besides D, by host.epilogue.POINTERS key / split-K name: workspace, Synchronizer, amax
    extras: Mapping[str, np.ndarray] = attrs.field(factory=dict, eq=False)


def activation_fused(rs: RuntimeSolution) -> bool:
    """Whether the kernel applies the activation itself (and the runtime sends its arguments)."""
    return activation_sent(rs.solution)


def make_inputs(rs: RuntimeSolution, case: Case, rng: np.random.Generator) -> Inputs:
    pt, p = rs.problem_type, case.problem
    arch = rs.solution.arch
    a_type, b_type = operand_types(pt)
    ea, eb, ed = element(a_type, arch), element(b_type, arch), element(pt.dest_type, arch)
    assert ea is not None and eb is not None and ed is not None  # checked by reference.check_types
    gsu = runtime_args.launch_gsu(rs, case.gsu)
    extras = splitk.buffers(rs, p, gsu)
    if amax.enabled(pt):
        extras.update(amax.output_buffers(num_workgroups(rs.solution, p, gsu=gsu)))
        extras[amax.SYNC] = amax.sync_buffer()
    # alpha == 0 must not read A or B, beta == 0 must not read C: those buffers hold only the sentinel;
    # a gradient bias from A or B reads them whatever alpha is (and then they must be finite)
    read_ab = case.alpha != 0 or epilogue_features(pt).reads_operands_always
    a = make_tensor(pt, p, "A", ea, rng if read_ab else None)
    b = make_tensor(pt, p, "B", eb, rng if read_ab else None)
    c = make_tensor(pt, p, "C", ed, rng if case.beta != 0 else None)
    d = make_tensor(pt, p, "D", ed, None)
    ep = epilogue.make(pt, p, case.name, rng, activation_fused=activation_fused(rs))
    if case.beta == 0 and epilogue.reads_c(case.beta, ep):
        # beta * scaleC is -0.0, which the kernel treats as non-zero: it reads C, so C must be finite
        c = make_tensor(pt, p, "C", ed, rng)
    return Inputs(a, b, c, d, ep, extras)


def reference_of(rs: RuntimeSolution, case: Case, t: Inputs) -> Expected:
    """The reference D of `case` on inputs `t` (C only when beta != 0)."""
    p = case.problem
    return expected(rs.problem_type, t.a, t.b, t.c if case.beta != 0 else None, t.d.letters, t.d.shape, p.k,
                    case.alpha, case.beta, t.epilogue, out=t.d.element)


def contents(t: Inputs) -> dict[str, np.ndarray]:
    """Every device buffer of one call by name, as placed before the launch."""
    out = {"A": t.a.flat, "B": t.b.flat, "C": t.c.flat, "D": t.d.flat}
    if t.epilogue is not None:
        out.update(t.epilogue.buffers)
    out.update(t.extras)
    return out


def _launch(emu: Emulator, kernel: str, rs: RuntimeSolution, case: Case, t: Inputs,
            ids: list[LaunchId]) -> tuple[device.Buffers, int]:
    """The buffers (in their memory) after running workgroups `ids`, and the instructions executed."""
    buffers = device.place(DeviceMemory(), contents(t))
    ep = t.epilogue
    launch = device.gemm(emu, kernel, rs, case.problem, buffers, case.alpha, case.beta, ep.args if ep else None,
                         gsu=case.gsu, workgroups=ids)
    return buffers, device.run(launch).instructions


def read_after(buffers: device.Buffers, t: Inputs) -> dict[str, np.ndarray]:
    """D ('D'), E ('E', UseE) and the extra buffers of READ_BACK after a launch, by name."""
    out = {"D": buffers.read("D")}
    if t.epilogue is not None and t.epilogue.e is not None:
        out["E"] = buffers.read("E")
    if t.epilogue is not None and t.epilogue.bias_out is not None:
        out["bias"] = buffers.read("bias")
    out.update({name: buffers.read(name) for name in t.extras if name in READ_BACK})
    return out


def e_mismatch(t: Inputs, after: Mapping[str, np.ndarray], want: Expected, mask: np.ndarray) -> str | None:
    """None when E (UseE) holds its reference under `mask` and nothing outside its elements was written."""
    ep = t.epilogue
    if ep is None or ep.e is None or want.e is None:
        return None
    bits, values, outside = read_back(ep.e, after["E"])
    sentinel = np.asarray(ep.e.element.sentinel).astype(outside.dtype)
    if (outside != sentinel).any():
        return (f"wrote {int((outside != sentinel).sum())} elements of E's buffer outside the problem "
                "(padding or gaps between batches)")
    return compare.mismatches(compare.as_mnb(bits), compare.as_mnb(values), want.e, ep.e.element, mask, name="E")


def bias_mismatch(rs: RuntimeSolution, t: Inputs, after: Mapping[str, np.ndarray], tiles: list[Tile]) -> str | None:
    """None when a BGRADB kernel's bias output holds B's column sums of the N-tiles whose M-tile 0 of
    batch 0 ran (`tiles`: the tiles that ran) and nothing else was written."""
    ep = t.epilogue
    if ep is None or ep.bias_out is None:
        return None
    el = element(ep.bias_out)
    assert el is not None
    tiles1 = sorted({j for i, j, b in tiles if i == 0 and b == 0})
    return bias_grad.mismatch(rs.problem_type, el, after["bias"], t.b, rs.solution.macro_tile[1], tiles1)


def _ids(order: TileOrder, grid: Grid, wanted: list[Tile]) -> list[LaunchId]:
    """Every workgroup of the wanted tiles under `order` (all GSU slices of each)."""
    table = workgroups_of(order, grid)
    return [wg for tile in wanted for wg in table[tile]]


def extra_checks(rs: RuntimeSolution, after: Mapping[str, np.ndarray], want: Expected,
                 whole: bool) -> list[str]:
    """Errors of the buffers besides D after one launch: split-K's Synchronizer, and the amax and its
    counter when the whole grid ran (`whole`)."""
    errors = [e for e in (splitk.check(after),) if e]
    if amax.enabled(rs.problem_type) and whole:
        errors += [e for e in (amax.mismatch(after[amax.OUT], want), amax.sync_left(after[amax.SYNC])) if e]
    return errors


def _written(rs: RuntimeSolution, case: Case, t: Inputs, buffers: device.Buffers, gsu: int) -> set[Tile]:
    """The tiles a launch wrote: of D, or of the workspace slices when the conversion kernel is still to run."""
    if conversion.needed(rs, gsu):
        if splitk.WORKSPACE not in buffers:
            return set()
        return conversion.slices_written(rs, case.problem, gsu, buffers.read(splitk.WORKSPACE))
    flat = buffers.read("D")
    return compare.written_tiles(compare.as_mnb(read_back(t.d, flat)[0]), t.d.element.sentinel, rs.solution.macro_tile)


def run_case(emu: Emulator, kernel: str, rs: RuntimeSolution, case: Case, rng: np.random.Generator,
             helper: Emulator | None = None) -> CaseResult:
    """Run `case` and compare D (and E, the amax, the synchronisation counters) with the reference.
    `helper` emulates the library's helper code object, where a MultipleBuffer call's conversion kernel
    is. NotVerifiable when the emulator cannot run the kernel (an instruction it does not implement) or
    the arguments cannot be packed."""
    start = time.perf_counter()
    t = make_inputs(rs, case, rng)
    sol = rs.solution
    want = reference_of(rs, case, t)
    grid = grid_of(rs, case)
    gsu = runtime_args.launch_gsu(rs, case.gsu)
    converts = conversion.needed(rs, gsu)
    convert_name = conversion.variant(rs, case.problem, t.epilogue, gsu).name if converts else ""
    if converts and (helper is None or convert_name not in helper.kernel_names()):
        where = "no helper code object" if helper is None else helper.path.name
        return CaseResult(case, f"the runtime's conversion kernel {convert_name} is not in {where}: a "
                          f"MultipleBuffer call with GSU {gsu} cannot complete", 0, grid.count, 0,
                          time.perf_counter() - start)
    declared = runtime_args.tile_order(rs)
    orders = [declared] + ([] if declared.is_row_major else [ROW_MAJOR])
    candidates = list(orders)
    subset = grid.tiles > FULL_GRID_LIMIT
    wanted: list[Tile] = representative_tiles(grid) if subset else [
        (i, j, b) for b in range(grid.batch) for j in range(grid.tiles1) for i in range(grid.tiles0)]
    ran = instructions = converted = 0
    ids: list[LaunchId] = []
    written: set[Tile] = set()
    try:
        while True:
            used = candidates.pop(0)
            ids = _ids(used, grid, wanted) if subset else grid.ids()
            buffers, count = _launch(emu, kernel, rs, case, t, ids)
            ran += len(ids)
            instructions += count
            written = _written(rs, case, t, buffers, gsu)
            if not subset or written <= set(wanted):
                break
            # Other tiles were written: if another known order explains them, the kernel follows that
            # order, so run the wanted tiles again under it.
            candidates = [o for o in candidates if {o.tile(grid, w) for w in ids} == written]
            if not candidates:
                break
        if converts:
            assert helper is not None
            ran_conversion = device.run(conversion.launch(helper, rs, case.problem, case.alpha, case.beta,
                                                          t.epilogue, gsu, buffers, wanted if subset else None))
            instructions += ran_conversion.instructions
            converted = ran_conversion.workgroups
    except UnsupportedInstruction as exc:
        raise NotVerifiable(f"the emulator does not implement: {exc.message}") from None
    except EmulatorError as exc:
        return CaseResult(case, f"{type(exc).__name__}: {exc.message}", ran, grid.count, instructions,
                          time.perf_counter() - start)
    after = read_after(buffers, t)
    d_bits, d_values, outside = read_back(t.d, after["D"])
    bits, got = compare.as_mnb(d_bits), compare.as_mnb(d_values)
    sentinel = np.asarray(t.d.element.sentinel).astype(outside.dtype)
    mask = compare.tile_mask(bits.shape, sol.macro_tile, wanted)
    error: str | None
    if (outside != sentinel).any():
        error = (f"wrote {int((outside != sentinel).sum())} elements of D's buffer outside the problem "
                 "(padding or gaps between batches)")
    elif subset and written - set(wanted):
        what = "workspace slices of tiles" if converts else "tiles"
        error = (f"workgroups {[w[0] if not grid.three_d else w for w in ids]} wrote {what} "
                 f"{sorted(written)}, not the tiles {sorted(wanted)} the runtime's WorkGroupMapping or a "
                 "row-major order give")
    else:
        error = compare.mismatches(bits, got, want, t.d.element, mask)
    errors = [e for e in (error, e_mismatch(t, after, want, mask), bias_mismatch(rs, t, after, wanted)) if e]
    errors += extra_checks(rs, after, want, not subset)
    notes = []
    if subset and amax.enabled(rs.problem_type):
        notes.append(f"case {case.name}: amax not checked: {len(wanted)} of {grid.tiles} tiles ran and the amax "
                     "needs every workgroup")
    # name the order only when the tiles written tell the candidates apart
    seen = [o for o in orders if {o.tile(grid, w) for w in ids} == written]
    return CaseResult(case, "; ".join(errors) or None, ran, grid.count, instructions, time.perf_counter() - start,
                      seen[0] if subset and len(orders) > 1 and len(seen) == 1 else None, tuple(notes), converted)
