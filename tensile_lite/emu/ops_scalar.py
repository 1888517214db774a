"""Scalar ALU, scalar compares, program control (branches, pc moves), waits and barriers.

SALU values are Python ints (exact); every result is masked to its width before it is stored.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import MappingProxyType

from tensile_lite.emu.access import MASK32, MASK64, Ctx, sread, swrite
from tensile_lite.emu.errors import CodeObjectError, EmulatorError, HazardError, UnsupportedInstruction
from tensile_lite.emu.numeric import sign_extend
from tensile_lite.emu.operands import VCC_LO, Instr
from tensile_lite.emu.state import BARRIER, END, Wave

Op = Callable[[Wave], int | None]


def _s32(x: int) -> int:
    return sign_extend(x, 32)


def _s64(x: int) -> int:
    return sign_extend(x, 64)


def _operands(ins: Instr, n: int) -> tuple:
    if len(ins.operands) != n:
        raise UnsupportedInstruction(f"`{ins.text}`: expected {n} operands, found {len(ins.operands)}")
    return ins.operands


# ---------------------------------------------------------------------------------------------
# SOP2: dst = f(a, b); f returns (result, scc) with scc None when SCC is not written.

def _add_u(a, b, w):
    r = a + b
    return r, r >> 32


def _sub_u(a, b, w):
    return a - b, int(a < b)


def _add_i(a, b, w):
    r = _s32(a) + _s32(b)
    return r, int(not -(1 << 31) <= r < (1 << 31))


def _sub_i(a, b, w):
    r = _s32(a) - _s32(b)
    return r, int(not -(1 << 31) <= r < (1 << 31))


def _addc(a, b, w):
    r = a + b + w.scc
    return r, r >> 32


def _subb(a, b, w):
    r = a - b - w.scc
    return r, int(r < 0)


def _nz(r: int, width: int) -> int:
    return int(r & ((1 << width) - 1) != 0)


def _logic32(f):
    return lambda a, b, w: (f(a, b), _nz(f(a, b), 32))


def _logic64(f):
    return lambda a, b, w: (f(a, b), _nz(f(a, b), 64))


def _bfe(a: int, b: int, width_bits: int, signed: bool) -> int:
    off = b & (width_bits - 1)
    width = (b >> 16) & 0x7F
    if width == 0:
        return 0
    v = (a >> off) & ((1 << width) - 1)
    if signed:
        v = sign_extend(v, width)
    return v


_SOP2_32: Mapping[str, Callable] = MappingProxyType({
    "s_add_u32": _add_u, "s_add_co_u32": _add_u, "s_sub_u32": _sub_u, "s_sub_co_u32": _sub_u,
    "s_add_i32": _add_i, "s_add_co_i32": _add_i, "s_sub_i32": _sub_i, "s_sub_co_i32": _sub_i,
    "s_addc_u32": _addc, "s_add_co_ci_u32": _addc, "s_subb_u32": _subb, "s_sub_co_ci_u32": _subb,
    "s_min_i32": lambda a, b, w: (a, 1) if _s32(a) < _s32(b) else (b, 0),
    "s_max_i32": lambda a, b, w: (a, 1) if _s32(a) > _s32(b) else (b, 0),
    "s_min_u32": lambda a, b, w: (a, 1) if a < b else (b, 0),
    "s_max_u32": lambda a, b, w: (a, 1) if a > b else (b, 0),
    "s_and_b32": _logic32(lambda a, b: a & b), "s_or_b32": _logic32(lambda a, b: a | b),
    "s_xor_b32": _logic32(lambda a, b: a ^ b),
    "s_andn2_b32": _logic32(lambda a, b: a & ~b), "s_and_not1_b32": _logic32(lambda a, b: a & ~b),
    "s_orn2_b32": _logic32(lambda a, b: a | (~b & MASK32)), "s_or_not1_b32": _logic32(lambda a, b: a | (~b & MASK32)),
    "s_nand_b32": _logic32(lambda a, b: ~(a & b) & MASK32), "s_nor_b32": _logic32(lambda a, b: ~(a | b) & MASK32),
    "s_xnor_b32": _logic32(lambda a, b: ~(a ^ b) & MASK32),
    "s_lshl_b32": _logic32(lambda a, b: (a << (b & 31)) & MASK32),
    "s_lshr_b32": _logic32(lambda a, b: a >> (b & 31)),
    "s_ashr_i32": _logic32(lambda a, b: (_s32(a) >> (b & 31)) & MASK32),
    "s_bfm_b32": lambda a, b, w: ((((1 << (a & 31)) - 1) << (b & 31)), None),
    "s_mul_i32": lambda a, b, w: (_s32(a) * _s32(b), None),
    "s_mul_hi_u32": lambda a, b, w: ((a * b) >> 32, None),
    "s_mul_hi_i32": lambda a, b, w: ((_s32(a) * _s32(b)) >> 32, None),
    "s_cselect_b32": lambda a, b, w: (a if w.scc else b, None),
    "s_bfe_u32": lambda a, b, w: (_bfe(a, b, 32, False), _nz(_bfe(a, b, 32, False), 32)),
    "s_bfe_i32": lambda a, b, w: (_bfe(a, b, 32, True), _nz(_bfe(a, b, 32, True), 32)),
    "s_absdiff_i32": lambda a, b, w: (abs(_s32(a) - _s32(b)), _nz(abs(_s32(a) - _s32(b)), 32)),
    "s_lshl1_add_u32": lambda a, b, w: ((a << 1) + b, ((a << 1) + b) >> 32),
    "s_lshl2_add_u32": lambda a, b, w: ((a << 2) + b, ((a << 2) + b) >> 32),
    "s_lshl3_add_u32": lambda a, b, w: ((a << 3) + b, ((a << 3) + b) >> 32),
    "s_lshl4_add_u32": lambda a, b, w: ((a << 4) + b, ((a << 4) + b) >> 32),
    "s_pack_ll_b32_b16": lambda a, b, w: ((a & 0xFFFF) | ((b & 0xFFFF) << 16), None),
    "s_pack_lh_b32_b16": lambda a, b, w: ((a & 0xFFFF) | (b & 0xFFFF0000), None),
    "s_pack_hh_b32_b16": lambda a, b, w: ((a >> 16) | (b & 0xFFFF0000), None),
})

_SOP2_64: Mapping[str, Callable] = MappingProxyType({
    "s_and_b64": _logic64(lambda a, b: a & b), "s_or_b64": _logic64(lambda a, b: a | b),
    "s_xor_b64": _logic64(lambda a, b: a ^ b),
    "s_andn2_b64": _logic64(lambda a, b: a & ~b & MASK64), "s_and_not1_b64": _logic64(lambda a, b: a & ~b & MASK64),
    "s_orn2_b64": _logic64(lambda a, b: a | (~b & MASK64)), "s_or_not1_b64": _logic64(lambda a, b: a | (~b & MASK64)),
    "s_nand_b64": _logic64(lambda a, b: ~(a & b) & MASK64), "s_nor_b64": _logic64(lambda a, b: ~(a | b) & MASK64),
    "s_xnor_b64": _logic64(lambda a, b: ~(a ^ b) & MASK64),
    "s_cselect_b64": lambda a, b, w: (a if w.scc else b, None),
    "s_bfm_b64": lambda a, b, w: ((((1 << (a & 63)) - 1) << (b & 63)), None),
})
# 64-bit value shifted by a 32-bit amount.
_SHIFT_64: Mapping[str, Callable] = MappingProxyType({
    "s_lshl_b64": lambda a, b: (a << (b & 63)) & MASK64,
    "s_lshr_b64": lambda a, b: a >> (b & 63),
    "s_ashr_i64": lambda a, b: (_s64(a) >> (b & 63)) & MASK64,
    "s_bfe_u64": lambda a, b: _bfe(a, b, 64, False) & MASK64,
    "s_bfe_i64": lambda a, b: _bfe(a, b, 64, True) & MASK64,
})


def _sop2_32(fn: Callable) -> Callable[[Instr, Ctx], Op]:
    def make(ins: Instr, ctx: Ctx) -> Op:
        d, a, b = _operands(ins, 3)
        ra, rb, wd = sread(a, ctx), sread(b, ctx), swrite(d, ctx)

        def run(w: Wave) -> None:
            r, scc = fn(ra(w), rb(w), w)
            wd(w, r)
            if scc is not None:
                w.scc = scc
        return run
    return make


def _sop2_64(fn: Callable) -> Callable[[Instr, Ctx], Op]:
    def make(ins: Instr, ctx: Ctx) -> Op:
        d, a, b = _operands(ins, 3)
        ra, rb, wd = sread(a, ctx, 64), sread(b, ctx, 64), swrite(d, ctx, 64)

        def run(w: Wave) -> None:
            r, scc = fn(ra(w), rb(w), w)
            wd(w, r)
            if scc is not None:
                w.scc = scc
        return run
    return make


def _shift64(fn: Callable) -> Callable[[Instr, Ctx], Op]:
    def make(ins: Instr, ctx: Ctx) -> Op:
        d, a, b = _operands(ins, 3)
        ra, rb, wd = sread(a, ctx, 64), sread(b, ctx, 32), swrite(d, ctx, 64)

        def run(w: Wave) -> None:
            r = fn(ra(w), rb(w))
            wd(w, r)
            w.scc = int(r != 0)
        return run
    return make


# ---------------------------------------------------------------------------------------------
# SOP1

def _ff1(a: int, width: int) -> int:
    if a == 0:
        return MASK32
    return (a & -a).bit_length() - 1


def _flbit(a: int, width: int) -> int:
    if a == 0:
        return MASK32
    return width - a.bit_length()


_SOP1: Mapping[str, tuple[int, int, Callable, bool]] = MappingProxyType({
    # name: (dst width, src width, f(a, w), writes scc as result != 0)
    "s_mov_b32": (32, 32, lambda a, w: a, False), "s_mov_b64": (64, 64, lambda a, w: a, False),
    "s_not_b32": (32, 32, lambda a, w: ~a & MASK32, True), "s_not_b64": (64, 64, lambda a, w: ~a & MASK64, True),
    "s_brev_b32": (32, 32, lambda a, w: int(f"{a:032b}"[::-1], 2), False),
    "s_bcnt1_i32_b32": (32, 32, lambda a, w: bin(a).count("1"), True),
    "s_bcnt1_i32_b64": (32, 64, lambda a, w: bin(a).count("1"), True),
    "s_bcnt0_i32_b32": (32, 32, lambda a, w: 32 - bin(a).count("1"), True),
    "s_ff1_i32_b32": (32, 32, lambda a, w: _ff1(a, 32), False),
    "s_ctz_i32_b32": (32, 32, lambda a, w: _ff1(a, 32), False),
    "s_ff1_i32_b64": (32, 64, lambda a, w: _ff1(a, 64), False),
    "s_ctz_i32_b64": (32, 64, lambda a, w: _ff1(a, 64), False),
    "s_flbit_i32_b32": (32, 32, lambda a, w: _flbit(a, 32), False),
    "s_clz_i32_u32": (32, 32, lambda a, w: _flbit(a, 32), False),
    "s_sext_i32_i8": (32, 32, lambda a, w: sign_extend(a, 8), False),
    "s_sext_i32_i16": (32, 32, lambda a, w: sign_extend(a, 16), False),
    "s_abs_i32": (32, 32, lambda a, w: abs(_s32(a)), True),
})


def _sop1(name: str) -> Callable[[Instr, Ctx], Op]:
    dw, sw, fn, sets_scc = _SOP1[name]
    mask = (1 << dw) - 1

    def make(ins: Instr, ctx: Ctx) -> Op:
        d, a = _operands(ins, 2)
        ra, wd = sread(a, ctx, sw), swrite(d, ctx, dw)

        def run(w: Wave) -> None:
            r = fn(ra(w), w) & mask
            wd(w, r)
            if sets_scc:
                w.scc = int(r != 0)
        return run
    return make


def _cmov(width: int) -> Callable[[Instr, Ctx], Op]:
    def make(ins: Instr, ctx: Ctx) -> Op:
        d, a = _operands(ins, 2)
        ra, wd = sread(a, ctx, width), swrite(d, ctx, width)

        def run(w: Wave) -> None:
            if w.scc:
                wd(w, ra(w))
        return run
    return make


_SAVEEXEC: Mapping[str, Callable[[int, int], int]] = MappingProxyType({
    "and": lambda s, e: s & e, "or": lambda s, e: s | e, "xor": lambda s, e: s ^ e,
    "andn2": lambda s, e: s & ~e, "and_not1": lambda s, e: s & ~e,
    "orn2": lambda s, e: s | ~e, "or_not1": lambda s, e: s | ~e,
    "andn1": lambda s, e: ~s & e, "and_not0": lambda s, e: ~s & e,
    "orn1": lambda s, e: ~s | e, "or_not0": lambda s, e: ~s | e,
    "nand": lambda s, e: ~(s & e), "nor": lambda s, e: ~(s | e), "xnor": lambda s, e: ~(s ^ e),
})
_SAVEEXEC_RE = re.compile(r"^s_(\w+?)_saveexec_b(32|64)$")


def _saveexec(ins: Instr, ctx: Ctx) -> Op:
    m = _SAVEEXEC_RE.match(ins.base)
    assert m is not None
    fn = _SAVEEXEC[m.group(1)]
    width = int(m.group(2))
    if width != ctx.lanes:
        raise UnsupportedInstruction(f"`{ins.text}` is a {width}-bit exec op in a wave{ctx.lanes} kernel")
    d, a = _operands(ins, 2)
    ra, wd = sread(a, ctx, width), swrite(d, ctx, width)
    mask = (1 << width) - 1

    def run(w: Wave) -> None:
        old = w.exec_value()
        new = fn(ra(w), old) & mask
        wd(w, old)
        w.set_exec(new)
        w.scc = int(new != 0)
    return run


def _bitset(value: int) -> Callable[[Instr, Ctx], Op]:
    def make(ins: Instr, ctx: Ctx) -> Op:
        d, a = _operands(ins, 2)
        ra, rd, wd = sread(a, ctx), sread(d, ctx), swrite(d, ctx)

        def run(w: Wave) -> None:
            bit = 1 << (ra(w) & 31)
            wd(w, (rd(w) | bit) if value else (rd(w) & ~bit))
        return run
    return make


# ---------------------------------------------------------------------------------------------
# SOPK: the immediate is a 16-bit field, printed as hex.

def _simm16(op) -> int:
    if op.ival is None:
        raise UnsupportedInstruction(f"SOPK immediate {op.text} is not an integer")
    return sign_extend(op.ival, 16)


def _movk(ins: Instr, ctx: Ctx) -> Op:
    d, k = _operands(ins, 2)
    wd = swrite(d, ctx)
    value = _simm16(k) & MASK32
    return lambda w: wd(w, value)


def _cmovk(ins: Instr, ctx: Ctx) -> Op:
    d, k = _operands(ins, 2)
    wd = swrite(d, ctx)
    value = _simm16(k) & MASK32

    def run(w: Wave) -> None:
        if w.scc:
            wd(w, value)
    return run


def _addk(ins: Instr, ctx: Ctx) -> Op:
    d, k = _operands(ins, 2)
    rd, wd = sread(d, ctx), swrite(d, ctx)
    value = _simm16(k)

    def run(w: Wave) -> None:
        r = _s32(rd(w)) + value
        wd(w, r)
        w.scc = int(not -(1 << 31) <= r < (1 << 31))
    return run


def _mulk(ins: Instr, ctx: Ctx) -> Op:
    d, k = _operands(ins, 2)
    rd, wd = sread(d, ctx), swrite(d, ctx)
    value = _simm16(k)
    return lambda w: wd(w, _s32(rd(w)) * value)


_COMPARE: Mapping[str, Callable[[int, int], bool]] = MappingProxyType({
    "eq": lambda a, b: a == b, "lg": lambda a, b: a != b, "ne": lambda a, b: a != b,
    "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
})
_SCMP_RE = re.compile(r"^s_cmp(k?)_(eq|lg|ne|gt|ge|lt|le)_(i32|u32|u64)$")


def _scmp(ins: Instr, ctx: Ctx) -> Op:
    m = _SCMP_RE.match(ins.base)
    assert m is not None
    is_k, rel, kind = m.groups()
    f = _COMPARE[rel]
    a, b = _operands(ins, 2)
    width = 64 if kind == "u64" else 32
    ra = sread(a, ctx, width)
    if is_k:
        if b.ival is None:
            raise UnsupportedInstruction(f"`{ins.text}`: SOPK immediate expected")
        k = sign_extend(b.ival, 16) if kind == "i32" else b.ival & 0xFFFF
        rb = lambda w: k  # noqa: E731
        if kind == "i32":
            def run_k(w: Wave) -> None:
                w.scc = int(f(_s32(ra(w)), k))
            return run_k
    else:
        rb = sread(b, ctx, width)
    if kind == "i32":
        def run_i(w: Wave) -> None:
            w.scc = int(f(_s32(ra(w)), _s32(rb(w))))
        return run_i

    def run_u(w: Wave) -> None:
        w.scc = int(f(ra(w), rb(w)))
    return run_u


def _bitcmp(value: int, width: int) -> Callable[[Instr, Ctx], Op]:
    def make(ins: Instr, ctx: Ctx) -> Op:
        a, b = _operands(ins, 2)
        ra, rb = sread(a, ctx, width), sread(b, ctx)

        def run(w: Wave) -> None:
            w.scc = int(((ra(w) >> (rb(w) & (width - 1))) & 1) == value)
        return run
    return make


# ---------------------------------------------------------------------------------------------
# Program control

def _target_index(ins: Instr, ctx: Ctx) -> int:
    if ins.branch_target is None:
        raise UnsupportedInstruction(f"`{ins.text}`: branch target unknown")
    try:
        return ctx.address_index[ins.branch_target]
    except KeyError:
        raise CodeObjectError(f"`{ins.text}` at {ins.address:#x} branches to {ins.branch_target:#x}, "
                              "which is not the start of an instruction of this kernel") from None


def _vcc_value(w: Wave) -> int:
    lo = w.s[VCC_LO]
    return lo | (w.s[VCC_LO + 1] << 32) if w.lanes == 64 else lo


def _branch(cond: Callable[[Wave], bool] | None) -> Callable[[Instr, Ctx], Op]:
    def make(ins: Instr, ctx: Ctx) -> Op:
        tgt = _target_index(ins, ctx)
        if cond is None:
            return lambda w: tgt

        def run(w: Wave) -> int | None:
            return tgt if cond(w) else None
        return run
    return make


def _pc_target(w: Wave, ctx: Ctx, address: int, ins: Instr) -> int:
    idx = ctx.address_index.get(address)
    if idx is None:
        raise EmulatorError(f"`{ins.text}` jumps to {address:#x}, which is not an instruction of "
                            f"kernel {ctx.kernel}")
    return idx


def _getpc(ins: Instr, ctx: Ctx) -> Op:
    (d,) = _operands(ins, 1)
    wd = swrite(d, ctx, 64)
    nxt = ins.address + ins.size
    return lambda w: wd(w, nxt)


def _setpc(ins: Instr, ctx: Ctx) -> Op:
    (a,) = _operands(ins, 1)
    ra = sread(a, ctx, 64)
    return lambda w: _pc_target(w, ctx, ra(w), ins)


def _swappc(ins: Instr, ctx: Ctx) -> Op:
    d, a = _operands(ins, 2)
    ra, wd = sread(a, ctx, 64), swrite(d, ctx, 64)
    nxt = ins.address + ins.size

    def run(w: Wave) -> int:
        target = ra(w)
        wd(w, nxt)
        return _pc_target(w, ctx, target, ins)
    return run


def _endpgm(ins: Instr, ctx: Ctx) -> Op:
    return lambda w: END


def _nop(ins: Instr, ctx: Ctx) -> Op:
    return lambda w: None


def _snop(ins: Instr, ctx: Ctx) -> Op:
    """s_nop n: n + 1 wait states (the run loop counts the first)."""
    (k,) = _operands(ins, 1)
    if k.ival is None:
        raise UnsupportedInstruction(f"`{ins.text}`: wait state count expected")
    extra = k.ival & 0xF

    def run(w: Wave) -> None:
        w.clock += extra
    return run


def _sendmsg(ins: Instr, ctx: Ctx) -> Op:
    if "DEALLOC_VGPRS" in ins.raw:
        return lambda w: None
    raise UnsupportedInstruction(f"`{ins.text}`: only sendmsg(MSG_DEALLOC_VGPRS) is emulated")


def _barrier(ins: Instr, ctx: Ctx) -> Op:
    def run(w: Wave) -> int:
        stores = w.lds_stores_in_flight()
        if stores and ctx.check_hazards:
            op = stores[0]
            raise HazardError(f"s_barrier while the LDS store `{op.text}` at {op.address:#x} has not been "
                              "waited for; other waves may not see its data")
        return BARRIER
    return run


def _barrier_signal(ins: Instr, ctx: Ctx) -> Op:
    def run(w: Wave) -> None:
        stores = w.lds_stores_in_flight()
        if stores and ctx.check_hazards:
            op = stores[0]
            raise HazardError(f"s_barrier_signal while the LDS store `{op.text}` at {op.address:#x} has "
                              "not been waited for; other waves may not see its data")
        w.barrier_signalled = True
    return run


def _barrier_wait(ins: Instr, ctx: Ctx) -> Op:
    def run(w: Wave) -> int:
        if not w.barrier_signalled:
            raise HazardError("s_barrier_wait without a preceding s_barrier_signal in this wave")
        w.barrier_signalled = False
        return BARRIER
    return run


# ---------------------------------------------------------------------------------------------
# Waits

_FIELD = re.compile(r"(\w+?)(?:_sat)?\((\d+)\)")
# gfx12 combined waits: counter in bits 13:8, dscnt in bits 5:0.
_COMBINED = MappingProxyType({"s_wait_loadcnt_dscnt": ("loadcnt", "dscnt"),
                              "s_wait_storecnt_dscnt": ("storecnt", "dscnt")})
_SINGLE = MappingProxyType({
    "s_wait_loadcnt": "loadcnt", "s_wait_storecnt": "storecnt", "s_wait_dscnt": "dscnt",
    "s_wait_kmcnt": "kmcnt", "s_wait_expcnt": "expcnt", "s_wait_samplecnt": "samplecnt",
    "s_wait_bvhcnt": "bvhcnt", "s_waitcnt_vscnt": "vscnt", "s_waitcnt_vmcnt": "vmcnt",
    "s_waitcnt_lgkmcnt": "lgkmcnt", "s_waitcnt_expcnt": "expcnt",
})


def _waiter(waits: list[tuple[str, int]], ctx: Ctx) -> Op:
    known = set(ctx.arch.counter_names())
    waits = [(c, n) for c, n in waits if c in known]
    if not waits:
        return lambda w: None

    def run(w: Wave) -> None:
        if w.queues:
            for c, n in waits:
                w.wait(c, n)
    return run


def _waitcnt(ins: Instr, ctx: Ctx) -> Op:
    raw = ins.raw.strip()
    fields = _FIELD.findall(raw)
    if fields:
        return _waiter([(c, int(n)) for c, n in fields], ctx)
    if raw in ("0", "0x0"):
        return _waiter([(c, 0) for c in ctx.arch.counter_names()], ctx)
    raise UnsupportedInstruction(f"`{ins.text}`: cannot read the wait counts")


def _wait_single(ins: Instr, ctx: Ctx) -> Op:
    counter = _SINGLE[ins.base]
    ops = ins.operands
    if len(ops) == 2:
        if not (ops[0].kind == "special" and ops[0].name == "null"):
            raise UnsupportedInstruction(f"`{ins.text}`: only the `null` SGPR form is emulated")
        ops = ops[1:]
    if len(ops) != 1 or ops[0].ival is None:
        raise UnsupportedInstruction(f"`{ins.text}`: cannot read the wait count")
    return _waiter([(counter, ops[0].ival & 0xFFFF)], ctx)


def _wait_combined(ins: Instr, ctx: Ctx) -> Op:
    first, second = _COMBINED[ins.base]
    (imm,) = _operands(ins, 1)
    if imm.ival is None:
        raise UnsupportedInstruction(f"`{ins.text}`: cannot read the wait count")
    return _waiter([(first, (imm.ival >> 8) & 0x3F), (second, imm.ival & 0x3F)], ctx)


EXACT: Mapping[str, Callable[[Instr, Ctx], Op]] = MappingProxyType({
    **{n: _sop2_32(f) for n, f in _SOP2_32.items()},
    **{n: _sop2_64(f) for n, f in _SOP2_64.items()},
    **{n: _shift64(f) for n, f in _SHIFT_64.items()},
    **{n: _sop1(n) for n in _SOP1},
    "s_cmov_b32": _cmov(32), "s_cmov_b64": _cmov(64),
    "s_bitset0_b32": _bitset(0), "s_bitset1_b32": _bitset(1),
    "s_movk_i32": _movk, "s_cmovk_i32": _cmovk, "s_addk_i32": _addk, "s_addk_co_i32": _addk,
    "s_mulk_i32": _mulk,
    "s_bitcmp0_b32": _bitcmp(0, 32), "s_bitcmp1_b32": _bitcmp(1, 32),
    "s_bitcmp0_b64": _bitcmp(0, 64), "s_bitcmp1_b64": _bitcmp(1, 64),
    "s_branch": _branch(None),
    "s_cbranch_scc0": _branch(lambda w: w.scc == 0), "s_cbranch_scc1": _branch(lambda w: w.scc != 0),
    "s_cbranch_vccz": _branch(lambda w: _vcc_value(w) == 0),
    "s_cbranch_vccnz": _branch(lambda w: _vcc_value(w) != 0),
    "s_cbranch_execz": _branch(lambda w: w.exec_value() == 0),
    "s_cbranch_execnz": _branch(lambda w: w.exec_value() != 0),
    "s_getpc_b64": _getpc, "s_setpc_b64": _setpc, "s_swappc_b64": _swappc,
    "s_endpgm": _endpgm,
    "s_nop": _snop, "s_setprio": _nop, "s_sleep": _nop, "s_delay_alu": _nop, "s_clause": _nop,
    "s_waitcnt_depctr": _nop, "s_wait_alu": _nop, "s_icache_inv": _nop, "s_dcache_inv": _nop,
    "s_dcache_wb": _nop, "s_wait_idle": _nop, "s_ttracedata": _nop,
    "buffer_wbl2": _nop, "buffer_inv": _nop, "buffer_wbinvl1": _nop, "buffer_wbinvl1_vol": _nop,
    "buffer_gl0_inv": _nop, "buffer_gl1_inv": _nop, "global_wb": _nop, "global_inv": _nop,
    "s_sendmsg": _sendmsg,
    "s_barrier": _barrier, "s_barrier_signal": _barrier_signal, "s_barrier_wait": _barrier_wait,
    "s_waitcnt": _waitcnt,
    **{n: _wait_single for n in _SINGLE},
    **{n: _wait_combined for n in _COMBINED},
})

PATTERNS: tuple[tuple[re.Pattern[str], Callable[[Instr, Ctx], Op]], ...] = (
    (_SAVEEXEC_RE, _saveexec),
    (_SCMP_RE, _scmp),
)
