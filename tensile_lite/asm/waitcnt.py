"""Wait instructions: from counter values to the target's instructions, and from outstanding memory
operations to counter values.

Counters per target are `Arch.wait_counters` (gfx9: vmcnt/expcnt/lgkmcnt; gfx11 adds vscnt for
stores; gfx12: loadcnt/storecnt/dscnt/kmcnt). `Arch.wait_events` says which counter each memory
event (LOAD, STORE, LDS, SMEM) increments.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from tensile_lite.asm.arch import SMEM, Arch
from tensile_lite.asm.errors import AsmError
from tensile_lite.asm.isa import Instruction, InstructionSet, isa_for
from tensile_lite.asm.operands import NULL_REG, WaitCounts

_SPLIT_INSTRUCTIONS = {"loadcnt": "s_wait_loadcnt", "storecnt": "s_wait_storecnt", "dscnt": "s_wait_dscnt",
                       "kmcnt": "s_wait_kmcnt"}


def waitcnt(isa: InstructionSet, **counts: int | None) -> tuple[Instruction, ...]:
    """Instructions that wait until each named counter is at most its value (None: don't wait).

    Counter names are the target's (`vmcnt=0, lgkmcnt=1` on gfx9, `loadcnt=0` on gfx12); a name
    the target does not have raises, so a kernel writer cannot silently skip a wait.
    """
    return _waitcnt(isa.arch.name, tuple(sorted((k, v) for k, v in counts.items() if v is not None)))


@cache
def _waitcnt(arch_name: str, items: tuple[tuple[str, int], ...]) -> tuple[Instruction, ...]:
    # Instructions are values: a kernel asks for the same few waits thousands of times.
    isa = isa_for(arch_name)
    arch = isa.arch
    wanted = dict(items)
    for name, value in wanted.items():
        limit = arch.wait_counters.get(name)
        if limit is None:
            raise AsmError(f"{arch.name} has no wait counter {name!r}; it has {', '.join(arch.wait_counters)}")
        if not 0 <= value <= limit:
            raise AsmError(f"{name}({value}) is outside 0..{limit} on {arch.name}")
    out: list[Instruction] = []
    if arch.waitcnt_split:
        for name in ("loadcnt", "storecnt", "dscnt", "kmcnt"):
            if name in wanted:
                out.append(isa.op(_SPLIT_INSTRUCTIONS[name])(wanted[name]))
        if "expcnt" in wanted:
            raise AsmError(f"expcnt waits are not supported on {arch.name} by this layer")
        return tuple(out)
    combined = {k: wanted[k] for k in ("vmcnt", "expcnt", "lgkmcnt") if k in wanted}
    if combined:
        out.append(isa.s_waitcnt(WaitCounts(**combined)))
    if "vscnt" in wanted:
        out.append(isa.s_waitcnt_vscnt(NULL_REG, wanted["vscnt"]))
    return tuple(out)


def wait_counts(arch: Arch, pending: Sequence[str], retire: int) -> dict[str, int]:
    """Counter values that guarantee the oldest `retire` of `pending` memory events have completed.

    `pending` lists outstanding events (LOAD, STORE, LDS, SMEM) oldest first. Events on one counter
    complete in issue order except scalar loads, which may return out of order: if the counter
    holds any SMEM among the ops that matter, the wait goes to 0. Counters with nothing to retire
    are left out.
    """
    if not 0 <= retire <= len(pending):
        raise AsmError(f"cannot retire {retire} of {len(pending)} outstanding operations")
    events = arch.wait_events
    needed: dict[str, bool] = {}
    younger: dict[str, int] = {}
    smem: dict[str, bool] = {}
    for i, event in enumerate(pending):
        counter = events[event]
        if i < retire:
            needed[counter] = True
        else:
            younger[counter] = younger.get(counter, 0) + 1
        if event == SMEM:
            smem[counter] = True
    out = {}
    for counter in needed:
        after = younger.get(counter, 0)
        if after and smem.get(counter):
            after = 0
        out[counter] = min(after, arch.wait_counters[counter])
    return out


def wait_for(isa: InstructionSet, pending: Sequence[str], retire: int) -> tuple[Instruction, ...]:
    """The wait instructions that retire the oldest `retire` of `pending` (see `wait_counts`)."""
    return waitcnt(isa, **wait_counts(isa.arch, pending, retire))
