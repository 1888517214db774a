"""Stage 2: global reads of one DepthU tile of A or B into registers, through buffer resources.

Two forms, chosen per tile at run time:
- vector loads with no checks, for tiles wholly inside the tensor;
- guarded loads, one element at a time, for the K remainder tile and for edge tiles whose vectors
  run along a free dimension that ends mid-vector. Each element outside the problem (k >= K, or
  past M/N) is pointed at an offset no buffer reaches, so it reads 0 and the MFMA adds nothing.

Element loads exist because the hardware's treatment of a vector load that straddles the end of a
buffer is chip-dependent; an element either lies wholly inside the bound or wholly outside.
Elements narrower than a dword are packed so that both forms leave the same bytes in the tile
registers. Where D16 loads keep the other half of their register (RDNA), 16-bit elements load
straight into their halves and bytes into 16-bit halves that one v_perm packs. On CDNA, whose
SRAM-ECC parts zero the other half (spec hardware_semantics.md §1), every element is loaded
zero-extended into a register of its own and shifted into place with v_lshl_or_b32.
"""

from __future__ import annotations

from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.gemm.layout import OperandRegs
from tensile_lite.asm.gemm.plan import OperandPlan
from tensile_lite.asm.modifiers import Buf
from tensile_lite.asm.operands import Reg, Special

_VECTOR_LOADS = {16: "buffer_load_dwordx4", 8: "buffer_load_dwordx2", 4: "buffer_load_dword",
                 2: "buffer_load_ushort", 1: "buffer_load_ubyte"}
# v_perm_b32 selector: bytes 0 and 2 of the second source, then bytes 0 and 2 of the first
_PACK_BYTE_HALVES = 0x06040200


def _soffset(e: Emitter, o: OperandRegs, oc: int, cache: dict[int, Reg | int]) -> Reg | Special | int:
    """The byte offset of the strided dimension for a load `oc` indices along it, in an SGPR."""
    if oc == 0:
        return e.soff0
    hit = cache.get(oc)
    if hit is None:
        # one SGPR is reused: a buffer load reads its soffset when it issues
        reg = e.r.stmp[5]
        e(e.isa.s_mul_i32(reg, o.stride, oc))
        cache.clear()
        cache[oc] = reg
        hit = reg
    return hit


def vector_loads(e: Emitter, op: OperandPlan, o: OperandRegs) -> None:
    name = _VECTOR_LOADS[op.vector * op.bpe]
    load = e.isa.op(name)
    cache: dict[int, Reg | int] = {}
    rpl = op.regs_per_load
    # a converted operand's vector fills the start of its load's registers (convert.py widens it)
    width = max(1, op.vector * op.bpe // 4)
    for n, (cc, oc) in enumerate(op.load_offsets):
        soff = _soffset(e, o, oc, cache)
        e(load(o.tile[n * rpl:n * rpl + width], o.global_offset, o.srd, soff,
               mods=Buf(offen=True, offset=cc * op.bpe)))


def vector_load(e: Emitter, op: OperandPlan, o: OperandRegs, n: int) -> None:
    """Load `n` of `vector_loads` on its own, with its own soffset (a scheduler may move it
    anywhere between the others)."""
    load = e.isa.op(_VECTOR_LOADS[op.vector * op.bpe])
    rpl = op.regs_per_load
    width = max(1, op.vector * op.bpe // 4)
    cc, oc = op.load_offsets[n]
    soff = _soffset(e, o, oc, {})
    e(load(o.tile[n * rpl:n * rpl + width], o.global_offset, o.srd, soff, mods=Buf(offen=True, offset=cc * op.bpe)))


def _minus(e: Emitter, bound: Reg, k: int, tmp: Reg) -> Reg:
    """bound - k in an SGPR (the bound itself when k is 0)."""
    if k == 0:
        return bound
    e(e.isa.s_sub_i32(tmp, bound, k))
    return tmp


def guarded_loads(e: Emitter, op: OperandPlan, o: OperandRegs) -> None:
    """Element loads with bounds: along the contiguous dim c < c_bound, along the other o < o_bound
    (the bounds count from the tile's origin: K left for k, free_bound for the free index)."""
    isa, r = e.isa, e.r
    c_bound, o_bound = (r.k_bound, o.free_bound) if op.k_contiguous else (o.free_bound, r.k_bound)
    vcc = e.plan.arch.vcc
    t = r.stmp
    v = r.vtmp
    rpl = op.regs_per_load
    for n, (cc, oc) in enumerate(op.load_offsets):
        if oc:
            e(isa.s_mul_i32(t[5], o.stride, oc), isa.v_add_u32(v[0], t[5], o.global_offset))
            base = v[0]
        else:
            base = o.global_offset
        mask = e.lane_mask(r.mask)
        e(isa.v_cmp_gt_i32(mask, _minus(e, o_bound, oc, t[6]), o.coord_o))
        for el in range(op.vector):
            e(isa.v_cmp_gt_i32(vcc, _minus(e, c_bound, cc + el, t[6]), o.coord_c))
            e(isa.s_and_b64(vcc, vcc, mask) if len(mask) == 2 else isa.s_and_b32(vcc, vcc, mask))
            e(isa.v_cndmask_b32(v[1], r.oob, base, vcc))
            mods = Buf(offen=True, offset=(cc + el) * op.bpe)
            if op.bpe >= 4:
                words = op.bpe // 4
                load = isa.buffer_load_dword if words == 1 else isa.buffer_load_dwordx2
                e(load(o.tile[n * rpl + el * words:n * rpl + (el + 1) * words], v[1], o.srd, e.soff0, mods=mods))
            elif not e.plan.arch.d16_preserves_other_half:
                _load_zero_extended(e, op, o, n, el, v[1], mods)
            elif op.bpe == 2:
                dst = o.tile[n * rpl + el // 2]
                loader = isa.buffer_load_short_d16_hi if el % 2 else isa.buffer_load_short_d16
                e(loader(dst, v[1], o.srd, e.soff0, mods=mods))
            elif op.vector == 1:
                e(isa.buffer_load_ubyte(o.tile[n * rpl], v[1], o.srd, e.soff0, mods=mods))
            else:
                loader = isa.buffer_load_ubyte_d16_hi if el % 2 else isa.buffer_load_ubyte_d16
                e(loader(_byte_half_reg(e, op, o, n, el), v[1], o.srd, e.soff0, mods=mods))
        if op.bpe == 1 and op.vector > 1 and e.plan.arch.d16_preserves_other_half:
            _pack_bytes(e, op, o, n)


# Scratch VGPRs for elements waiting to be shifted into their dword (vtmp[0:2] hold addresses).
_PACK_SCRATCH = slice(2, 8)


def _pack_batch(op: OperandPlan) -> int:
    """Elements loaded before they are packed: whole dwords, as many as the scratch can wait for."""
    per_dword = 4 // op.bpe
    return (_PACK_SCRATCH.stop - _PACK_SCRATCH.start) // (per_dword - 1) * per_dword


def _zero_extended_slot(e: Emitter, op: OperandPlan, o: OperandRegs, n: int, el: int) -> tuple[Reg, Reg | None, int]:
    """Where sub-dword element `el` of load `n` goes: (its tile dword, the scratch register it is
    loaded into first, or None for the first element of the dword, and its bit offset there)."""
    per_dword = 4 // op.bpe
    group, pos = divmod(el % _pack_batch(op), per_dword)
    dword = o.tile[n * op.regs_per_load + el // per_dword]
    scratch = e.r.vtmp[_PACK_SCRATCH][group * (per_dword - 1) + pos - 1] if pos else None
    return dword, scratch, 8 * op.bpe * pos


def _load_zero_extended(e: Emitter, op: OperandPlan, o: OperandRegs, n: int, el: int, address: Reg,
                        mods: Buf) -> None:
    """Load sub-dword element `el` of load `n` without D16 (zero-extended, into its dword or into
    scratch); at the end of a batch or of the vector, wait and shift the scratch into the dwords."""
    isa = e.isa
    dword, scratch, _ = _zero_extended_slot(e, op, o, n, el)
    load = isa.buffer_load_ushort if op.bpe == 2 else isa.buffer_load_ubyte
    e(load(scratch or dword, address, o.srd, e.soff0, mods=mods))
    batch = _pack_batch(op)
    if el % batch != batch - 1 and el != op.vector - 1:
        return
    e.wait(vmcnt=0)
    for earlier in range(el - el % batch, el + 1):
        dword, scratch, shift = _zero_extended_slot(e, op, o, n, earlier)
        if scratch is not None:
            e(isa.v_lshl_or_b32(dword, scratch, shift, dword))


def _byte_half_reg(e: Emitter, op: OperandPlan, o: OperandRegs, n: int, el: int) -> Reg:
    """Where byte `el` of load `n` lands as a 16-bit half: elements 4j, 4j+1 in the tile register j
    that will hold all four, elements 4j+2, 4j+3 in scratch register j (vtmp[2 + j])."""
    group, pos = divmod(el, 4)
    if pos < 2:
        return o.tile[n * op.regs_per_load + group]
    return e.r.vtmp[2 + group]


def _pack_bytes(e: Emitter, op: OperandPlan, o: OperandRegs, n: int) -> None:
    """Pack the 16-bit halves of load `n`'s bytes into consecutive bytes (one register per four)."""
    isa = e.isa
    sel = e.r.stmp[4]
    e.wait(vmcnt=0)
    e(isa.s_mov_b32(sel, _PACK_BYTE_HALVES))
    for group in range(-(-op.vector // 4)):
        dst = o.tile[n * op.regs_per_load + group]
        high = e.r.vtmp[2 + group] if op.vector > 2 else dst
        e(isa.v_perm_b32(dst, high, dst, sel))


def set_k_bound(e: Emitter) -> None:
    """K elements left from the origin of the tile `counter` is about to load."""
    isa, r = e.isa, e.r
    e(isa.s_mul_i32(r.k_bound, r.counter, e.plan.depth_u))
    e(isa.s_sub_u32(r.k_bound, r.arg("SizesSum0"), r.k_bound))


def load_tile(e: Emitter, op: OperandPlan, o: OperandRegs) -> None:
    """Load the tile `counter` of one operand, guarded when it is the K remainder or an edge."""
    isa, r = e.isa, e.r
    guarded = e.new_label(f"GuardedRead{op.name}")
    done = e.new_label(f"ReadDone{op.name}")
    e(isa.s_cmp_eq_u32(r.counter, r.full_iters), isa.s_cbranch_scc1(guarded))
    e(isa.s_cmp_lg_u32(o.guard, 0), isa.s_cbranch_scc1(guarded))
    vector_loads(e, op, o)
    e(isa.s_branch(done))
    e.label(guarded)
    guarded_loads(e, op, o)
    e.label(done)


def advance(e: Emitter, o: OperandRegs) -> None:
    """Move a buffer resource one DepthU along K (base up, bound down by the same bytes)."""
    isa = e.isa
    e(isa.s_add_u32(o.srd[0], o.srd[0], o.increment), isa.s_addc_u32(o.srd[1], o.srd[1], 0),
      isa.s_sub_u32(o.srd[2], o.srd[2], o.increment))
