"""The small working context every stage writes through: the target's instruction set, the
register map, deterministic labels and the output lines, plus a few idioms GEMM stages repeat.

One `Emitter` lives for one `generate` call; nothing in it is shared or global.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from tensile_lite.asm.arch import LDS, LOAD, SMEM, Arch
from tensile_lite.asm.gemm.hazards import HazardGuard
from tensile_lite.asm.gemm.layout import RegisterMap
from tensile_lite.asm.gemm.plan import GemmPlan
from tensile_lite.asm.isa import Instruction, InstructionSet, isa_for
from tensile_lite.asm.modifiers import NO_CACHE, CachePolicy
from tensile_lite.asm.operands import NULL_REG, Label, Reg, Special
from tensile_lite.asm.waitcnt import waitcnt
from tensile_lite.asm.writer import AsmWriter, Labels

# A buffer offset no tensor reaches: loads from it return 0 and stores to it are dropped (the
# runtime keeps every tensor below 2 GiB from the tile origin, like upstream's BufferOOB).
OUT_OF_BOUNDS = 0x80000000
# gfx12's named barrier -1: the workgroup's own
WORKGROUP_BARRIER = -1


def store_cache(arch: Arch) -> CachePolicy:
    """The cache bits of every global store: sc1 where the target needs it for coherence (gfx940/941)."""
    return CachePolicy(slc=True) if arch.force_store_sc1 else NO_CACHE


class Emitter:
    """Instruction stream of one kernel under construction."""

    def __init__(self, plan: GemmPlan, regs: RegisterMap, lines: list[str]) -> None:
        self.plan = plan
        self.r = regs
        self.isa: InstructionSet = isa_for(plan.arch.name, plan.arch.wavefront_size)
        self.labels = Labels()
        self.out = AsmWriter(lines)
        # MUBUF soffset 0: an inline constant, or the null register where the target takes no constant
        self.soff0: Special | int = 0 if plan.arch.mubuf_soffset_inline else NULL_REG
        # the wait states CDNA does not insert itself, inserted as instructions are written
        self.guard = HazardGuard(plan.arch)
        # while capturing (`capture`), instructions go here instead of to the output
        self._sink: list[Instruction] | None = None

    def __call__(self, *items: Instruction | Iterable[Instruction]) -> None:
        for item in items:
            if isinstance(item, Instruction):
                self._emit(item)
            else:
                for ins in item:
                    self._emit(ins)

    def _emit(self, ins: Instruction) -> None:
        if self._sink is not None:
            self._sink.append(ins)
            return
        guard = self.guard
        wait = guard.wait_states(ins)
        while wait > 0:
            n = min(wait, 8)
            nop = self.isa.s_nop(n - 1)
            self.out.emit(nop)
            guard.issued(nop, n)
            wait -= n
        self.out.emit(ins)
        count = ins.operands[0] if ins.name == "s_nop" else 0
        guard.issued(ins, count + 1 if isinstance(count, int) else 1)

    @contextmanager
    def capture(self) -> Iterator[list[Instruction]]:
        """Collect the instructions a stage writes instead of writing them, so a scheduler can
        interleave them; the hazard guard sees them when they are finally written (in their final
        order). Labels cannot be captured: captured code is straight-line."""
        outer = self._sink
        taken: list[Instruction] = []
        self._sink = taken
        try:
            yield taken
        finally:
            self._sink = outer

    def label(self, label: Label) -> None:
        if self._sink is not None:
            raise AssertionError("a label inside captured code")
        self.guard.forget()
        self.out.label(label)

    def new_label(self, name: str) -> Label:
        return self.labels.new(name)

    # ---- idioms ------------------------------------------------------------------------------
    def acc_read(self, dst: Reg, src: Reg) -> Instruction:
        """dst = accumulator src (an AGPR on CDNA, a VGPR on RDNA)."""
        if self.plan.lanes.has_agprs:
            return self.isa.v_accvgpr_read_b32(dst, src)
        return self.isa.v_mov_b32(dst, src)

    def acc_write(self, dst: Reg, src: Reg | int) -> Instruction:
        """accumulator dst = src."""
        if self.plan.lanes.has_agprs:
            return self.isa.v_accvgpr_write_b32(dst, src)
        return self.isa.v_mov_b32(dst, src)

    def barrier(self) -> tuple[Instruction, ...]:
        """A workgroup barrier: s_barrier, or gfx12's signal-and-wait pair on the workgroup barrier."""
        if self.isa.has("s_barrier"):
            return (self.isa.s_barrier(),)
        return (self.isa.s_barrier_signal(WORKGROUP_BARRIER), self.isa.s_barrier_wait(WORKGROUP_BARRIER))

    def lane_mask(self, reg: Reg) -> Reg:
        """The part of an SGPR pair that holds a lane mask (both in wave64, the low one in wave32)."""
        return reg[0:self.plan.arch.lane_mask_width]

    def wait(self, *, vmcnt: int | None = None, lgkmcnt: int | None = None) -> None:
        """Wait in gfx9 terms, on the target's counters: `vmcnt` for vector memory loads (and stores
        where they share the counter, as on CDNA), `lgkmcnt` for LDS and scalar loads."""
        events = self.plan.arch.wait_events
        counts: dict[str, int] = {}
        if vmcnt is not None:
            counts[events[LOAD]] = vmcnt
        if lgkmcnt is not None:
            for event in (LDS, SMEM):
                counts[events[event]] = lgkmcnt
        self(waitcnt(self.isa, **counts))

    def wait_counts(self, counts: dict[str, int]) -> None:
        """Wait on the target's own counters (as `Outstanding` computes them); nothing when empty."""
        if counts:
            self(waitcnt(self.isa, **counts))

    def nops(self, wait_states: int) -> None:
        """At least `wait_states` independent wait states (s_nop n gives n + 1)."""
        while wait_states > 0:
            n = min(wait_states, 16)
            self(self.isa.s_nop(n - 1))
            wait_states -= n

    def v_mul_const(self, dst: Reg, src: Reg, k: int) -> None:
        """dst = src * k for a small non-negative constant (24-bit multiply)."""
        isa = self.isa
        if k == 0:
            self(isa.v_mov_b32(dst, 0))
        elif k & (k - 1) == 0:
            self(isa.v_lshlrev_b32(dst, k.bit_length() - 1, src))
        else:
            self(isa.v_mul_u32_u24(dst, k, src))

    def v_add_const(self, dst: Reg, src: Reg, k: int) -> None:
        if k == 0:
            if dst != src:
                self(self.isa.v_mov_b32(dst, src))
        else:
            self(self.isa.v_add_u32(dst, k, src))

    def s_mul_const(self, dst: Reg, src: Reg, k: int) -> None:
        isa = self.isa
        if k == 0:
            self(isa.s_mov_b32(dst, 0))
        elif k & (k - 1) == 0:
            self(isa.s_lshl_b32(dst, src, k.bit_length() - 1))
        else:
            self(isa.s_mul_i32(dst, src, k))
