"""Which elements of a matrix instruction's operands each lane holds, per instruction family: one
declarative record per family (spec/matrix_instructions.md §3.1-3.3), read by every stage that
addresses operands or accumulators (thread addresses, LDS reads, the epilogue).

Inputs. Lane l feeds row (or column) l % M of its block. Its k values come in `runs` runs of
`k_run` consecutive k; run c of lane group g = (l / M) % groups starts at

    k = g * k_run + c * groups * k_run

- CDNA MFMA (wave64): groups = 64 / M, one run (16x16x16 f16: lanes 16..31 hold k 4..7); a
  multi-block MFMA: one group, lane l of block l / M holding all K (4x4x4 with 16 blocks).
- gfx11 WMMA (wave32): one group, one run of all 16 k; lanes 16..31 repeat lanes 0..15.
- gfx12 WMMA (wave32): two groups; 16-bit inputs come in two runs of 4 (k 0-3 and 8-11 in lanes
  0..15, k 4-7 and 12-15 in lanes 16..31), 8-bit inputs in one run of 8.

Outputs. Register r of lane l holds column l % N and row `row_step * (l / N) + rows[r]`:
CDNA rows[r] = r % 4 + (r / 4) * 4 * (64 / N), row_step 4; gfx11 rows[r] = 2r, row_step 1;
gfx12 rows[r] = r, row_step 8. `row_runs` groups the registers into runs of consecutive rows (at
most four, the widest vector the epilogue moves), the unit of its loads and stores.
"""

from __future__ import annotations

import attrs

from tensile_lite.asm.arch import Arch
from tensile_lite.asm.matrix import MatrixInstruction


@attrs.frozen(slots=True)
class LaneLayout:
    wave: int                        # lanes per wavefront
    groups: int                      # lane groups along k of the inputs
    runs: int                        # runs of consecutive k per lane and operand
    row_step: int                    # output rows between consecutive lane groups (l / N)
    rows: tuple[int, ...]            # output row offset of each accumulator register
    has_agprs: bool                  # accumulators in AGPRs (CDNA) or VGPRs (RDNA)

    @property
    def wave_shift(self) -> int:
        return self.wave.bit_length() - 1

    def k_run(self, mi: MatrixInstruction) -> int:
        return mi.k // (self.groups * self.runs)

    @property
    def row_runs(self) -> tuple[tuple[int, int, int], ...]:
        """(first register, row offset, length) of each run of consecutive output rows (at most 4)."""
        out: list[tuple[int, int, int]] = []
        for r, row in enumerate(self.rows):
            if out:
                first, start, length = out[-1]
                if length < 4 and start + length == row and first + length == r:
                    out[-1] = (first, start, length + 1)
                    continue
            out.append((r, row, 1))
        return tuple(out)

    @property
    def run_length(self) -> int:
        """Rows of the shortest run (4 on CDNA and gfx12, 1 on gfx11)."""
        return min(length for _, _, length in self.row_runs)


def lane_layout(arch: Arch, mi: MatrixInstruction) -> LaneLayout:
    """The layout of `mi` on `arch` (its family: CDNA MFMA, gfx11 WMMA or gfx12 WMMA)."""
    cd = mi.cd_regs
    if mi.kind == "mfma":
        groups = 64 // mi.n
        # a multi-block instruction's lane groups are its blocks, each lane holding all K of its row
        k_groups = 1 if mi.blocks > 1 else 64 // mi.m
        return LaneLayout(64, k_groups, 1, 4, tuple(r % 4 + (r // 4) * 4 * groups for r in range(cd)), True)
    if "gfx11" in arch.tags:
        return LaneLayout(32, 1, 1, 1, tuple(2 * r for r in range(cd)), False)
    # gfx12: 16-bit inputs (4 registers) split in two runs, 8-bit ones (2 registers) in one
    runs = 2 if mi.a_regs == 4 else 1
    return LaneLayout(32, 2, runs, 8, tuple(range(cd)), False)
