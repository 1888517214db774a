"""Which workgroup computes which tile, so a large problem can run only a few chosen workgroups.

The runtime launches a 1-D grid on gfx9/gfx11 (a 3-D one on gfx12) and the kernel rebuilds
(tile0, tile1, batch) from the workgroup id, swizzled by the runtime arguments WorkGroupMapping and
WorkGroupMappingXCC (spec/epilogue_semantics.md §6.1). A kernel that ignores them and walks the tiles
in row-major order is just as correct for GSU 1, so the verifier knows both orders and finds out
which one a kernel uses from the tiles its workgroups write.

A split-K launch (GSU > 1) has GSU workgroups per tile, each summing one slice of K: the per-batch id
range is nwg0 x nwg1 x GSU and the second tile index carries the slice (§5.5: `wg1 % GSU` is the slice,
or `wg1 / nwg1` with GSUWGMRR). Every slice of a tile must run for the tile to be complete, so
`workgroups_of` gives all of them.
"""

from __future__ import annotations

import attrs

Tile = tuple[int, int, int]  # (tile0, tile1, batch)
LaunchId = tuple[int, int, int]  # the workgroup id as Emulator.launch takes it


@attrs.frozen(slots=True)
class Grid:
    """The tiles of one problem and how the runtime launches them."""

    tiles0: int
    tiles1: int
    batch: int
    three_d: bool = False  # gfx12: (tiles0, tiles1 x gsu, batch) grid instead of a flattened one
    gsu: int = 1  # workgroups per tile (split-K slices)
    gsu_round_robin: bool = False  # GSUWGMRR: the slice is wg1 / nwg1 instead of wg1 % GSU

    @property
    def tiles(self) -> int:
        return self.tiles0 * self.tiles1 * self.batch

    @property
    def count(self) -> int:
        """Workgroups of the launch."""
        return self.tiles * self.gsu

    @property
    def launch_grid(self) -> tuple[int, int, int]:
        return (self.tiles0, self.tiles1 * self.gsu, self.batch) if self.three_d else (self.count, 1, 1)

    def ids(self) -> list[LaunchId]:
        if self.three_d:
            return [(x, y, z) for z in range(self.batch) for y in range(self.tiles1 * self.gsu)
                    for x in range(self.tiles0)]
        return [(w, 0, 0) for w in range(self.count)]

    def split(self, wg1: int) -> tuple[int, int]:
        """(tile index wg1, slice) from a second index in [0, tiles1 x gsu)."""
        if self.gsu <= 1:
            return wg1, 0
        if self.gsu_round_robin:
            slice_, wg1 = divmod(wg1, self.tiles1)
            return wg1, slice_
        wg1, slice_ = divmod(wg1, self.gsu)
        return wg1, slice_


@attrs.frozen(slots=True)
class TileOrder:
    """A workgroup-id -> tile order: the runtime's swizzle for `info1` (internalArgs1), or row-major."""

    name: str
    wgm: int = 1
    xcc: int = 1
    cu: int = 0

    @classmethod
    def from_info1(cls, info1: int) -> TileOrder:
        wgm = info1 & 0xFFFF
        wgm = wgm - 0x10000 if wgm & 0x8000 else wgm
        return cls("WorkGroupMapping", wgm, (info1 >> 16) & 0x3F, (info1 >> 22) & 0x3FF)

    @property
    def is_row_major(self) -> bool:
        return self.wgm in (0, 1) and self.xcc <= 1

    def tile(self, grid: Grid, wg: LaunchId) -> Tile:
        return self.tile_and_slice(grid, wg)[0]

    def tile_and_slice(self, grid: Grid, wg: LaunchId) -> tuple[Tile, int]:
        """The tile workgroup `wg` computes and the split-K slice it sums (0 when GSU is 1)."""
        if grid.three_d:
            wg0, wg1, wg2 = wg
        else:
            flat = self._xcc(wg[0], grid.count)
            per_batch = grid.tiles0 * grid.tiles1 * grid.gsu
            wg2, rest = divmod(flat, per_batch)
            wg1, wg0 = divmod(rest, grid.tiles0)
        wg1, slice_ = grid.split(wg1)
        wg0, wg1 = self._swizzle(wg0, wg1, grid.tiles0, grid.tiles1)
        return (wg0, wg1, wg2), slice_

    def _xcc(self, wg: int, total: int) -> int:
        if self.xcc <= 1:
            return wg
        x = (self.xcc & -self.xcc).bit_length() - 1  # s_ff1: the lowest set bit
        if x == 0 or wg >= (total >> x) << x:
            return wg
        low = wg & ((1 << x) - 1)
        if self.cu == 0:
            return (wg >> x) + low * (total >> x)
        cu = self.cu
        whole = (total // cu) * cu
        base = (wg // cu) * cu + ((wg % cu) >> x)
        count = total - whole if wg > whole else cu
        return base + (count >> x) * low

    def _swizzle(self, wg0: int, wg1: int, n0: int, n1: int) -> tuple[int, int]:
        w = self.wgm
        if 0 <= w <= 1:
            return wg0, wg1
        if w > 1:
            block, serial = wg1 // w, wg0 + (wg1 % w) * n0
            width = (n1 % w or w) if block >= n1 // w else w
            return serial // width, serial % width + block * w
        w = -w
        block, serial = wg0 // w, wg1 + (wg0 % w) * n1
        width = (n0 % w or w) if block >= n0 // w else w
        return serial % width + block * w, serial // width


ROW_MAJOR = TileOrder("row-major")


def launch_table(mapping: TileOrder, grid: Grid) -> dict[Tile, LaunchId]:
    """Tile -> the workgroup that computes it under `mapping` (first one, if the order is not one to one)."""
    table: dict[Tile, LaunchId] = {}
    for wg in grid.ids():
        table.setdefault(mapping.tile(grid, wg), wg)
    return table


def workgroups_of(mapping: TileOrder, grid: Grid) -> dict[Tile, list[LaunchId]]:
    """Tile -> every workgroup that works on it under `mapping` (GSU of them in a split-K launch)."""
    table: dict[Tile, list[LaunchId]] = {}
    for wg in grid.ids():
        table.setdefault(mapping.tile(grid, wg), []).append(wg)
    return table


def representative_tiles(grid: Grid) -> list[Tile]:
    """The four corner tiles of the first batch (edge tiles in both free dimensions when the sizes are
    not multiples of the tile), the far corner and one interior tile of the last batch."""
    last0, last1, last_b = grid.tiles0 - 1, grid.tiles1 - 1, grid.batch - 1
    tiles = [(0, 0, 0), (last0, 0, 0), (0, last1, 0), (last0, last1, 0), (last0, last1, last_b),
             (grid.tiles0 // 2, grid.tiles1 // 2, last_b)]
    return list(dict.fromkeys(tiles))
