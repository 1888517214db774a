"""Wait states CDNA does not insert itself, inserted as the kernel is written.

`HazardGuard` sees every instruction the Emitter writes and, before one that depends on a recent
VALU result the hardware does not interlock, emits the `s_nop` that covers the distance. The rules
are the short straight-line ones of AMD's "Manually inserted wait states" tables (as LLVM's
GCNHazardRecognizer encodes them per target); MFMA result latencies are the stages' own business
(mainloop.MFMA_RESULT_WAIT and friends). A label forgets the history: what reaches it by a branch
is the branching code's business (the emulator checks every executed path).

- a VALU writes an SGPR (vcc, a v_cmp mask, a v_readfirstlane result), then a buffer/global
  instruction reads it: 5; then v_readlane/v_writelane use it as the lane select: 4;
  gfx94x+ (no interlock for VALU-written SGPRs): then another VALU reads it: 2;
- gfx94x+: a VALU writes exec, then v_readlane/v_readfirstlane/v_writelane: 4; a VALU writes a
  VGPR that v_readlane/v_readfirstlane then read: 1;
- a non-matrix VALU writes an MFMA operand: 2; a VALU writes exec before an MFMA: 4;
- a store of more than 8 bytes (MUBUF without an SGPR soffset, or global) and a VALU that
  overwrites its data: 1 (gfx94x+: 2).
"""

from __future__ import annotations

import functools

import attrs

from tensile_lite.asm.arch import STORE, Arch
from tensile_lite.asm.isa import Instruction
from tensile_lite.asm.operands import Reg, Special
from tensile_lite.asm.table import GLOBAL, MFMA, MUBUF, VALU_FAMILIES

_DEST_TOKENS = frozenset({"sd", "sg", "vd", "ad", "lmd", "md", "wd"})
# named scalar registers as (file, index) slots
_SPECIAL_SLOTS = {"vcc": (("s", 106), ("s", 107)), "vcc_lo": (("s", 106),), "vcc_hi": (("s", 107),),
                  "exec": (("s", 126), ("s", 127)), "exec_lo": (("s", 126),), "exec_hi": (("s", 127),),
                  "m0": (("s", 124),)}
_EXEC = frozenset(_SPECIAL_SLOTS["exec"])
_LANE_ACCESS = frozenset({"v_readlane_b32", "v_readfirstlane_b32", "v_writelane_b32"})
# instructions that read vcc without naming it (VOP2 carries and v_cndmask, in their e32 forms)
_IMPLICIT_VCC = frozenset({"v_cndmask_b32", "v_addc_co_u32", "v_subb_co_u32", "v_subbrev_co_u32"})
# the deepest rule: no producer further back matters
_HORIZON = 5


@functools.lru_cache(maxsize=4096)
def _slots(operand: object) -> frozenset[tuple[str, int]]:
    if isinstance(operand, Reg):
        return frozenset((operand.file, operand.index + k) for k in range(operand.count))
    if isinstance(operand, Special):
        return frozenset(_SPECIAL_SLOTS.get(operand.text, ()))
    return frozenset()


@attrs.frozen(slots=True)
class _Rules:
    vmem_sgpr: int
    lane_select: int
    valu_sgpr: int
    exec_lane: int
    vgpr_lane: int
    mfma_operand: int
    mfma_exec: int
    wide_store: int


def _rules(arch: Arch) -> _Rules | None:
    if "cdna" not in arch.tags:
        return None  # RDNA interlocks these
    later = "gfx94x+" in arch.tags
    return _Rules(vmem_sgpr=5, lane_select=4, valu_sgpr=2 if later else 0, exec_lane=4 if later else 0,
                  vgpr_lane=1 if later else 0, mfma_operand=2, mfma_exec=4, wide_store=2 if later else 1)


def valu_mask_wait(arch: Arch) -> int:
    """Wait states between a VALU writing a lane mask (v_cmp) and a VALU reading it (gfx94x+: 2), for
    helpers that must be right even when written through something other than the Emitter."""
    rules = _rules(arch)
    return rules.valu_sgpr if rules is not None else 0


@attrs.frozen(slots=True)
class _Shape:
    """What the rules need to know about an instruction kind (one per Op, computed once)."""

    valu: bool
    vmem: bool
    mfma: bool
    lane: str | None                    # v_readlane / v_readfirstlane / v_writelane
    dests: tuple[int, ...]              # operand positions written
    sources: tuple[int, ...]            # operand positions read
    implicit: frozenset[tuple[str, int]]  # registers read without being named (vcc, exec)
    wide_store: bool                    # a store whose data may be read late (if more than 8 bytes)


def _shape(ins: Instruction) -> _Shape:
    family, name = ins.family, ins.name
    dests = tuple(n for n, slot in enumerate(ins.op.slots) if slot.token in _DEST_TOKENS)
    sources = tuple(n for n in range(len(ins.op.slots)) if n not in dests)
    mfma = family == MFMA
    lane = name if name in _LANE_ACCESS else None
    implicit = frozenset(_SPECIAL_SLOTS["vcc"]) if name in _IMPLICIT_VCC else frozenset()
    if mfma or lane:
        implicit |= _EXEC
    return _Shape(family in VALU_FAMILIES, family in (MUBUF, GLOBAL), mfma, lane, dests, sources, implicit,
                  family in (MUBUF, GLOBAL) and ins.mem == STORE)


class HazardGuard:
    """Per kernel: the recent instructions, newest last (mutable: it follows the emitted stream).

    Each entry is (wait states, SGPRs a VALU wrote, VGPRs/AGPRs a non-matrix VALU wrote, data
    registers of a wide store)."""

    def __init__(self, arch: Arch) -> None:
        self.rules = _rules(arch)
        self.recent: list[tuple[int, frozenset, frozenset, frozenset]] = []
        self.shapes: dict[int, _Shape] = {}
        # how many recent entries wrote SGPRs / are wide stores: most instructions need no scan
        self.sgpr_live = 0
        self.store_live = 0

    def forget(self) -> None:
        """A label: the instructions before it need not be what ran before it."""
        self.recent.clear()
        self.sgpr_live = self.store_live = 0

    def wait_states(self, ins: Instruction) -> int:
        """Wait states to insert before `ins`."""
        rules = self.rules
        if rules is None or not self.recent:
            return 0
        shape = self._shape_of(ins)
        ops = ins.operands
        need = 0
        if shape.valu:
            if rules.valu_sgpr and self.sgpr_live:
                need = rules.valu_sgpr - self._since(1, self._reads(shape, ops))
            if rules.wide_store and self.store_live:
                written = frozenset().union(*(_slots(ops[n]) for n in shape.dests if n < len(ops)))
                need = max(need, rules.wide_store - self._since(3, written))
        elif shape.vmem:
            if self.sgpr_live:
                need = rules.vmem_sgpr - self._since(1, self._reads(shape, ops))
        elif shape.mfma:
            need = max(rules.mfma_exec - self._since(1, _EXEC),
                       rules.mfma_operand - self._since(2, self._reads(shape, ops)))
        if shape.lane:
            need = max(need, self._lane_wait(shape, ops, rules))
        return max(need, 0)

    def issued(self, ins: Instruction, states: int = 1) -> None:
        if self.rules is None:
            return
        shape = self._shape_of(ins)
        sdefs: frozenset[tuple[str, int]] = frozenset()
        vdefs: frozenset[tuple[str, int]] = frozenset()
        store: frozenset[tuple[str, int]] = frozenset()
        ops = ins.operands
        if shape.valu:
            written = frozenset().union(*(_slots(ops[n]) for n in shape.dests if n < len(ops)))
            if ins.name.startswith("v_cmpx"):
                written |= _EXEC
            sdefs = frozenset(r for r in written if r[0] == "s")
            vdefs = written - sdefs if sdefs else written
        elif shape.wide_store:
            store = self._wide_store_data(ops, ins.family)
        recent = self.recent
        recent.append((states, sdefs, vdefs, store))
        self.sgpr_live += bool(sdefs)
        self.store_live += bool(store)
        if len(recent) > _HORIZON:
            gone = recent.pop(0)
            self.sgpr_live -= bool(gone[1])
            self.store_live -= bool(gone[3])

    # ---- helpers ---------------------------------------------------------------------------------
    def _shape_of(self, ins: Instruction) -> _Shape:
        shape = self.shapes.get(id(ins.op))
        if shape is None:
            shape = self.shapes[id(ins.op)] = _shape(ins)
        return shape

    @staticmethod
    def _reads(shape: _Shape, ops: tuple) -> frozenset[tuple[str, int]]:
        return shape.implicit.union(*(_slots(ops[n]) for n in shape.sources if n < len(ops)))

    def _since(self, field: int, regs: frozenset) -> int:
        """Wait states since the newest recent entry whose `field` meets `regs`; large if none."""
        states = 0
        for past in reversed(self.recent):
            if not past[field].isdisjoint(regs):
                return states
            states += past[0]
        return 1 << 20

    def _lane_wait(self, shape: _Shape, ops: tuple, rules: _Rules) -> int:
        """v_readlane/v_readfirstlane/v_writelane: exec, the lane select and the source VGPR."""
        sources = [_slots(ops[n]) for n in shape.sources if n < len(ops)]
        need = rules.exec_lane - self._since(1, _EXEC)
        if shape.lane != "v_readfirstlane_b32" and len(sources) >= 2:
            need = max(need, rules.lane_select - self._since(1, sources[-1]))
        if shape.lane != "v_writelane_b32" and sources:
            need = max(need, rules.vgpr_lane - self._since(2, sources[0]))
        return need

    @staticmethod
    def _wide_store_data(ops: tuple, family: str) -> frozenset[tuple[str, int]]:
        if family == MUBUF:
            data, soffset = ops[0], ops[-1]
            if isinstance(soffset, Reg) and soffset.file == "s":
                return frozenset()  # an SGPR soffset: the hardware reads the data in time
        else:
            data = ops[1] if len(ops) > 1 else None
        if not isinstance(data, Reg) or data.count <= 2:
            return frozenset()
        return _slots(data)
