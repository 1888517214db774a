"""Stage 5: the summation loop, software-pipelined.

Three tiles are in flight: iteration t multiplies tile t from LDS, writes tile t + 1 from the tile
registers to LDS, and loads tile t + 2 from global memory into the registers each LDS write frees:

    prologue: load tile 0, write it to LDS, load tile 1, barrier, LDS reads of tile 0's first k-step
    iteration t (steady state, "fast"):
        k-step s: LDS reads of step s + 1 (PrefetchLocalRead); wait for step s's reads only
                  (lgkmcnt(N), N the LDS operations issued since); the step's MFMAs, with the
                  (wait for load n of tile t + 1, its LDS writes, load n of tile t + 2) groups
                  spread between them (GlobalReadPerMfma / LocalWritePerMfma)
        wait for the LDS writes; one barrier; swap the LDS copies; LDS reads of tile t + 1's step 0
    The iterations whose next load is the K remainder or an edge tile (or does not exist) take the
    "slow" copy of the body: the same multiplies, then the writes and the guarded, branching loads
    in one block.

With two LDS copies (plan.lds_buffers, 1LDSBuffer 0) the writes go to the copy nobody reads and one
barrier per iteration suffices; with one, the writes wait for a barrier after the last k-step's reads
and overlap that step's MFMAs only. Every wait is computed by an `Outstanding` tracker of what this
wave has issued, never written by hand; the fast body starts and ends in the same tracked state, the
slow body waits to 0. PrefetchLocalRead above 1 is scheduled as 1 (two MFMA input buffers).
"""

from __future__ import annotations

from collections.abc import Sequence

from tensile_lite.asm.arch import LDS, LOAD, SMEM
from tensile_lite.asm.gemm import stagger, xf32_split
from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.gemm.global_read import advance, load_tile, set_k_bound, vector_load
from tensile_lite.asm.gemm.local_read import pack_step, read_step
from tensile_lite.asm.gemm.local_write import write_load, write_tile
from tensile_lite.asm.gemm.mac import MAC
from tensile_lite.asm.gemm.mac import compute_tile as mac_compute_tile
from tensile_lite.asm.isa import Instruction
from tensile_lite.asm.modifiers import Sel
from tensile_lite.asm.operands import Label
from tensile_lite.asm.waitcnt import Outstanding

# Wait states between an MFMA and a VALU access of its result, for the slowest MFMA (16 passes:
# passes + 3 by AMD's CDNA2/CDNA3 hazard tables, one more for gfx950's XDL ops, as LLVM's hazard
# recognizer has it); also covers SrcC hazards conservatively.
MFMA_RESULT_WAIT = 20

# A write group: the LDS writes of one global load of tile t + 1, and that load of tile t + 2.
Group = tuple[list[Instruction], list[Instruction]]

# the main loop's label (loop_clocks.py finds the loop by it)
LOOP_BEGIN = "LoopBegin"


def zero_accumulators(e: Emitter) -> None:
    acc = e.r.acc
    e(e.acc_write(acc[i], 0) for i in range(acc.count))
    if e.plan.mfma.kind != MAC:
        # a VALU write read by an MFMA needs 2 wait states
        e.nops(2)


def _mfmas(e: Emitter, buffer: int) -> None:
    plan, r = e.plan, e.r
    op = e.isa.op(plan.mfma.name)
    cd = plan.mfma.cd_regs
    wt0, wt1 = plan.wave_tile
    # emulated xf32 (xf32_split.py): the lane's f32 inputs, split in place into bf16 hi/lo, then three
    # bf16 MFMAs per block
    split = plan.xf32_split
    ra, rb = (plan.a.mfma_regs, plan.b.mfma_regs) if split else (plan.mfma.a_regs, plan.mfma.b_regs)
    a_buf, b_buf = r.a.mfma[buffer], r.b.mfma[buffer]
    pack_step(e, plan.a, r.a, buffer)
    pack_step(e, plan.b, r.b, buffer)
    # RDNA's integer WMMA reads unsigned bytes unless neg_lo marks A and B signed
    mods = Sel(neg_lo=(1, 1)) if plan.mfma.kind == "wmma" and plan.mfma.a_type == "iu8" else None
    if split:
        tmp = r.vtmp[0:xf32_split.scratch_needed(max(ra, rb))]
        for t in range(wt0):
            xf32_split.split(e, a_buf[t * ra:(t + 1) * ra], tmp)
        for t in range(wt1):
            xf32_split.split(e, b_buf[t * rb:(t + 1) * rb], tmp)
    for t0 in range(wt0):
        for t1 in range(wt1):
            acc = r.acc[(t0 * wt1 + t1) * cd:(t0 * wt1 + t1 + 1) * cd]
            a, b = a_buf[t0 * ra:(t0 + 1) * ra], b_buf[t1 * rb:(t1 + 1) * rb]
            for x, y in xf32_split.products(a, b) if split else ((a, b),):
                e(op(acc, x, y, acc, mods=mods) if mods is not None else op(acc, x, y, acc))


def _same_acc_wait(e: Emitter) -> int:
    """Wait states between dependent MFMAs on one accumulator (only when every block is one)."""
    plan = e.plan
    if plan.wave_tile[0] * plan.wave_tile[1] > 1:
        return 0
    passes = plan.mfma.passes
    return 0 if passes is not None and passes >= 4 else 3


def event_of(ins: Instruction) -> str | None:
    """The memory event an instruction leaves outstanding (arch.MEM_EVENTS), None for the others."""
    name = ins.name
    if name.startswith(("buffer_load", "global_load")):
        return LOAD
    if name.startswith("ds_"):
        return LDS
    if name.startswith(("s_load", "s_buffer_load")):
        return SMEM
    return None


def issue(e: Emitter, out: Outstanding, instructions: Sequence[Instruction], tag: object) -> None:
    """Write `instructions`, tracking the memory operations among them under `tag`."""
    for ins in instructions:
        e(ins)
        event = event_of(ins)
        if event is not None:
            out.issue(event, tag)


def _reads(e: Emitter, step: int) -> list[Instruction]:
    plan, r = e.plan, e.r
    with e.capture() as got:
        read_step(e, plan.a, r.a, step, step % 2)
        read_step(e, plan.b, r.b, step, step % 2)
    return got


def _groups(e: Emitter) -> list[Group]:
    plan, r = e.plan, e.r
    out: list[Group] = []
    for op, o in ((plan.a, r.a), (plan.b, r.b)):
        for n in range(op.loads):
            with e.capture() as writes:
                write_load(e, op, o, n)
            with e.capture() as loads:
                vector_load(e, op, o, n)
            out.append((writes, loads))
    return out


def placement(groups: int, first: int, mfmas: int, per_mfma: float) -> dict[int, list[int]]:
    """MFMA index -> the groups written just before it: spread evenly over MFMAs first..mfmas-1, or
    `per_mfma` groups per MFMA from `first` when the solution says (LocalWritePerMfma > 0), the rest
    before the last MFMA."""
    slots = max(1, mfmas - first)
    out: dict[int, list[int]] = {}
    for g in range(groups):
        at = first + (int(g / per_mfma) if per_mfma > 0 else g * slots // groups)
        out.setdefault(min(at, mfmas - 1), []).append(g)
    return out


def _steady_state(e: Emitter, groups: Sequence[Group]) -> Outstanding:
    """What is outstanding at the top of a fast iteration: the loads of tile t + 1 in group order,
    and the LDS reads of tile t's first k-step."""
    out = Outstanding(e.plan.arch)
    for g, (_, loads) in enumerate(groups):
        for ins in loads:
            if event_of(ins) == LOAD:
                out.issue(LOAD, ("tile", g))
    for ins in _reads(e, 0):
        if event_of(ins) == LDS:
            out.issue(LDS, ("read", 0))
    return out


def _per_mfma(e: Emitter) -> float:
    """LocalWritePerMfma when the solution sets a positive one (else: spread evenly)."""
    value = e.plan.local_write_per_mfma
    return value if value > 0 else 0.0


def _body(e: Emitter, out: Outstanding, groups: Sequence[Group] | None) -> None:
    """One iteration's multiplies; with `groups` (fast), the groups interleaved between them."""
    plan, isa, r = e.plan, e.isa, e.r
    steps = plan.steps
    single = plan.lds_buffers == 1
    same_acc = _same_acc_wait(e)
    with e.capture() as one:
        _mfmas(e, 0)
    per_step = len(one)
    total = steps * per_step
    slots: dict[int, list[int]] = {}
    if groups is not None:
        first = (steps - 1) * per_step if single else 0
        slots = placement(len(groups), first, total, _per_mfma(e))
    for s in range(steps):
        if s + 1 < steps:
            issue(e, out, _reads(e, s + 1), ("read", s + 1))
        e.wait_counts(out.counts_for(("read", s)))
        if single and s == steps - 1 and groups is not None:
            # one LDS copy: every wave has its last reads of tile t before anyone overwrites it
            e(e.barrier())
        if s and same_acc:
            e.nops(same_acc)
        with e.capture() as mfmas:
            _mfmas(e, s % 2)
        for j, mfma in enumerate(mfmas):
            for g in slots.get(s * per_step + j, ()):
                writes, loads = groups[g] if groups is not None else ([], [])
                e.wait_counts(out.counts_for(("tile", g)))
                issue(e, out, writes, ("write", g))
                issue(e, out, loads, ("tile", g))
            e(mfma)
    if groups is not None:
        return
    # slow: the writes of tile t + 1 and the (guarded) loads of tile t + 2 after the multiplies
    if single:
        e(e.barrier())
    no_write = e.new_label("NoLocalWrite")
    no_load = e.new_label("NoGlobalRead")
    e(isa.s_cmp_le_u32(r.counter, r.iters), isa.s_cbranch_scc0(no_write))
    e.wait_counts(out.counts_all(LOAD))
    out.forget(LOAD)
    write_tile(e, plan.a, r.a)
    write_tile(e, plan.b, r.b)
    e.label(no_write)
    out.forget(LDS)
    e(isa.s_cmp_lt_u32(r.counter, r.iters), isa.s_cbranch_scc0(no_load))
    stagger.advance(e)
    set_k_bound(e)
    load_tile(e, plan.a, r.a)
    load_tile(e, plan.b, r.b)
    e.label(no_load)


def _swap_buffers(e: Emitter) -> None:
    """Reads move to the copy just written, writes to the one just read; the step changes sign."""
    isa, r = e.isa, e.r
    swap = r.lds_swap
    assert swap is not None
    e(isa.v_add_u32(r.a.lds_read, swap, r.a.lds_read), isa.v_add_u32(r.b.lds_read, swap, r.b.lds_read),
      isa.v_subrev_u32(r.a.lds_write, swap, r.a.lds_write), isa.v_subrev_u32(r.b.lds_write, swap, r.b.lds_write),
      isa.s_sub_i32(swap, 0, swap))


def compute_tile(e: Emitter) -> None:
    plan, r = e.plan, e.r
    steps = plan.steps
    read_step(e, plan.a, r.a, 0, 0)
    read_step(e, plan.b, r.b, 0, 0)
    same_acc = _same_acc_wait(e)
    for s in range(steps):
        e.wait(lgkmcnt=0)
        if s + 1 < steps:
            read_step(e, plan.a, r.a, s + 1, (s + 1) % 2)
            read_step(e, plan.b, r.b, s + 1, (s + 1) % 2)
        if s and same_acc:
            e.nops(same_acc)
        _mfmas(e, s % 2)


def _load_tiles(e: Emitter) -> None:
    load_tile(e, e.plan.a, e.r.a)
    load_tile(e, e.plan.b, e.r.b)


def _first_load(e: Emitter, end: Label) -> None:
    """Skip the loop when there is no K tile; else the first tile's global loads."""
    isa, r = e.isa, e.r
    e(isa.s_cmp_eq_u32(r.iters, 0), isa.s_cbranch_scc1(end))
    e(isa.s_mov_b32(r.counter, 0))
    set_k_bound(e)
    _load_tiles(e)


def _next_load(e: Emitter) -> None:
    """The next tile's global loads (the pointers moved to its tile first: stagger.advance)."""
    stagger.advance(e)
    set_k_bound(e)
    _load_tiles(e)


def _unpipelined(e: Emitter) -> None:
    """MAC kernels and emulated xf32 (whose split needs scratch VGPRs between the MFMAs): one LDS copy,
    loads and writes in one block before the tile's multiplies."""
    isa, r, plan = e.isa, e.r, e.plan
    mac = plan.mfma.kind == MAC
    zero_accumulators(e)
    end = e.new_label("SummationEnd")
    loop = e.new_label(LOOP_BEGIN)
    no_prefetch = e.new_label("NoPrefetch")
    _first_load(e, end)
    e.label(loop)
    e.wait(vmcnt=0)
    e(e.barrier())
    write_tile(e, plan.a, r.a)
    write_tile(e, plan.b, r.b)
    e.wait(lgkmcnt=0)
    e(e.barrier())
    e(isa.s_add_u32(r.counter, r.counter, 1))
    e(isa.s_cmp_lt_u32(r.counter, r.iters), isa.s_cbranch_scc0(no_prefetch))
    _next_load(e)
    e.label(no_prefetch)
    if mac:
        mac_compute_tile(e)
    else:
        compute_tile(e)
    e(isa.s_cmp_lt_u32(r.counter, r.iters), isa.s_cbranch_scc1(loop))
    e.label(end)
    if not mac:
        e.nops(MFMA_RESULT_WAIT)


def summation(e: Emitter) -> None:
    isa, r, plan = e.isa, e.r, e.plan
    if plan.mfma.kind == MAC or plan.xf32_split:
        _unpipelined(e)
        return
    double = plan.lds_buffers == 2
    zero_accumulators(e)
    end = e.new_label("SummationEnd")
    loop = e.new_label(LOOP_BEGIN)
    slow = e.new_label("LoopSlow")
    join = e.new_label("LoopEnd")
    no_prefetch = e.new_label("NoPrefetch")
    # prologue: tile 0 into LDS copy 0, tile 1 into the registers
    _first_load(e, end)
    e.wait(vmcnt=0)
    write_tile(e, plan.a, r.a)
    write_tile(e, plan.b, r.b)
    if double:
        assert r.lds_swap is not None
        e(isa.s_mov_b32(r.lds_swap, plan.lds_buffer_bytes))
        e.v_add_const(r.a.lds_write, r.a.lds_write, plan.lds_buffer_bytes)
        e.v_add_const(r.b.lds_write, r.b.lds_write, plan.lds_buffer_bytes)
    e(isa.s_mov_b32(r.counter, 1))
    e(isa.s_cmp_lt_u32(r.counter, r.iters), isa.s_cbranch_scc0(no_prefetch))
    _next_load(e)
    e.label(no_prefetch)
    e.wait(lgkmcnt=0)
    e(e.barrier())
    e(_reads(e, 0))
    groups = _groups(e)

    # counter: the load this iteration issues (t + 2); fast while that is a full, unguarded tile one
    # past the previous
    e.label(loop)
    e(isa.s_add_u32(r.counter, r.counter, 1))
    e(isa.s_cmp_lt_u32(r.counter, r.full_iters), isa.s_cbranch_scc0(slow))
    e(isa.s_or_b32(r.stmp[0], r.a.guard, r.b.guard), isa.s_cbranch_scc1(slow))
    # the load that wraps back to tile 0 under StaggerU moves the resources backwards (stagger.py)
    e(isa.s_cmp_eq_u32(r.counter, r.stagger_wrap), isa.s_cbranch_scc1(slow))
    advance(e, r.a)
    advance(e, r.b)
    fast = _steady_state(e, groups)
    _body(e, fast, groups)
    e(isa.s_branch(join))
    e.label(slow)
    careful = _steady_state(e, groups)
    _body(e, careful, None)
    e.label(join)
    # both bodies: the writes are done and tile t has been read by every wave (the stricter wait of
    # the two paths)
    waits = fast.counts_all(LDS)
    for counter, value in careful.counts_all(LDS).items():
        waits[counter] = min(value, waits.get(counter, value))
    e.wait_counts(waits)
    e(e.barrier())
    if double:
        _swap_buffers(e)
    # tile t + 1 exists iff t + 1 < iters, i.e. counter <= iters
    e(isa.s_cmp_le_u32(r.counter, r.iters), isa.s_cbranch_scc0(end))
    e(_reads(e, 0))
    e(isa.s_branch(loop))
    e.label(end)
    e.nops(MFMA_RESULT_WAIT)
