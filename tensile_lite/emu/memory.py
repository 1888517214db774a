"""Device memory for the emulator: numpy byte buffers at fake 64-bit addresses.

Allocations start above 4 GiB and are separated by unmapped guard gaps, so an address truncated
to 32 bits, or an access running past the end of a buffer, is a MemoryFault instead of silently
reading a neighbour.
"""

from __future__ import annotations

import bisect

import numpy as np

from tensile_lite.emu.errors import MemoryFault

_BASE = 0x7F10_0000_0000
_GUARD = 1 << 20
_ALIGN = 1 << 12


class DeviceMemory:
    """A set of allocations; addresses are plain ints, data is read and written as numpy arrays."""

    __slots__ = ("_bases", "_buffers", "_ends", "_next")

    def __init__(self) -> None:
        self._bases: list[int] = []
        self._ends: list[int] = []
        self._buffers: list[np.ndarray] = []
        self._next = _BASE

    def alloc(self, data: int | np.ndarray | bytes, *, align: int = 256, fill: int = 0) -> int:
        """Allocate `data` bytes (an int), or a copy of an array / bytes; return the device address."""
        if isinstance(data, int):
            buf = np.full(data, fill, dtype=np.uint8)
        elif isinstance(data, (bytes, bytearray, memoryview)):
            buf = np.frombuffer(bytes(data), dtype=np.uint8).copy()
        else:
            buf = np.ascontiguousarray(data).view(np.uint8).reshape(-1).copy()
        align = max(align, 1)
        base = -(-self._next // max(align, _ALIGN)) * max(align, _ALIGN)
        self._bases.append(base)
        self._ends.append(base + buf.size)
        self._buffers.append(buf)
        self._next = base + max(buf.size, 1) + _GUARD
        return base

    def buffer(self, address: int) -> tuple[np.ndarray, int]:
        """The allocation holding `address` and the offset into it (MemoryFault if unmapped)."""
        i = bisect.bisect_right(self._bases, address) - 1
        if i < 0 or address >= self._ends[i]:
            raise MemoryFault(f"address {address:#x} is not inside any allocation")
        return self._buffers[i], address - self._bases[i]

    def read(self, address: int, nbytes: int) -> bytes:
        buf, off = self._span(address, nbytes)
        return buf[off:off + nbytes].tobytes()

    def write(self, address: int, data: bytes | np.ndarray) -> None:
        raw = np.frombuffer(bytes(data), dtype=np.uint8) if isinstance(data, (bytes, bytearray)) \
            else np.ascontiguousarray(data).view(np.uint8).reshape(-1)
        buf, off = self._span(address, raw.size)
        buf[off:off + raw.size] = raw

    def array(self, address: int, dtype: np.dtype | type, count: int | None = None) -> np.ndarray:
        """A copy of the allocation's contents from `address`, as `count` elements of `dtype`."""
        dt = np.dtype(dtype)
        buf, off = self.buffer(address)
        n = (buf.size - off) // dt.itemsize if count is None else count
        _, off = self._span(address, n * dt.itemsize)
        return buf[off:off + n * dt.itemsize].copy().view(dt)

    def _span(self, address: int, nbytes: int) -> tuple[np.ndarray, int]:
        buf, off = self.buffer(address)
        if off + nbytes > buf.size:
            raise MemoryFault(f"{nbytes} bytes at {address:#x} run past the end of the allocation "
                              f"at {address - off:#x} ({buf.size} bytes)")
        return buf, off

    # Vectorised access for the emulator: `addresses` is a uint64 array, one per lane; `nbytes` per lane.
    def locate(self, addresses: np.ndarray, nbytes: int) -> tuple[np.ndarray, np.ndarray]:
        """(flat byte indices of shape (lanes, nbytes) into the allocation, the allocation), one buffer.

        The common case, every lane inside one allocation, is one bisect; lanes spread over several
        allocations go through `gather`/`scatter` instead.
        """
        lo = int(addresses.min())
        hi = int(addresses.max()) + nbytes
        i = bisect.bisect_right(self._bases, lo) - 1
        if i < 0 or hi > self._ends[i]:
            raise _Spread
        off = (addresses - np.uint64(self._bases[i])).astype(np.int64)
        return off[:, None] + np.arange(nbytes, dtype=np.int64), self._buffers[i]

    def gather(self, addresses: np.ndarray, nbytes: int) -> np.ndarray:
        """Bytes at each address: shape (lanes, nbytes) uint8."""
        if addresses.size == 0:
            return np.zeros((0, nbytes), dtype=np.uint8)
        try:
            idx, buf = self.locate(addresses, nbytes)
            return buf[idx]
        except _Spread:
            out = np.empty((addresses.size, nbytes), dtype=np.uint8)
            for n, a in enumerate(addresses.tolist()):
                buf, off = self._span(int(a), nbytes)
                out[n] = buf[off:off + nbytes]
            return out

    def scatter(self, addresses: np.ndarray, data: np.ndarray) -> None:
        """Write data (lanes, nbytes) uint8 at each address, lanes in increasing order (last wins)."""
        if addresses.size == 0:
            return
        nbytes = data.shape[1]
        try:
            idx, buf = self.locate(addresses, nbytes)
            buf[idx] = data
        except _Spread:
            for n, a in enumerate(addresses.tolist()):
                buf, off = self._span(int(a), nbytes)
                buf[off:off + nbytes] = data[n]


class _Spread(Exception):
    """Lanes of one access fall into more than one allocation (or outside all of them)."""
