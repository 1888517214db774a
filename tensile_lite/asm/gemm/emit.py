"""The small working context every stage writes through: the target's instruction set, the
register map, deterministic labels and the output lines, plus a few idioms GEMM stages repeat.

One `Emitter` lives for one `generate` call; nothing in it is shared or global.
"""

from __future__ import annotations

from collections.abc import Iterable

from tensile_lite.asm.gemm.layout import RegisterMap
from tensile_lite.asm.gemm.plan import GemmPlan
from tensile_lite.asm.isa import Instruction, InstructionSet, isa_for
from tensile_lite.asm.operands import Label, Reg
from tensile_lite.asm.waitcnt import waitcnt
from tensile_lite.asm.writer import AsmWriter, Labels

# A buffer offset no tensor reaches: loads from it return 0 and stores to it are dropped (the
# runtime keeps every tensor below 2 GiB from the tile origin, like upstream's BufferOOB).
OUT_OF_BOUNDS = 0x80000000


class Emitter:
    """Instruction stream of one kernel under construction."""

    def __init__(self, plan: GemmPlan, regs: RegisterMap, lines: list[str]) -> None:
        self.plan = plan
        self.r = regs
        self.isa: InstructionSet = isa_for(plan.arch.name)
        self.labels = Labels()
        self.out = AsmWriter(lines)

    def __call__(self, *items: Instruction | Iterable[Instruction]) -> None:
        for item in items:
            if isinstance(item, Instruction):
                self.out.emit(item)
            else:
                self.out.extend(item)

    def label(self, label: Label) -> None:
        self.out.label(label)

    def new_label(self, name: str) -> Label:
        return self.labels.new(name)

    # ---- idioms ------------------------------------------------------------------------------
    def wait(self, *, vmcnt: int | None = None, lgkmcnt: int | None = None) -> None:
        self(waitcnt(self.isa, vmcnt=vmcnt, lgkmcnt=lgkmcnt))

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
