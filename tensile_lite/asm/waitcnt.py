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


class Outstanding:
    """The memory operations one wave has issued and not yet waited for, in issue order, each with a tag,
    so that a writer asks for "the data of tag X" and gets the weakest wait that guarantees it.

    Operations on one counter complete in issue order (SMEM excepted: any SMEM on a counter makes its
    waits go to 0, as `wait_counts` says). A count wider than the counter's field waits for more than
    asked, never less. `forget` marks the state unknown (a control-flow join of differing paths): the
    next wait on that counter is then to 0.
    """

    __slots__ = ("_arch", "_pending", "_unknown")

    def __init__(self, arch: Arch) -> None:
        self._arch = arch
        self._pending: dict[str, list[tuple[str, object]]] = {}
        self._unknown: set[str] = set()

    def issue(self, event: str, tag: object) -> None:
        counter = self._arch.wait_events[event]
        self._pending.setdefault(counter, []).append((event, tag))

    def pending(self, event: str) -> int:
        return len(self._pending.get(self._arch.wait_events[event], ()))

    def forget(self, event: str) -> None:
        counter = self._arch.wait_events[event]
        self._pending.pop(counter, None)
        self._unknown.add(counter)

    def counts_for(self, *tags: object) -> dict[str, int]:
        """Counter values that retire every operation carrying one of `tags`; the tracked state is
        updated as if the wait were issued. Counters with nothing to retire are left out."""
        out: dict[str, int] = {}
        wanted = set(tags)
        for counter, queue in self._pending.items():
            last = max((i for i, (_, tag) in enumerate(queue) if tag in wanted), default=-1)
            if last < 0:
                continue
            younger = len(queue) - last - 1
            if any(event == SMEM for event, _ in queue):
                younger = 0
            younger = min(younger, self._arch.wait_counters[counter])
            out[counter] = younger
            # in-order completion retires every older operation too, those forgotten included
            self._unknown.discard(counter)
        for counter, value in out.items():
            queue = self._pending[counter]
            self._pending[counter] = queue[len(queue) - value:] if value else []
        return out

    def counts_all(self, *events: str) -> dict[str, int]:
        """Counter values that retire everything on the counters of `events` (known or not)."""
        out: dict[str, int] = {}
        for event in events:
            counter = self._arch.wait_events[event]
            if self._pending.get(counter) or counter in self._unknown:
                out[counter] = 0
            self._pending.pop(counter, None)
            self._unknown.discard(counter)
        return out

    def unknown(self, event: str) -> bool:
        return self._arch.wait_events[event] in self._unknown
