"""Per-wave and per-workgroup machine state, and the bookkeeping of outstanding memory operations.

A wave holds its VGPR file as one (lanes, registers) uint32 array (so a register tuple of one lane
is contiguous, as MFMA operands and multi-dword loads want), its scalar file as Python ints, and the
exec mask both as an int (in the scalar file) and as a cached boolean lane array.
"""

from __future__ import annotations

import numpy as np

from tensile_lite.emu.errors import HazardError
from tensile_lite.emu.hazards import MatrixTiming
from tensile_lite.emu.memory import DeviceMemory
from tensile_lite.emu.operands import EXEC_HI, EXEC_LO, SCALAR_SLOTS, scalar_slot_name

# Uninitialised registers hold this: a NaN as f32, an unmapped address, an absurd integer.
POISON32 = 0xFFBADBAD
# Uninitialised LDS bytes: 0xFF.. is a NaN in f16/bf16/f32, -1 as an integer.
LDS_POISON = 0xFF
_LANE_BITS = np.uint64(1) << np.arange(64, dtype=np.uint64)
# What an instruction's closure returns besides None (next instruction) and a target index.
END = -1
BARRIER = -2
# Pending-register keys: VGPR file index i -> i, scalar slot s -> SCALAR_KEY + s.
SCALAR_KEY = 1 << 20
# How an instruction touches a register, for the timed hazards of `Window` (values name the access
# in messages). Loads writing their destination are MEM_WRITE (checked when the load issues).
READ = "read"
MEM_READ = "read by a memory instruction"
WRITE = "written"
MEM_WRITE = "overwritten by a load"
AB_READ = "read as MFMA operand A/B"
MATRIX_WRITE = "written by an MFMA"
TRANS_READ = "read by a transcendental VALU"
ACCESS_KINDS = (READ, MEM_READ, WRITE, MEM_WRITE, AB_READ, MATRIX_WRITE, TRANS_READ)
_KIND_INDEX = {k: n for n, k in enumerate(ACCESS_KINDS)}
# The clock of a register no VALU has written yet: far in the past.
NEVER = -(1 << 40)


def mask_from_int(value: int, lanes: int) -> np.ndarray:
    return (np.uint64(value & 0xFFFFFFFFFFFFFFFF) & _LANE_BITS[:lanes]) != 0


def int_from_mask(mask: np.ndarray) -> int:
    return int.from_bytes(np.packbits(mask, bitorder="little").tobytes(), "little")


class MemoryContext:
    """What memory instructions reach at run time: the launch's device memory and LDS policy."""

    __slots__ = ("lds_oob", "memory")

    def __init__(self, memory: DeviceMemory, lds_oob: str) -> None:
        self.memory = memory
        self.lds_oob = lds_oob


class PendingOp:
    """One issued memory operation that has not been waited for yet."""

    __slots__ = ("address", "cls", "counters", "in_order", "is_lds_store", "keys", "text")

    def __init__(self, keys: tuple[int, ...], counters: tuple[str, ...], cls: str, in_order: bool,
                 text: str, address: int, is_lds_store: bool) -> None:
        self.keys = keys
        self.counters = set(counters)
        self.cls = cls
        self.in_order = in_order
        self.text = text
        self.address = address
        self.is_lds_store = is_lds_store


class MatrixWrite:
    """The MFMA behind a `Window` on its D registers, for the C-operand rules of a later MFMA."""

    __slots__ = ("count", "first", "timing")

    def __init__(self, timing: MatrixTiming, first: int, count: int) -> None:
        self.timing = timing
        self.first = first
        self.count = count


class Window:
    """A register the hardware does not interlock for a while after an instruction issued: per access
    kind (ACCESS_KINDS), the first wave clock at which that access is safe. Lives in `Wave.pending`
    beside the outstanding loads and is dropped once every access is safe or the register is
    overwritten."""

    __slots__ = ("issued", "matrix", "ready", "sources", "until")

    def __init__(self, issued: tuple[int, ...], ready: tuple[int, ...], sources: tuple[str, ...],
                 matrix: MatrixWrite | None) -> None:
        self.issued = issued
        self.ready = ready
        self.sources = sources
        self.until = max(ready)
        self.matrix = matrix

    @classmethod
    def after(cls, clock: int, needs: tuple[int, ...], source: str, matrix: MatrixWrite | None = None) -> Window:
        """The window of an instruction issued at `clock` that needs `needs` wait states per kind."""
        n = len(needs)
        return cls((clock,) * n, tuple(clock + 1 + k for k in needs), (source,) * n, matrix)

    def merged(self, older: Window) -> Window:
        """This window and an older one on the same register: the later readiness of each kind."""
        pick = [a >= b for a, b in zip(self.ready, older.ready, strict=True)]
        return Window(tuple(x if p else y for p, x, y in zip(pick, self.issued, older.issued, strict=True)),
                      tuple(max(a, b) for a, b in zip(self.ready, older.ready, strict=True)),
                      tuple(x if p else y for p, x, y in zip(pick, self.sources, older.sources, strict=True)),
                      self.matrix or older.matrix)


class Wave:
    """The state of one wavefront. Mutable by design: it is the machine being emulated."""

    __slots__ = ("accum_offset", "at_barrier", "barrier_signalled", "clock", "counters", "ended", "exec_full",
                 "exec_mask", "icount", "lanes", "pc", "pending", "queues", "s", "scc", "sclock", "v",
                 "vclock", "wave_id", "workgroup")

    def __init__(self, wave_id: int, lanes: int, vgprs: int, counters: tuple[str, ...],
                 workgroup: Workgroup) -> None:
        self.wave_id = wave_id
        self.lanes = lanes
        self.v = np.full((lanes, vgprs), POISON32, dtype=np.uint32)
        self.s: list[int] = [POISON32] * (SCALAR_SLOTS + 1)
        # AMDGPUUsage's initial wave state does not include SCC: not 0 either, so code assuming a
        # cleared SCC goes wrong here as it may on hardware
        self.scc = 1
        # Wait states issued so far (each instruction 1, `s_nop n` n + 1): what timed hazards count.
        self.clock = 0
        # Clock of the last VALU write of each VGPR-file column and scalar slot (CDNA hazards).
        self.vclock: list[int] = [NEVER] * vgprs
        self.sclock: list[int] = [NEVER] * (SCALAR_SLOTS + 1)
        self.exec_mask = np.ones(lanes, dtype=bool)
        self.exec_full = True
        # per register key: the load into it not waited for yet, or an open timed hazard
        self.pending: dict[int, PendingOp | Window] = {}
        self.queues: dict[str, list[PendingOp]] = {c: [] for c in counters}
        self.counters = counters
        self.pc = 0
        self.ended = False
        self.at_barrier = False
        self.icount = 0
        self.barrier_signalled = False
        self.workgroup = workgroup
        self.accum_offset: int | None = None

    # exec -------------------------------------------------------------------------------------
    def set_exec(self, value: int) -> None:
        value &= (1 << self.lanes) - 1
        self.s[EXEC_LO] = value & 0xFFFFFFFF
        self.s[EXEC_HI] = value >> 32 if self.lanes == 64 else self.s[EXEC_HI]
        self.refresh_exec()

    def refresh_exec(self) -> None:
        value = self.exec_value()
        self.exec_full = value == (1 << self.lanes) - 1
        self.exec_mask = mask_from_int(value, self.lanes)

    def exec_value(self) -> int:
        if self.lanes == 64:
            return self.s[EXEC_LO] | (self.s[EXEC_HI] << 32)
        return self.s[EXEC_LO]

    # outstanding memory operations ------------------------------------------------------------------
    def issue(self, op: PendingOp) -> None:
        for c in op.counters:
            self.queues[c].append(op)
        for k in op.keys:
            prior = self.pending.get(k)
            if isinstance(prior, Window):
                self._timed(k, prior, MEM_WRITE, op.text)
                prior = None
            # Two loads of the same in-order class return in order; anything else may not.
            if prior is not None and not (prior.in_order and op.in_order and prior.cls == op.cls):
                raise HazardError(f"{self.key_name(k)} is the destination of `{op.text}` while the "
                                  f"load `{prior.text}` at {prior.address:#x} into it is still "
                                  "outstanding and may complete later")
            self.pending[k] = op

    def wait(self, counter: str, allowed: int) -> None:
        """s_waitcnt <counter>(allowed): retire what the hardware guarantees to have completed."""
        queue = self.queues.get(counter)
        if not queue:
            return
        if allowed == 0:
            done = list(queue)
        else:
            done = []
            younger_in_order = 0
            for op in reversed(queue):
                if op.in_order:
                    younger_in_order += 1
                    if younger_in_order > allowed:
                        done.append(op)
        if not done:
            return
        finished = set(map(id, done))
        self.queues[counter] = [op for op in queue if id(op) not in finished]
        for op in done:
            op.counters.discard(counter)
            if not op.counters:
                for k in op.keys:
                    if self.pending.get(k) is op:
                        del self.pending[k]

    def check(self, keys: tuple[int, ...], what: str) -> None:
        """Raise if the registers may not be accessed (`what`: an ACCESS_KINDS value) yet: a load
        into them not waited for, or a timed hazard whose wait states have not elapsed."""
        for k in keys:
            op = self.pending.get(k)
            if op is None:
                continue
            if isinstance(op, Window):
                self._timed(k, op, what, "")
                if what in (WRITE, MATRIX_WRITE):
                    # the old value is gone: nothing can read it too early any more
                    self.pending.pop(k, None)
                continue
            names = "/".join(sorted(op.counters))
            raise HazardError(f"{self.key_name(k)} {what} before the load `{op.text}` at {op.address:#x} "
                              f"into it was waited for ({names})")

    def _timed(self, key: int, window: Window, what: str, by: str) -> None:
        kind = _KIND_INDEX[what]
        ready = window.ready[kind]
        if self.clock >= ready:
            if self.clock >= window.until:
                self.pending.pop(key, None)
            return
        since = self.clock - window.issued[kind] - 1
        need = ready - window.issued[kind] - 1
        who = f" by `{by}`" if by else ""
        raise HazardError(f"{self.key_name(key)} {what}{who} {since} wait states after {window.sources[kind]}; "
                          f"the hardware needs {need} (s_nop {need - 1} or independent instructions) and does "
                          "not wait by itself")

    def add_window(self, key: int, window: Window) -> None:
        """Open a timed hazard on a register (merged with one already open there)."""
        prior = self.pending.get(key)
        if isinstance(prior, Window):
            window = window.merged(prior)
        self.pending[key] = window

    def valu_wrote(self, keys: tuple[int, ...], clocks: list[int], limit: int) -> int | None:
        """The first of `keys` (indices into `clocks`, vclock or sclock) a VALU wrote fewer than
        `limit` wait states ago, or None."""
        recent = self.clock - limit
        for k in keys:
            if clocks[k] >= recent:
                return k
        return None

    def key_name(self, key: int) -> str:
        if key >= SCALAR_KEY:
            return scalar_slot_name(key - SCALAR_KEY)
        if self.accum_offset is not None and key >= self.accum_offset:
            return f"a{key - self.accum_offset}"
        return f"v{key}"

    def lds_stores_in_flight(self) -> list[PendingOp]:
        seen: list[PendingOp] = []
        for queue in self.queues.values():
            for op in queue:
                if op.is_lds_store and op not in seen:
                    seen.append(op)
        return seen


class Workgroup:
    """LDS and barrier state shared by the waves of one workgroup."""

    __slots__ = ("barrier_generation", "id", "lds", "lds_read_gen", "lds_reader", "lds_write_gen",
                 "lds_writer", "mem", "track_races")

    def __init__(self, wg_id: tuple[int, int, int], lds_bytes: int, track_races: bool,
                 mem: MemoryContext) -> None:
        self.id = wg_id
        self.mem = mem
        # LDS is not cleared between workgroups: it holds whatever the last user left
        self.lds = np.full(max(lds_bytes, 0), LDS_POISON, dtype=np.uint8)
        self.barrier_generation = 0
        self.track_races = track_races and lds_bytes > 0
        # Which wave last wrote / read each LDS byte, and in which barrier generation; empty when
        # races are not tracked.
        tracked = lds_bytes if self.track_races else 0
        self.lds_writer = np.full(tracked, -1, dtype=np.int16)
        self.lds_write_gen = np.full(tracked, -1, dtype=np.int32)
        self.lds_reader = np.full(tracked, -1, dtype=np.int16)
        self.lds_read_gen = np.full(tracked, -1, dtype=np.int32)
