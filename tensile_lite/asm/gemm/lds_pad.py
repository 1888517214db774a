"""How many elements of padding to put after each LDS row of an operand tile, so that the lanes of one
LDS access fall into different banks.

A model only (it never changes results, only speed): LDS serves 128 bytes per clock from 32 banks of
4 bytes; the lanes of a wave are served in groups of consecutive lanes that move 128 bytes together
(8 lanes for 16-byte accesses, 16 for 8-byte, 32 for narrower); within a group an access costs as many
clocks as the busiest bank has distinct dwords to serve (the same dword is broadcast). The cost of a
layout is the sum over one tile's LDS writes and the k-steps' reads of wave 0, with lane addresses
as setup.thread_addresses, local_write.write_tile and local_read.read_step compute them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

BANKS = 32
BANK_BYTES = 4
# widest padding tried, in bytes per row: two 16-byte accesses' worth covers every phase shift
MAX_PAD_BYTES = 32
# ... for rows one k apart (k_rows), whose lanes of one read sit in a few rows: up to half the banks
ROW_SHIFT_PAD_BYTES = BANKS * BANK_BYTES // 2


# 16-byte reads of a wave64 may also be served in these groups of lanes (two runs of four; kernel-perf's
# README, from a description of CDNA3): a layout should suit either grouping
SPLIT_GROUPS = tuple(tuple(range(a, a + 4)) + tuple(range(b, b + 4)) for a, b in
                     ((0, 20), (4, 16), (8, 28), (12, 24), (32, 52), (36, 48), (40, 60), (44, 56)))


def _group_clocks(addresses: Sequence[int], dwords: int, groups: Sequence[Sequence[int]]) -> int:
    clocks = 0
    for lanes in groups:
        # the distinct dwords of the group (one dword is broadcast), counted per bank
        per_bank = [0] * BANKS
        for dw in {addresses[lane] // BANK_BYTES + d for lane in lanes for d in range(dwords)}:
            per_bank[dw % BANKS] += 1
        clocks += max(per_bank)
    return clocks


def access_clocks(addresses: Sequence[int], nbytes: int) -> int:
    """Clocks LDS takes for one wave-wide access of `nbytes` per lane at these byte addresses."""
    dwords = max(1, nbytes // BANK_BYTES)
    size = max(1, min(32, BANKS // dwords))
    groups = [range(first, min(first + size, len(addresses))) for first in range(0, len(addresses), size)]
    clocks = _group_clocks(addresses, dwords, groups)
    if dwords == 4 and len(addresses) == 64:
        clocks = max(clocks, _group_clocks(addresses, dwords, SPLIT_GROUPS))
    return clocks


Accesses = Sequence[tuple[Sequence[tuple[int, int]], int]]


def layout_clocks(stride: int, bpe: int, writes: Accesses, reads: Accesses, read_weight: int = 1) -> int:
    """Clocks of every access, each given as per-lane (row, column) element coordinates and its width in
    bytes, with rows `stride` elements apart; the reads counted `read_weight` times (k-steps per write)."""
    total = 0
    # a tile's accesses are mostly one pattern moved by whole dwords, which only renames the banks: each
    # pattern is costed once
    seen: dict[tuple[int, tuple[int, ...]], int] = {}
    for accesses, weight in ((writes, 1), (reads, read_weight)):
        for lanes, nbytes in accesses:
            addresses = [(row * stride + col) * bpe for row, col in lanes]
            low = min(addresses) // BANK_BYTES * BANK_BYTES if addresses else 0
            key = (nbytes, tuple(a - low for a in addresses))
            if key not in seen:
                seen[key] = access_clocks(key[1], nbytes)
            total += weight * seen[key]
    return total


def best_stride(base: int, unit: int, bpe: int, writes: Callable[[int], Accesses], reads: Accesses, *,
                max_pad_bytes: int = MAX_PAD_BYTES, read_weight: int = 1) -> int:
    """The row stride (the unpadded `base` plus a multiple of `unit` elements, at most `max_pad_bytes` of
    padding) whose accesses take the fewest clocks, one k-step's `reads` counted `read_weight` times (the
    k-steps of one tile's writes); the least padding among equals. `writes` gives the writes for a stride
    (their widths depend on how the stride aligns rows)."""
    best, best_clocks = base, None
    pad = 0
    while pad * bpe <= max_pad_bytes:
        clocks = layout_clocks(base + pad, bpe, writes(base + pad), reads, read_weight)
        if best_clocks is None or clocks < best_clocks:
            best, best_clocks = base + pad, clocks
        pad += unit
    return best
