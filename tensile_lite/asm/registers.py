"""Register allocation for one kernel: SGPR, VGPR and AGPR pools with alignment, names, scoped
temporaries and a high-water mark that the kernel descriptor takes its counts from.

An allocator is working state of one kernel writer (never shared, never global); what leaves it is
the frozen `RegisterCounts`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import attrs

from tensile_lite.asm.arch import Arch, get_arch
from tensile_lite.asm.errors import AsmError, RegisterOverflow
from tensile_lite.asm.operands import Reg, _reg

_CLASS_NAMES = {"s": "SGPR", "v": "VGPR", "a": "AGPR"}


class RegisterPool:
    """First-fit allocator over one register file of one kernel."""

    __slots__ = ("_free_count", "_names", "_used", "file", "high_water", "kernel", "limit", "min_align",
                 "target")

    def __init__(self, file: str, limit: int, kernel: str, target: str, min_align: dict[int, int]):
        self.file = file
        self.limit = limit
        self.kernel = kernel
        self.target = target
        # width -> smallest alignment the target requires for a tuple of that width
        self.min_align = min_align
        self._used = bytearray(limit)
        self._names: dict[str, Reg] = {}
        self._free_count = limit
        self.high_water = 0

    @property
    def class_name(self) -> str:
        return _CLASS_NAMES[self.file]

    def _align_for(self, count: int, align: int) -> int:
        need = max(align, self.min_align.get(count, self.min_align.get(0, 1)) if count > 1 else 1)
        if need < 1 or need & (need - 1):
            raise AsmError(f"register alignment must be a power of two, got {align}")
        return need

    def alloc(self, count: int, align: int = 1, name: str | None = None) -> Reg:
        """`count` consecutive free registers starting at a multiple of `align` (first fit)."""
        if count < 1:
            raise AsmError(f"cannot allocate {count} {self.class_name}s")
        step = self._align_for(count, align)
        used = self._used
        start = 0
        while start + count <= self.limit:
            block = used[start:start + count]
            if not any(block):
                return self._take(start, count, name)
            # skip past the last used register of the window, then realign
            last = start + count - 1 - block[::-1].index(1)
            start = (last + 1 + step - 1) // step * step
        raise RegisterOverflow(
            f"kernel {self.kernel}: needs {count} more {self.class_name}s"
            + (f" for {name}" if name else "")
            + f" but {self.target} has {self.limit} and {self.limit - self._free_count} are in use "
            f"(largest free block too small)")

    def reserve(self, index: int, count: int = 1, name: str | None = None) -> Reg:
        """Claim fixed registers (e.g. the kernarg pointer in s[0:1] at entry)."""
        if index < 0 or index + count > self.limit:
            raise RegisterOverflow(f"kernel {self.kernel}: {self.class_name}s {index}..{index + count - 1} "
                                   f"are outside the {self.limit} of {self.target}")
        if any(self._used[index:index + count]):
            raise AsmError(f"kernel {self.kernel}: {self.class_name}s {index}..{index + count - 1} are "
                           "already in use")
        return self._take(index, count, name)

    def _take(self, start: int, count: int, name: str | None) -> Reg:
        if name is not None:
            if name in self._names:
                raise AsmError(f"kernel {self.kernel}: {self.class_name} range {name!r} is already allocated")
        self._used[start:start + count] = b"\x01" * count
        self._free_count -= count
        self.high_water = max(self.high_water, start + count)
        reg = _reg(self.file, start, count)
        if name is not None:
            self._names[name] = reg
        return reg

    def free(self, reg: Reg | str) -> None:
        """Return a range (or a named range) to the pool; its high-water mark stays."""
        if isinstance(reg, str):
            reg = self._names.pop(reg)
        else:
            for key, value in list(self._names.items()):
                if value == reg:
                    del self._names[key]
        if reg.file != self.file or not all(self._used[reg.index:reg.end]):
            raise AsmError(f"kernel {self.kernel}: {reg.text} is not allocated from this pool")
        self._used[reg.index:reg.end] = bytes(reg.count)
        self._free_count += reg.count

    def named(self, name: str) -> Reg:
        try:
            return self._names[name]
        except KeyError:
            raise AsmError(f"kernel {self.kernel}: no {self.class_name} range named {name!r}") from None

    @contextmanager
    def temp(self, count: int, align: int = 1) -> Iterator[Reg]:
        """A scoped temporary: `with pool.temp(2) as t:` frees `t` when the block ends."""
        reg = self.alloc(count, align)
        try:
            yield reg
        finally:
            self.free(reg)

    @property
    def in_use(self) -> int:
        return self.limit - self._free_count


@attrs.frozen(slots=True)
class RegisterCounts:
    """What a kernel used: one past the highest register of each class."""

    vgprs: int
    agprs: int
    sgprs: int


class Registers:
    """The three pools of one kernel on one target (`s`, `v`, and `a` where the target has AGPRs)."""

    __slots__ = ("a", "arch", "kernel", "s", "v")

    def __init__(self, arch: Arch | str, kernel: str):
        self.arch = get_arch(arch) if isinstance(arch, str) else arch
        self.kernel = kernel
        a = self.arch
        vec_align = {0: 2} if a.aligned_vgpr_tuples else {}
        # SGPR pairs start even and wider SGPR tuples at a multiple of 4.
        self.s = RegisterPool("s", a.max_sgprs, kernel, a.name, {2: 2, 0: 4})
        self.v = RegisterPool("v", a.max_vgprs, kernel, a.name, vec_align)
        self.a = RegisterPool("a", a.max_agprs, kernel, a.name, vec_align) if a.has_agprs else None

    def counts(self) -> RegisterCounts:
        """High-water marks. (The unified gfx90a+ file holds 512: 256 VGPRs, rounded to 4, plus
        256 AGPRs always fit, so the per-class limits are the only ones to check.)"""
        agprs = self.a.high_water if self.a is not None else 0
        return RegisterCounts(self.v.high_water, agprs, self.s.high_water)


def accum_offset(counts: RegisterCounts) -> int:
    """Where AGPRs start in a unified file: the VGPR count rounded up to 4, at least 4 (LLVM's
    `.amdhsa_accum_offset` range is 4..256 in steps of 4)."""
    return max(4, (counts.vgprs + 3) // 4 * 4)
