"""Non-matrix (MAC) kernels: solutions with an empty MatrixInstruction, whose inner product is one
fused multiply-add per element and k (`v_fmac_f32` for f32, `v_fma_f64` for f64) on the VALU.

The MAC kernel reuses every stage of the matrix-instruction writer by describing its per-lane
arithmetic as a small "instruction" the stages already understand: one block is an m x n piece of
the output, one element per lane (lane l holds row l / n and column l % n, so `LaneLayout` with
row_step 1 and one row per block), and a k-step is `k` consecutive k values that each lane reads
from LDS in one access per block row or column (K is contiguous in LDS). With the solution's
WorkGroup [SG0, SG1] (SG0 * SG1 threads) the waves tile an SG0 x SG1 grid of lanes, and each lane
owns ThreadTile[0] x ThreadTile[1] blocks: element (i, j) of a lane is row i * m + l / n of its
wave's rows, column j * n + l % n. Upstream strides its thread tiles the same way (VectorWidth 1);
the layout only decides which lane computes which element, never the values.

Accumulators are VGPRs on every target (no AGPRs: the VALU cannot write them); the epilogue is the
f32 one element by element, or `epilogue_f64` for f64.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tensile_lite.asm.gemm.lanes import LaneLayout
from tensile_lite.asm.matrix import MatrixInstruction

if TYPE_CHECKING:  # plan.py reads this module's geometry; the emitting stages read plan.py
    from tensile_lite.asm.gemm.emit import Emitter

MAC = "mac"
# (element bytes, multiply-add) per MAC type: the f32 form accumulates in place (VOP2)
_OPS = {"f32": (4, "v_fmac_f32"), "f64": (8, "v_fma_f64")}
# the widest LDS read (local_read.MAX_READ_BYTES): one k-step's values of a row in one access
_READ_BYTES = 16


class MacGeometryError(ValueError):
    """The solution's work group and wave size do not tile into MAC blocks."""


def mac_types() -> tuple[str, ...]:
    """The element formats the MAC kernels compute in (A, B, accumulation and epilogue alike)."""
    return tuple(_OPS)


def mac_instruction(fmt: str, workgroup: tuple[int, int], wave: int, depth_u: int) -> MatrixInstruction:
    """The MAC "instruction" of one k-step: an m x n block of lanes (n = SG1 capped by the wave),
    k = as many consecutive k as one LDS read of at most 16 bytes holds (and DepthU divides)."""
    bpe, op = _OPS[fmt]
    sg0, sg1 = workgroup
    n = min(sg1, wave)
    if wave % n or sg1 % n:
        raise MacGeometryError(f"WorkGroup [{sg0}, {sg1}] does not split into wave{wave} rows")
    m = wave // n
    if sg0 % m:
        raise MacGeometryError(f"WorkGroup [{sg0}, {sg1}] does not split into {m}x{n} lane blocks")
    k = _READ_BYTES // bpe
    while depth_u % k:
        k //= 2
    regs = k * bpe // 4
    return MatrixInstruction(name=op, spelling=op, kind=MAC, m=m, n=n, k=k, blocks=1, a_type=fmt, b_type=fmt,
                             acc_type=fmt, a_regs=regs, b_regs=regs, cd_regs=bpe // 4)


def mac_wave_group(mi: MatrixInstruction, workgroup: tuple[int, int]) -> tuple[int, int]:
    """Waves along M and N: the SG0 x SG1 lane grid in blocks of m x n lanes."""
    return workgroup[0] // mi.m, workgroup[1] // mi.n


def mac_lanes(wave: int) -> LaneLayout:
    """One output element per lane and block: row l / n, column l % n."""
    return LaneLayout(wave, 1, 1, 1, (0,), False)


def compute_tile(e: Emitter) -> None:
    """The DepthU tile's products: per k-step, read the lane's k values of each block row of A and
    column of B (double-buffered, the next step's reads overlapping this step's arithmetic), then one
    multiply-add per element and k, k in order (the sum's order is upstream's: k ascending)."""
    from tensile_lite.asm.gemm.local_read import read_step
    plan, r = e.plan, e.r
    steps = plan.steps
    read_step(e, plan.a, r.a, 0, 0)
    read_step(e, plan.b, r.b, 0, 0)
    for s in range(steps):
        e.wait(lgkmcnt=0)
        if s + 1 < steps:
            read_step(e, plan.a, r.a, s + 1, (s + 1) % 2)
            read_step(e, plan.b, r.b, s + 1, (s + 1) % 2)
        _multiply_add(e, s % 2)


def _multiply_add(e: Emitter, buffer: int) -> None:
    plan, r = e.plan, e.r
    mi = plan.mfma
    words = mi.cd_regs
    op = e.isa.op(mi.name)
    wt0, wt1 = plan.wave_tile
    a_buf, b_buf = r.a.mfma[buffer], r.b.mfma[buffer]
    for kk in range(mi.k):
        for t0 in range(wt0):
            a = a_buf[t0 * mi.a_regs + kk * words:t0 * mi.a_regs + (kk + 1) * words]
            for t1 in range(wt1):
                b = b_buf[t1 * mi.b_regs + kk * words:t1 * mi.b_regs + (kk + 1) * words]
                acc = r.acc[(t0 * wt1 + t1) * words:(t0 * wt1 + t1 + 1) * words]
                e(op(acc, a, b) if words == 1 else op(acc, a, b, acc))
