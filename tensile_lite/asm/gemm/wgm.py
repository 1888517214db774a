"""The runtime's tile order: WorkGroupMappingXCC on the flat workgroup id and the WorkGroupMapping swizzle
of the tile indices, both read from internalArgs1 of the argument header (spec/epilogue_semantics.md
§6.1 steps 2 and 6, kernel_anatomy.md §1.5: bits 0-15 WGM (signed), 16-21 WGMXCC, 22-31 WGMXCCG).

Both are bijections on the tiles, so results do not depend on them; they decide which tiles run side by
side (the L2 blocks of WGM, the XCDs of WGMXCC), which is why the runtime may override them per call and
the library says the kernels read them (`internalArgsSupport.wgm`).
"""

from __future__ import annotations

from tensile_lite.asm.arith import udiv_scalar
from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.operands import Reg

INFO1 = 2  # the header dword holding internalArgs1
WORKGROUPS = 3  # ... and numWorkGroups


def xcc_remap(e: Emitter, tmp: Reg) -> None:
    """Step 2: with x = log2(WGMXCC) > 0, the ids below the last whole group of 2^x are redistributed so
    that consecutive ids (which the hardware deals out to the XCDs in turn) get neighbouring tiles; CU
    (WGMXCCG, the host's CU count) splits the launch into rounds of CU ids. `tmp`: 5 SGPRs."""
    isa, r = e.isa, e.r
    info1, total, wg = r.args[INFO1], r.args[WORKGROUPS], r.workgroup_id
    x, lim, low, cu, t = (tmp[i] for i in range(5))
    done = e.new_label("XccDone")
    by_cu = e.new_label("XccByCu")
    e(isa.s_lshr_b32(t, info1, 16), isa.s_ff1_i32_b32(x, t))  # -1 when WGMXCC is 0
    e(isa.s_cmp_gt_i32(x, 0), isa.s_cbranch_scc0(done))
    e(isa.s_lshr_b32(lim, total, x), isa.s_lshl_b32(lim, lim, x))
    e(isa.s_cmp_lt_u32(wg, lim), isa.s_cbranch_scc0(done))
    e(isa.s_lshl_b32(low, 1, x), isa.s_sub_u32(low, low, 1), isa.s_and_b32(low, wg, low))
    e(isa.s_lshr_b32(cu, info1, 22), isa.s_cmp_eq_u32(cu, 0), isa.s_cbranch_scc0(by_cu))
    # wg = (wg >> x) + low * (total >> x)
    e(isa.s_lshr_b32(t, total, x), isa.s_mul_i32(t, t, low))
    e(isa.s_lshr_b32(wg, wg, x), isa.s_add_u32(wg, wg, t))
    e(isa.s_branch(done))
    e.label(by_cu)
    vt = r.vtmp[0:4]
    # R = (total / CU) * CU; wg = (wg / CU) * CU + (wg % CU) >> x + ((wg > R ? total - R : CU) >> x) * low
    e(udiv_scalar(isa, lim, t, total, cu, vt))
    e(isa.s_mul_i32(lim, lim, cu))
    e(isa.s_sub_u32(t, total, lim), isa.s_cmp_gt_u32(wg, lim), isa.s_cselect_b32(t, t, cu))
    e(isa.s_lshr_b32(t, t, x), isa.s_mul_i32(low, low, t))
    e(udiv_scalar(isa, lim, t, wg, cu, vt))
    e(isa.s_mul_i32(lim, lim, cu), isa.s_lshr_b32(t, t, x))
    e(isa.s_add_u32(wg, lim, t), isa.s_add_u32(wg, wg, low))
    e.label(done)


def swizzle(e: Emitter, wg0: Reg, wg1: Reg, nwg0: Reg, nwg1: Reg, tmp: Reg) -> None:
    """Step 6 on the tile indices (wg0, wg1) of an nwg0 x nwg1 grid, in place: W = sext16(WGM) > 1 walks
    the tiles in blocks of W tile columns, column-fastest within a block (the last block as wide as what
    is left); W < 0 the same with blocks of |W| tile rows; 0 and 1 leave the row-major order. `tmp`: 4
    SGPRs."""
    isa, r = e.isa, e.r
    w = tmp[0]
    by_rows = e.new_label("WgmRows")
    done = e.new_label("WgmDone")
    e(isa.s_sext_i32_i16(w, r.args[INFO1]))
    e(isa.s_cmp_gt_i32(w, 1), isa.s_cbranch_scc0(by_rows))
    _blocks(e, wg1, wg0, nwg1, nwg0, tmp)
    e(isa.s_branch(done))
    e.label(by_rows)
    e(isa.s_cmp_ge_i32(w, 0), isa.s_cbranch_scc1(done))
    e(isa.s_abs_i32(w, w))
    _blocks(e, wg0, wg1, nwg0, nwg1, tmp)
    e.label(done)


def _blocks(e: Emitter, major: Reg, minor: Reg, n_major: Reg, n_minor: Reg, tmp: Reg) -> None:
    """block = major / W, serial = minor + (major % W) * n_minor, width = W, or n_major % W for the last
    partial block; then minor = serial / width, major = serial % width + block * W."""
    isa, r = e.isa, e.r
    w, block, serial, width = (tmp[i] for i in range(4))
    vt = r.vtmp[0:4]
    e(udiv_scalar(isa, block, serial, major, w, vt))
    e(isa.s_mul_i32(serial, serial, n_minor), isa.s_add_u32(serial, serial, minor))
    # major is free until it is rewritten: it holds the last block's width meanwhile
    e(udiv_scalar(isa, width, major, n_major, w, vt))
    e(isa.s_cmp_eq_u32(major, 0), isa.s_cselect_b32(major, w, major))
    e(isa.s_cmp_ge_u32(block, width), isa.s_cselect_b32(width, major, w))
    e(udiv_scalar(isa, minor, major, serial, width, vt))
    e(isa.s_mul_i32(block, block, w), isa.s_add_u32(major, major, block))
