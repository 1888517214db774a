"""Stage 6a: the epilogue's inputs besides C, prepared once per workgroup before the stores.

Scalars (spec/epilogue_semantics.md §1.1 steps 0 and 0'; the scale features' preparation, epi/scales.py):
alpha' = (alpha * scaleA) * scaleB and beta' = beta * scaleC in f32, overwriting the alpha and beta
argument registers; scaleD is loaded over the low half of its pointer. A null scale pointer means 1.0.

Vectors (ScaleAB Vector, ScaleAlphaVec, bias): the workgroup's slice of each is copied to LDS as
f32, one element per thread and pass, where every lane then reads the values of its rows (four at
a time) or its column. This is upstream's layout: the vectors are converted once (f16 by
`v_cvt_f32_f16`, bf16 by a shift, both exact), the bias type can be chosen at run time, and the
main loop's LDS is free by then. Elements past M or N read 0 from their buffer; a null scale
vector reads 1.0, a null bias 0. The bias of batch b starts at b * strideBias and is bounded by
strideBias * (b + 1) elements, or by the size of its dimension when that product is 0.
"""

from __future__ import annotations

from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.gemm.features import DIM_M, DIM_RUNTIME, VectorRegion
from tensile_lite.asm.modifiers import DS, Buf
from tensile_lite.asm.operands import Reg
from tensile_lite.model import DataType

# ---- scalars -----------------------------------------------------------------------------------

def load_scale(e: Emitter, dst: Reg, pointer: Reg) -> None:
    """dst = *pointer (one f32), or 1.0 when the pointer is null."""
    isa = e.isa
    skip = e.new_label("ScaleNull")
    e(isa.s_mov_b32(dst, 1.0), isa.s_cmp_eq_u64(pointer, 0), isa.s_cbranch_scc1(skip))
    e(isa.s_load_dword(dst, pointer, 0))
    e.wait(lgkmcnt=0)
    e.label(skip)


def scale_d(e: Emitter) -> Reg:
    """The SGPR holding scaleD once the ScaleCD feature's preparation ran."""
    return e.r.arg("AddressScaleD")[0]


# ---- vectors -----------------------------------------------------------------------------------

def _origin_and_size(e: Emitter, dim: int, origin: Reg, size: Reg) -> None:
    """The tile's first index and the problem size along `dim` (run-time choice for DIM_RUNTIME)."""
    isa, r = e.isa, e.r
    if dim == DIM_RUNTIME:
        e(isa.s_cmp_eq_u32(r.arg("factorDim"), 0))
        e(isa.s_cselect_b32(origin, r.tile0, r.tile1))
        e(isa.s_cselect_b32(size, r.arg("SizesFree0"), r.arg("SizesFree1")))
    else:
        m = dim == DIM_M
        e(isa.s_mov_b32(origin, r.tile0 if m else r.tile1))
        e(isa.s_mov_b32(size, r.arg("SizesFree0" if m else "SizesFree1")))


def _load_pass(e: Emitter, dt: DataType, value: Reg, address: Reg, srd: Reg, offset: int) -> None:
    """value = element (dt) at byte `address + offset` as f32."""
    isa = e.isa
    mods = Buf(offen=True, offset=offset)
    if dt is DataType.S:
        e(isa.buffer_load_dword(value, address, srd, e.soff0, mods=mods))
        e.wait(vmcnt=0)
    elif dt is DataType.H:
        e(isa.buffer_load_ushort(value, address, srd, e.soff0, mods=mods))
        e.wait(vmcnt=0)
        e(isa.v_cvt_f32_f16(value, value))
    else:
        e(isa.buffer_load_ushort(value, address, srd, e.soff0, mods=mods))
        e.wait(vmcnt=0)
        e(isa.v_lshlrev_b32(value, 16, value))


def _stage(e: Emitter, region: VectorRegion, dt: DataType, srd: Reg, first: Reg, null_is_one: bool) -> None:
    """Copy `region.length` elements starting at element `first` (an SGPR) of the buffer `srd` to
    LDS, one element per thread and pass. A null pointer stages 1.0 when `null_is_one`."""
    isa, r, plan = e.isa, e.r, e.plan
    v = r.vtmp
    threads = plan.num_threads
    bpe = dt.num_bytes
    passes = region.length // threads
    pointer = r.arg(region.argument)
    one = e.new_label("VecOne")
    write = e.new_label("VecWrite")
    if null_is_one:
        e(isa.s_cmp_eq_u64(pointer, 0), isa.s_cbranch_scc1(one))
    e(isa.v_add_u32(v[0], first, r.tid))
    e.v_mul_const(v[0], v[0], bpe)
    for k in range(passes):
        _load_pass(e, dt, v[1 + k % 4], v[0], srd, 0)
        e(isa.ds_write_b32(v[5], v[1 + k % 4], mods=DS(offset=region.lds_offset + k * threads * 4)))
        if k + 1 < passes:
            e(isa.v_add_u32(v[0], threads * bpe, v[0]))
    if null_is_one:
        e(isa.s_branch(write))
        e.label(one)
        # the multiplicative identity in the compute type (int32 1 for integer compute)
        e(isa.v_mov_b32(v[1], 1 if plan.integer else 1.0))
        for k in range(passes):
            e(isa.ds_write_b32(v[5], v[1], mods=DS(offset=region.lds_offset + k * threads * 4)))
        e.label(write)


def _srd(e: Emitter, srd: Reg, pointer: Reg, records: Reg) -> None:
    """A buffer over `records` bytes at `pointer`; none at all for a null pointer (reads give 0)."""
    isa = e.isa
    e(isa.s_mov_b32(srd[0], pointer[0]), isa.s_mov_b32(srd[1], pointer[1]))
    e(isa.s_cmp_eq_u64(pointer, 0), isa.s_cselect_b32(srd[2], 0, records))
    e(isa.s_mov_b32(srd[3], e.plan.arch.srd_word3))


def _stage_scale(e: Emitter, region: VectorRegion) -> None:
    isa, r = e.isa, e.r
    t = r.stmp
    srd, origin, size = t[0:4], t[4], t[5]
    _origin_and_size(e, region.dim, origin, size)
    e(isa.s_lshl_b32(size, size, 2))
    _srd(e, srd, r.arg(region.argument), size)
    _stage(e, region, DataType.S, srd, origin, null_is_one=True)


def _stage_bias(e: Emitter, region: VectorRegion) -> None:
    """Bias: one staging per accepted type, chosen by the run-time `biasType`; an unknown type
    stages zeros."""
    isa, r, feat = e.isa, e.r, e.plan.epilogue
    t = r.stmp
    srd, origin, size = t[0:4], t[4], t[5]
    stride = r.arg("StrideBias")
    _origin_and_size(e, region.dim, origin, size)
    # records (elements) = strideBias * (batch + 1), or the dimension's size when that is 0
    e(isa.s_add_u32(t[6], r.batch, 1), isa.s_mul_i32(t[6], stride, t[6]))
    e(isa.s_cmp_eq_u32(t[6], 0), isa.s_cselect_b32(size, size, t[6]))
    # first element: batch * strideBias + origin
    e(isa.s_mul_i32(t[6], stride, r.batch), isa.s_add_u32(origin, origin, t[6]))
    end = e.new_label("BiasStaged")
    labels = [e.new_label(f"Bias{dt.letter}") for dt in feat.bias_types]
    for dt, label in zip(feat.bias_types, labels, strict=True):
        e(isa.s_cmp_eq_u32(r.arg("biasType"), dt.value), isa.s_cbranch_scc1(label))
    e(isa.v_mov_b32(r.vtmp[1], 0))
    for k in range(region.length // e.plan.num_threads):
        e(isa.ds_write_b32(r.vtmp[5], r.vtmp[1],
                           mods=DS(offset=region.lds_offset + k * e.plan.num_threads * 4)))
    e(isa.s_branch(end))
    for dt, label in zip(feat.bias_types, labels, strict=True):
        e.label(label)
        e(isa.s_mul_i32(t[6], size, dt.num_bytes))
        _srd(e, srd, r.arg("bias"), t[6])
        _stage(e, region, dt, srd, origin, null_is_one=False)
        e(isa.s_branch(end))
    e.label(end)


def stage_vectors(e: Emitter) -> None:
    """All vectors of the plan into LDS, between two barriers (the main loop's last LDS reads before,
    the epilogue's reads after)."""
    plan = e.plan
    if not plan.vectors:
        return
    isa, r = e.isa, e.r
    e(e.barrier())
    # v5: this thread's LDS byte address in every region
    e(isa.v_lshlrev_b32(r.vtmp[5], 2, r.tid))
    for region in plan.vectors:
        if region.name == "bias":
            _stage_bias(e, region)
        else:
            _stage_scale(e, region)
    e.wait(lgkmcnt=0)
    e(e.barrier())
