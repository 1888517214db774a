"""Memory instructions: scalar loads, buffer (MUBUF) loads/stores/atomics, global/flat, and LDS.

Loads complete eagerly (data is in the register when the instruction issues) but are recorded as
outstanding until the matching s_waitcnt, so a read of the register before the wait is reported.

Buffer range checking (what edge tiles rely on): with a raw buffer (gfx9: stride 0 or swizzle off;
gfx10+: OOB_SELECT 3) an access is in range when offset + size <= num_records - soffset, where
offset = inst_offset + voffset (offen) + stride * index (idxen). Multi-dword accesses are checked
per dword, sub-dword ones as one element; out-of-range loads return 0 and out-of-range stores and
atomics are dropped. gfx10+ OOB_SELECT 0/1 check the index against num_records (0 also checks the
offset against the stride) and 2 drops everything when num_records is 0.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import MappingProxyType

import numpy as np

from tensile_lite.emu.access import (
    U16,
    U32,
    U64,
    Ctx,
    read_b32,
    read_b64,
    read_vector_block,
    scalar_index,
    skeys,
    sread,
    valu_sgpr_guard,
    vgpr_index,
    vkeys,
    write_b16,
    write_block,
)
from tensile_lite.emu.arch import FLAT, LDS, SMEM, VMEM_LOAD, VMEM_STORE
from tensile_lite.emu.errors import HazardError, MemoryFault, UnsupportedInstruction
from tensile_lite.emu.memory import DeviceMemory
from tensile_lite.emu.operands import Instr, Operand
from tensile_lite.emu.state import (
    ACCESS_KINDS,
    MATRIX_WRITE,
    MEM_READ,
    WRITE,
    MemoryContext,
    PendingOp,
    Wave,
    Window,
)

Op = Callable[[Wave], int | None]
Factory = Callable[[Instr, Ctx], Op]
I64 = np.int64


def _mem(w: Wave) -> MemoryContext:
    """The launch's device memory and policies, reached through the wave's workgroup."""
    return w.workgroup.mem


def _issuer(ins: Instr, ctx: Ctx, cls: str, keys: tuple[int, ...], lds_store: bool = False):
    if not ctx.check_hazards:
        return None
    counters = ctx.arch.counters[cls]
    text, address = ins.text, ins.address

    # scalar loads return out of order; so may a flat access (it counts on two counters, and LLVM
    # forces vmcnt(0)/lgkmcnt(0) while one is pending): only a count of 0 retires them
    in_order = cls not in (SMEM, FLAT)

    def issue(w: Wave) -> None:
        w.issue(PendingOp(keys, counters, cls, in_order, text, address, lds_store))
    return issue


# ---------------------------------------------------------------------------------------------
# Data forms: name suffix -> (bytes, how the bytes map to registers)

_LOAD_FORMS: Mapping[str, tuple[int, str]] = MappingProxyType({
    "dword": (4, "dw"), "dwordx2": (8, "dw"), "dwordx3": (12, "dw"), "dwordx4": (16, "dw"),
    "b32": (4, "dw"), "b64": (8, "dw"), "b96": (12, "dw"), "b128": (16, "dw"),
    "ubyte": (1, "u8"), "u8": (1, "u8"), "sbyte": (1, "i8"), "i8": (1, "i8"),
    "ushort": (2, "u16"), "u16": (2, "u16"), "sshort": (2, "i16"), "i16": (2, "i16"),
    "short_d16": (2, "lo16"), "d16_b16": (2, "lo16"), "u16_d16": (2, "lo16"),
    "short_d16_hi": (2, "hi16"), "d16_hi_b16": (2, "hi16"), "u16_d16_hi": (2, "hi16"),
    "ubyte_d16": (1, "lo_u8"), "d16_u8": (1, "lo_u8"), "u8_d16": (1, "lo_u8"),
    "ubyte_d16_hi": (1, "hi_u8"), "d16_hi_u8": (1, "hi_u8"), "u8_d16_hi": (1, "hi_u8"),
    "sbyte_d16": (1, "lo_i8"), "d16_i8": (1, "lo_i8"), "i8_d16": (1, "lo_i8"),
    "sbyte_d16_hi": (1, "hi_i8"), "d16_hi_i8": (1, "hi_i8"), "i8_d16_hi": (1, "hi_i8"),
})
_STORE_FORMS: Mapping[str, tuple[int, str]] = MappingProxyType({
    "dword": (4, "dw"), "dwordx2": (8, "dw"), "dwordx3": (12, "dw"), "dwordx4": (16, "dw"),
    "b32": (4, "dw"), "b64": (8, "dw"), "b96": (12, "dw"), "b128": (16, "dw"),
    "byte": (1, "lo"), "b8": (1, "lo"), "short": (2, "lo"), "b16": (2, "lo"),
    "byte_d16_hi": (1, "hi"), "d16_hi_b8": (1, "hi"), "b8_d16_hi": (1, "hi"),
    "short_d16_hi": (2, "hi"), "d16_hi_b16": (2, "hi"), "b16_d16_hi": (2, "hi"),
})


def _load_sink(d: Operand, ctx: Ctx, nbytes: int, form: str) -> tuple[Callable[[Wave, np.ndarray], None],
                                                                         tuple[int, ...]]:
    """Write (lanes, nbytes) uint8 loaded data into the destination; return the writer and its keys."""
    if form == "dw":
        n = nbytes // 4
        blk = write_block(d, ctx, n, check=False)
        i = vgpr_index(d, ctx, n)
        return (lambda w, data: blk(w, np.ascontiguousarray(data).view("<u4").reshape(w.lanes, n)),
                vkeys(i, n))
    i = vgpr_index(d, ctx, 1)
    keys = vkeys(i, 1)
    if form in ("u8", "i8", "u16", "i16"):
        wr = write_block(d, ctx, 1, check=False)

        def ext(w: Wave, data: np.ndarray) -> None:
            raw = np.ascontiguousarray(data)
            if form == "u8":
                v = raw[:, 0].astype(U32)
            elif form == "i8":
                v = raw[:, 0].view(np.int8).astype(np.int32).view(U32)
            elif form == "u16":
                v = raw.view("<u2")[:, 0].astype(U32)
            else:
                v = raw.view("<i2")[:, 0].astype(np.int32).view(U32)
            wr(w, v.reshape(w.lanes, 1))
        return ext, keys
    half = 1 if form.startswith("hi") else 0
    wr16 = write_b16(d, ctx, half, ctx.arch.d16_zeroes_other_half, check=False)
    kind = "16" if form in ("lo16", "hi16") else form.split("_", 1)[1]

    def d16(w: Wave, data: np.ndarray) -> None:
        raw = np.ascontiguousarray(data)
        if kind == "16":
            v = raw.view("<u2")[:, 0]
        elif kind == "u8":
            v = raw[:, 0].astype(U16)
        else:
            v = raw[:, 0].view(np.int8).astype(np.int16).view(U16)
        wr16(w, v)
    return d16, keys


def _store_source(d: Operand, ctx: Ctx, nbytes: int, form: str) -> Callable[[Wave], np.ndarray]:
    """(lanes, nbytes) uint8 data to store, taken from the data registers."""
    if form == "dw":
        n = nbytes // 4
        blk = read_vector_block(d, ctx, n, MEM_READ)
        return lambda w: blk(w).view(np.uint8).reshape(w.lanes, nbytes)
    blk1 = read_vector_block(d, ctx, 1, MEM_READ)
    start = 0 if form == "lo" else 2

    def src(w: Wave) -> np.ndarray:
        return np.ascontiguousarray(blk1(w).view(np.uint8).reshape(w.lanes, 4)[:, start:start + nbytes])
    return src


def _scalar_slots(op: Operand, ctx: Ctx, count: int) -> tuple[int, ...]:
    return tuple(range(op.index, op.index + count)) if op.kind == "sgpr" else ()


def _vmem_sgpr_guard(ctx: Ctx, *slots: int) -> Callable[[Wave], None] | None:
    """CDNA: a buffer/global/flat instruction may not read an SGPR a VALU wrote within 5 wait states."""
    t = ctx.timed
    return valu_sgpr_guard(slots, ctx, t.valu_sgpr_then_vmem, "read by a vector memory instruction") if t else None


def _wide_store_window(ins: Instr, ctx: Ctx, data: Operand, nbytes: int,
                       sgpr_soffset: bool) -> Callable[[Wave], None] | None:
    """CDNA: a store of more than 8 bytes reads its data over more than one cycle, so a VALU may not
    overwrite the data registers within `wide_store_data_then_valu` wait states (MUBUF stores with
    an SGPR soffset are exempt). Reads and loads are not affected."""
    t = ctx.timed
    if t is None or nbytes <= 8 or sgpr_soffset:
        return None
    need = t.wide_store_data_then_valu
    keys = vkeys(vgpr_index(data, ctx, nbytes // 4), nbytes // 4)
    needs = tuple(need if k in (WRITE, MATRIX_WRITE) else 0 for k in ACCESS_KINDS)
    source = f"the store `{ins.text}` at {ins.address:#x} read it"

    def open_window(w: Wave) -> None:
        window = Window.after(w.clock, needs, source)
        for k in keys:
            w.add_window(k, window)
    return open_window


def _chunks(nbytes: int) -> tuple[int, int]:
    """(chunk size, chunk count) for range checks: per dword for wide accesses, whole otherwise."""
    if nbytes >= 4:
        return 4, nbytes // 4
    return nbytes, 1


# ---------------------------------------------------------------------------------------------
# Buffer resource descriptors

def _buffer_addressing(ins: Instr, ctx: Ctx, vaddr: Operand, srsrc: Operand, soffset: Operand):
    """fn(w) -> (addresses (lanes,) uint64 of the first byte, limit check fn(chunk offsets) -> bool)."""
    offen, idxen = ins.flag("offen"), ins.flag("idxen")
    inst_offset = ins.int_mod("offset")
    si = scalar_index(srsrc, ctx, 4)
    rsrc = sread(srsrc, ctx, 32)  # hazard check of the first word
    rsoff = sread(soffset, ctx) if not (soffset.kind == "special" and soffset.name == "null") else (lambda w: 0)
    guard = _vmem_sgpr_guard(ctx, *range(si, si + 4), *_scalar_slots(soffset, ctx, 1))
    if offen or idxen:
        count = 2 if (offen and idxen) else 1
        if vaddr.kind not in ("vgpr", "agpr"):
            raise UnsupportedInstruction(f"`{ins.text}`: offen/idxen without a VGPR address")
        vread = read_vector_block(vaddr, ctx, count, MEM_READ)
    else:
        vread = None
    raw_mode_gfx9 = ctx.arch.family.startswith("cdna")

    def addressing(w: Wave):
        rsrc(w)
        if guard is not None:
            guard(w)
        words = [w.s[si + k] for k in range(4)]
        base = words[0] | ((words[1] & 0xFFFF) << 32)
        stride = (words[1] >> 16) & 0x3FFF
        num_records = words[2]
        soff = rsoff(w)
        if vread is not None:
            regs = vread(w).astype(I64)
            index = regs[:, 0] if idxen else np.zeros(w.lanes, dtype=I64)
            voff = regs[:, -1] if offen else np.zeros(w.lanes, dtype=I64)
        else:
            index = np.zeros(w.lanes, dtype=I64)
            voff = np.zeros(w.lanes, dtype=I64)
        offset = inst_offset + voff + stride * index
        if raw_mode_gfx9:
            if stride != 0 and (words[1] >> 31):
                raise UnsupportedInstruction(f"`{ins.text}`: swizzled buffer resources are not emulated")
            mode = 3
        else:
            mode = (words[3] >> 28) & 3
        addresses = (np.int64(base) + np.int64(soff) + offset).astype(U64)
        return addresses, offset, index, voff + inst_offset, (mode, num_records, stride, soff)
    return addressing


def _in_range(offset: np.ndarray, index: np.ndarray, inner: np.ndarray, params: tuple, csize: int,
              nchunks: int) -> np.ndarray:
    """(lanes, nchunks) bool: which chunks of each lane's access pass the buffer range check."""
    mode, num_records, stride, soff = params
    lanes = offset.shape[0]
    if mode == 3:
        limit = num_records - soff
        ends = offset[:, None] + csize * np.arange(nchunks, dtype=I64)[None, :] + csize
        return ends <= limit
    if mode == 2:
        return np.full((lanes, nchunks), num_records != 0)
    ok = index < num_records
    if mode == 0 and stride != 0:
        ok = ok & (inner < stride)
    return np.repeat(ok[:, None], nchunks, axis=1)


_BUFFER_RE = re.compile(r"^buffer_(load|store)_(\w+)$")


def _buffer(ins: Instr, ctx: Ctx) -> Op:
    m = _BUFFER_RE.match(ins.base)
    assert m is not None
    kind, form_name = m.groups()
    if ins.flag("lds"):
        raise UnsupportedInstruction(f"`{ins.text}`: buffer loads into LDS are not emulated yet")
    forms = _LOAD_FORMS if kind == "load" else _STORE_FORMS
    if form_name not in forms:
        raise UnsupportedInstruction(f"`{ins.text}`: buffer {kind} form {form_name!r} is not emulated")
    nbytes, form = forms[form_name]
    if len(ins.operands) != 4:
        raise UnsupportedInstruction(f"`{ins.text}`: expected vdata, vaddr, srsrc, soffset")
    vdata, vaddr, srsrc, soffset = ins.operands
    addressing = _buffer_addressing(ins, ctx, vaddr, srsrc, soffset)
    csize, nchunks = _chunks(nbytes)
    if kind == "load":
        sink, keys = _load_sink(vdata, ctx, nbytes, form)
        issue = _issuer(ins, ctx, VMEM_LOAD, keys)

        def load(w: Wave) -> None:
            addresses, offset, index, inner, params = addressing(w)
            valid = _in_range(offset, index, inner, params, csize, nchunks) & w.exec_mask[:, None]
            data = _gather_chunks(_mem(w).memory, addresses, valid, csize, nchunks, ins)
            sink(w, data)
            if issue is not None:
                issue(w)
        return load
    source = _store_source(vdata, ctx, nbytes, form)
    issue = _issuer(ins, ctx, VMEM_STORE, ())
    window = _wide_store_window(ins, ctx, vdata, nbytes, soffset.kind == "sgpr")

    def store(w: Wave) -> None:
        addresses, offset, index, inner, params = addressing(w)
        valid = _in_range(offset, index, inner, params, csize, nchunks) & w.exec_mask[:, None]
        _scatter_chunks(_mem(w).memory, addresses, valid, source(w), csize, nchunks, ins)
        if issue is not None:
            issue(w)
        if window is not None:
            window(w)
    return store


def _chunk_addresses(addresses: np.ndarray, csize: int, nchunks: int) -> np.ndarray:
    return addresses[:, None] + (U64(csize) * np.arange(nchunks, dtype=U64))[None, :]


def _gather_chunks(memory: DeviceMemory, addresses: np.ndarray, valid: np.ndarray, csize: int, nchunks: int,
                   ins: Instr) -> np.ndarray:
    lanes = addresses.shape[0]
    if valid.all():
        try:
            return memory.gather(addresses, csize * nchunks)
        except MemoryFault as exc:
            raise MemoryFault(f"`{ins.text}`: {exc.message}") from None
    out = np.zeros((lanes, nchunks, csize), dtype=np.uint8)
    if valid.any():
        where = _chunk_addresses(addresses, csize, nchunks)[valid]
        try:
            out[valid] = memory.gather(where, csize)
        except MemoryFault as exc:
            raise MemoryFault(f"`{ins.text}`: {exc.message}") from None
    return out.reshape(lanes, nchunks * csize)


def _scatter_chunks(memory: DeviceMemory, addresses: np.ndarray, valid: np.ndarray, data: np.ndarray,
                    csize: int, nchunks: int, ins: Instr) -> None:
    try:
        if valid.all():
            memory.scatter(addresses, data)
            return
        if valid.any():
            where = _chunk_addresses(addresses, csize, nchunks)[valid]
            memory.scatter(where, data.reshape(addresses.shape[0], nchunks, csize)[valid])
    except MemoryFault as exc:
        raise MemoryFault(f"`{ins.text}`: {exc.message}") from None


# ---------------------------------------------------------------------------------------------
# Global / flat

_GLOBAL_RE = re.compile(r"^(global|flat)_(load|store)_(\w+)$")


def _global_addressing(ins: Instr, ctx: Ctx, vaddr: Operand, saddr: Operand | None):
    offset = ins.int_mod("offset")
    if saddr is None or (saddr.kind == "special" and saddr.name == "off"):
        ra = read_b64(vaddr, ctx, what=MEM_READ)
        return lambda w: np.broadcast_to(np.asarray(ra(w), dtype=U64) + U64(offset & 0xFFFFFFFFFFFFFFFF),
                                         (w.lanes,))
    rs = sread(saddr, ctx, 64)
    rv = read_b32(vaddr, ctx, MEM_READ)
    guard = _vmem_sgpr_guard(ctx, *_scalar_slots(saddr, ctx, 2))

    def address(w: Wave):
        if guard is not None:
            guard(w)
        return np.broadcast_to(U64((rs(w) + offset) & 0xFFFFFFFFFFFFFFFF)
                               + np.asarray(rv(w), dtype=U32).astype(U64), (w.lanes,))
    return address


def _global(ins: Instr, ctx: Ctx) -> Op:
    m = _GLOBAL_RE.match(ins.base)
    assert m is not None
    seg, kind, form_name = m.groups()
    forms = _LOAD_FORMS if kind == "load" else _STORE_FORMS
    if form_name not in forms:
        raise UnsupportedInstruction(f"`{ins.text}`: {seg} {kind} form {form_name!r} is not emulated")
    nbytes, form = forms[form_name]
    ops = ins.operands
    saddr = ops[2] if len(ops) == 3 else None
    if kind == "load":
        vdata, vaddr = ops[0], ops[1]
    else:
        vaddr, vdata = ops[0], ops[1]
    addressing = _global_addressing(ins, ctx, vaddr, saddr)
    cls_load = FLAT if seg == "flat" else VMEM_LOAD
    cls_store = FLAT if seg == "flat" else VMEM_STORE
    if kind == "load":
        sink, keys = _load_sink(vdata, ctx, nbytes, form)
        issue = _issuer(ins, ctx, cls_load, keys)

        def load(w: Wave) -> None:
            addresses = addressing(w)
            valid = w.exec_mask[:, None]
            data = _gather_chunks(_mem(w).memory, addresses, valid, nbytes, 1, ins)
            sink(w, data)
            if issue is not None:
                issue(w)
        return load
    source = _store_source(vdata, ctx, nbytes, form)
    issue = _issuer(ins, ctx, cls_store, ())
    window = _wide_store_window(ins, ctx, vdata, nbytes, False)

    def store(w: Wave) -> None:
        addresses = addressing(w)
        _scatter_chunks(_mem(w).memory, addresses, w.exec_mask[:, None], source(w), nbytes, 1, ins)
        if issue is not None:
            issue(w)
        if window is not None:
            window(w)
    return store


# ---------------------------------------------------------------------------------------------
# Atomics (buffer_atomic_*, global_atomic_*, flat_atomic_*): lanes applied one by one in lane order.

def _f32(x: int) -> float:
    return float(np.array(x & 0xFFFFFFFF, dtype=U32).view(np.float32))


def _bits32(x: float) -> int:
    return int(np.array(x, dtype=np.float32).view(U32))


def _s32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


_ATOMIC32: Mapping[str, Callable[[int, int], int]] = MappingProxyType({
    "add": lambda old, v: old + v, "sub": lambda old, v: old - v,
    "smin": lambda old, v: old if _s32(old) <= _s32(v) else v,
    "smax": lambda old, v: old if _s32(old) >= _s32(v) else v,
    "umin": min, "umax": max, "and": lambda old, v: old & v, "or": lambda old, v: old | v,
    "xor": lambda old, v: old ^ v, "swap": lambda old, v: v,
    "inc": lambda old, v: 0 if old >= v else old + 1,
    "dec": lambda old, v: v if (old == 0 or old > v) else old - 1,
    "add_f32": lambda old, v: _bits32(_f32(old) + _f32(v)),
})
_ATOMIC_ALIASES = MappingProxyType({
    "add_u32": "add", "sub_u32": "sub", "min_i32": "smin", "max_i32": "smax", "min_u32": "umin",
    "max_u32": "umax", "and_b32": "and", "or_b32": "or", "xor_b32": "xor", "swap_b32": "swap",
    "inc_u32": "inc", "dec_u32": "dec", "cmpswap_b32": "cmpswap",
})
_ATOMIC_RE = re.compile(r"^(buffer|global|flat)_atomic_(\w+)$")


def _returns(ins: Instr) -> bool:
    th = ins.mod("th")
    return bool(ins.flag("glc") or ins.flag("sc0") or (isinstance(th, str) and "RETURN" in th))


def _atomic(ins: Instr, ctx: Ctx) -> Op:
    m = _ATOMIC_RE.match(ins.base)
    assert m is not None
    seg, name = m.groups()
    name = _ATOMIC_ALIASES.get(name, name)
    if name != "cmpswap" and name not in _ATOMIC32:
        raise UnsupportedInstruction(f"`{ins.text}`: atomic {name} is not emulated")
    ndata = 2 if name == "cmpswap" else 1
    ops = ins.operands
    if seg == "buffer":
        if len(ops) != 4:
            raise UnsupportedInstruction(f"`{ins.text}`: expected vdata, vaddr, srsrc, soffset")
        vdata, vaddr, srsrc, soffset = ops
        returns = _returns(ins)
        vdst = vdata if returns else None
        addressing = _buffer_addressing(ins, ctx, vaddr, srsrc, soffset)
    else:
        with_dst = len(ops) == 4 or (seg == "flat" and len(ops) == 3)
        vdst = ops[0] if with_dst else None
        rest = ops[1:] if with_dst else ops
        vaddr, vdata = rest[0], rest[1]
        saddr = rest[2] if len(rest) == 3 else None
        gaddr = _global_addressing(ins, ctx, vaddr, saddr)
        addressing = None
    data = read_vector_block(vdata, ctx, ndata, MEM_READ)
    sink = write_block(vdst, ctx, 1, check=False) if vdst is not None else None
    keys = vkeys(vgpr_index(vdst, ctx, 1), 1) if vdst is not None else ()
    issue = _issuer(ins, ctx, VMEM_LOAD if vdst is not None else VMEM_STORE, keys)
    fn = _ATOMIC32.get(name)

    def run(w: Wave) -> None:
        if addressing is not None:
            addresses, offset, index, inner, params = addressing(w)
            valid = _in_range(offset, index, inner, params, 4, 1)[:, 0] & w.exec_mask
        else:
            addresses = gaddr(w)
            valid = w.exec_mask.copy()
        values = data(w)
        memory = _mem(w).memory
        old_values = np.zeros(w.lanes, dtype=U32)
        for lane in np.flatnonzero(valid).tolist():
            addr = int(addresses[lane])
            try:
                buf, off = memory.buffer(addr)
            except MemoryFault as exc:
                raise MemoryFault(f"`{ins.text}`: lane {lane}: {exc.message}") from None
            if off + 4 > buf.size:
                raise MemoryFault(f"`{ins.text}`: lane {lane}: 4 bytes at {addr:#x} run past the allocation")
            old = int(buf[off:off + 4].view("<u4")[0])
            if fn is None:  # cmpswap
                new = int(values[lane, 0]) if old == int(values[lane, 1]) else old
            else:
                new = fn(old, int(values[lane, 0])) & 0xFFFFFFFF
            buf[off:off + 4] = np.array([new], dtype="<u4").view(np.uint8)
            old_values[lane] = old
        if sink is not None:
            sink(w, old_values.reshape(w.lanes, 1))
        if issue is not None:
            issue(w)
    return run


# ---------------------------------------------------------------------------------------------
# Scalar memory

_SMEM_SIZES = MappingProxyType({
    "dword": 1, "dwordx2": 2, "dwordx4": 4, "dwordx8": 8, "dwordx16": 16,
    "b32": 1, "b64": 2, "b96": 3, "b128": 4, "b256": 8, "b512": 16,
})
_SMEM_RE = re.compile(r"^s_(load|buffer_load)_(\w+)$")


def _smem_offset(ins: Instr, ctx: Ctx, op: Operand) -> Callable[[Wave], int]:
    extra = ins.int_mod("offset")
    if op.kind == "const":
        value = (op.ival or 0) + extra
        return lambda w: value
    if op.kind == "special" and op.name == "null":
        return lambda w: extra
    r = sread(op, ctx)
    return lambda w: r(w) + extra


def _smem(ins: Instr, ctx: Ctx) -> Op:
    m = _SMEM_RE.match(ins.base)
    assert m is not None
    kind, size = m.groups()
    if size not in _SMEM_SIZES:
        raise UnsupportedInstruction(f"`{ins.text}`: scalar load size {size!r} is not emulated")
    n = _SMEM_SIZES[size]
    if len(ins.operands) != 3:
        raise UnsupportedInstruction(f"`{ins.text}`: expected sdst, sbase, offset")
    d, base, off = ins.operands
    di = scalar_index(d, ctx, n)
    keys = skeys(di, n)
    offset = _smem_offset(ins, ctx, off)
    issue = _issuer(ins, ctx, SMEM, keys)
    if kind == "load":
        rbase = sread(base, ctx, 64)

        def load(w: Wave) -> None:
            address = (rbase(w) + offset(w)) & ~3 & 0xFFFFFFFFFFFFFFFF
            try:
                raw = _mem(w).memory.read(address, 4 * n)
            except MemoryFault as exc:
                raise MemoryFault(f"`{ins.text}`: {exc.message}") from None
            w.s[di:di + n] = np.frombuffer(raw, dtype="<u4").tolist()
            if issue is not None:
                issue(w)
        return load
    bi = scalar_index(base, ctx, 4)
    rbase4 = sread(base, ctx)

    def buffer_load(w: Wave) -> None:
        rbase4(w)
        words = [w.s[bi + k] for k in range(4)]
        addr0 = words[0] | ((words[1] & 0xFFFF) << 32)
        num_records = words[2]
        off0 = offset(w) & ~3
        values = []
        for k in range(n):
            o = off0 + 4 * k
            if o + 4 > num_records:
                values.append(0)
                continue
            try:
                values.append(int(np.frombuffer(_mem(w).memory.read(addr0 + o, 4), dtype="<u4")[0]))
            except MemoryFault as exc:
                raise MemoryFault(f"`{ins.text}`: {exc.message}") from None
        w.s[di:di + n] = values
        if issue is not None:
            issue(w)
    return buffer_load


_SATOMIC_RE = re.compile(r"^s_atomic_(\w+?)(_x2)?$")


def _satomic(ins: Instr, ctx: Ctx) -> Op:
    m = _SATOMIC_RE.match(ins.base)
    assert m is not None
    name, wide = m.groups()
    if wide or (name != "cmpswap" and name not in _ATOMIC32):
        raise UnsupportedInstruction(f"`{ins.text}`: scalar atomic {name} is not emulated")
    d, base, off = ins.operands
    ndata = 2 if name == "cmpswap" else 1
    di = scalar_index(d, ctx, ndata)
    rdata = [sread(Operand(d.text, "sgpr", di + k), ctx) for k in range(ndata)]
    rbase = sread(base, ctx, 64)
    offset = _smem_offset(ins, ctx, off)
    returns = _returns(ins)
    issue = _issuer(ins, ctx, SMEM, skeys(di, 1) if returns else ())
    fn = _ATOMIC32.get(name)

    def run(w: Wave) -> None:
        address = (rbase(w) + offset(w)) & 0xFFFFFFFFFFFFFFFF
        try:
            buf, o = _mem(w).memory.buffer(address)
        except MemoryFault as exc:
            raise MemoryFault(f"`{ins.text}`: {exc.message}") from None
        old = int(buf[o:o + 4].view("<u4")[0])
        vals = [r(w) for r in rdata]
        new = (vals[0] if old == vals[1] else old) if fn is None else fn(old, vals[0]) & 0xFFFFFFFF
        buf[o:o + 4] = np.array([new], dtype="<u4").view(np.uint8)
        if returns:
            w.s[di] = old
        if issue is not None:
            issue(w)
    return run


# ---------------------------------------------------------------------------------------------
# LDS

_DS_READ: Mapping[str, tuple[int, str]] = MappingProxyType({
    "b32": (4, "dw"), "b64": (8, "dw"), "b96": (12, "dw"), "b128": (16, "dw"),
    "u8": (1, "u8"), "i8": (1, "i8"), "u16": (2, "u16"), "i16": (2, "i16"),
    "u8_d16": (1, "lo_u8"), "u8_d16_hi": (1, "hi_u8"), "i8_d16": (1, "lo_i8"), "i8_d16_hi": (1, "hi_i8"),
    "u16_d16": (2, "lo16"), "u16_d16_hi": (2, "hi16"),
})
_DS_WRITE: Mapping[str, tuple[int, str]] = MappingProxyType({
    "b8": (1, "lo"), "b16": (2, "lo"), "b32": (4, "dw"), "b64": (8, "dw"), "b96": (12, "dw"),
    "b128": (16, "dw"), "b8_d16_hi": (1, "hi"), "b16_d16_hi": (2, "hi"),
})
_DS_RE = re.compile(r"^ds_(read|load|write|store)_(\w+)$")
_DS2_RE = re.compile(r"^ds_(read2|write2|read2st64|write2st64|load_2addr|store_2addr|load_2addr_stride64|"
                     r"store_2addr_stride64)_(b32|b64)$")


_BYTE_RANGES = tuple(np.arange(n, dtype=I64) for n in range(17))


def _lds_bytes(w: Wave, addresses: np.ndarray, nbytes: int, valid: np.ndarray, ins: Instr,
               write: bool) -> tuple[np.ndarray, np.ndarray]:
    """(byte indices (k, nbytes), lane rows) of the in-bounds accesses; out-of-bounds per the policy."""
    size = w.workgroup.lds.size
    span = _BYTE_RANGES[nbytes] if nbytes < len(_BYTE_RANGES) else np.arange(nbytes, dtype=I64)
    if w.exec_full and valid is w.exec_mask and int(addresses.max()) + nbytes <= size:
        return addresses[:, None] + span[None, :], np.arange(w.lanes)
    inside = addresses + nbytes <= size
    bad = valid & ~inside
    if bad.any() and _mem(w).lds_oob == "error":
        lane = int(np.flatnonzero(bad)[0])
        raise MemoryFault(f"`{ins.text}`: lane {lane} accesses LDS bytes {int(addresses[lane])}.."
                          f"{int(addresses[lane]) + nbytes - 1}, outside the {size} bytes the kernel "
                          "allocates (group_segment_fixed_size)")
    rows = np.flatnonzero(valid & inside)
    return addresses[rows][:, None] + span[None, :], rows


def _race_read(w: Wave, idx: np.ndarray, ins: Instr) -> None:
    wg = w.workgroup
    if not wg.track_races or idx.size == 0:
        return
    flat = idx.reshape(-1)
    g = wg.barrier_generation
    me = w.wave_id
    writer = wg.lds_writer[flat]
    bad = (wg.lds_write_gen[flat] == g) & (writer != me)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise HazardError(f"LDS race: `{ins.text}` in wave {me} reads LDS byte {int(flat[k])}, written by "
                          f"wave {int(writer[k])} since the last barrier")
    reader = wg.lds_reader[flat]
    shared = (wg.lds_read_gen[flat] == g) & (reader != me)
    wg.lds_reader[flat] = np.where(shared, -2, me)
    wg.lds_read_gen[flat] = g


def _race_write(w: Wave, idx: np.ndarray, ins: Instr, data: np.ndarray) -> None:
    """Report a write that races with another wave's write or read since the last barrier.

    Writing the value a byte already holds cannot change what anyone reads, so it is not a race
    (several waves may store the same data to one place).
    """
    wg = w.workgroup
    if not wg.track_races or idx.size == 0:
        return
    flat = idx.reshape(-1)
    changes = wg.lds[flat] != np.asarray(data, dtype=np.uint8).reshape(-1)
    g = wg.barrier_generation
    me = w.wave_id
    writer = wg.lds_writer[flat]
    waw = (wg.lds_write_gen[flat] == g) & (writer != me) & changes
    if waw.any():
        k = int(np.flatnonzero(waw)[0])
        raise HazardError(f"LDS race: `{ins.text}` in wave {me} writes LDS byte {int(flat[k])}, also written "
                          f"by wave {int(writer[k])} since the last barrier")
    reader = wg.lds_reader[flat]
    war = (wg.lds_read_gen[flat] == g) & (reader != me) & changes
    if war.any():
        k = int(np.flatnonzero(war)[0])
        who = "several waves" if int(reader[k]) == -2 else f"wave {int(reader[k])}"
        raise HazardError(f"LDS race: `{ins.text}` in wave {me} writes LDS byte {int(flat[k])}, read by "
                          f"{who} since the last barrier")
    wg.lds_writer[flat] = np.where(changes, me, writer)
    wg.lds_write_gen[flat] = np.where(changes, g, wg.lds_write_gen[flat])


def _ds_address(ins: Instr, ctx: Ctx, op: Operand):
    ra = read_b32(op, ctx, MEM_READ)
    return lambda w: np.broadcast_to(np.asarray(ra(w), dtype=U32), (w.lanes,))


def _ds(ins: Instr, ctx: Ctx) -> Op:
    m = _DS_RE.match(ins.base)
    assert m is not None
    verb, form_name = m.groups()
    offset = ins.int_mod("offset")
    if verb in ("read", "load"):
        if form_name not in _DS_READ:
            raise UnsupportedInstruction(f"`{ins.text}`: LDS read form {form_name!r} is not emulated")
        nbytes, form = _DS_READ[form_name]
        d, a = ins.operands
        addr = _ds_address(ins, ctx, a)
        sink, keys = _load_sink(d, ctx, nbytes, form)
        issue = _issuer(ins, ctx, LDS, keys)

        def read(w: Wave) -> None:
            addresses = addr(w).astype(I64) + offset
            idx, rows = _lds_bytes(w, addresses, nbytes, w.exec_mask, ins, False)
            _race_read(w, idx, ins)
            data = np.zeros((w.lanes, nbytes), dtype=np.uint8)
            data[rows] = w.workgroup.lds[idx]
            sink(w, data)
            if issue is not None:
                issue(w)
        return read
    if form_name not in _DS_WRITE:
        raise UnsupportedInstruction(f"`{ins.text}`: LDS write form {form_name!r} is not emulated")
    nbytes, form = _DS_WRITE[form_name]
    a, d = ins.operands
    addr = _ds_address(ins, ctx, a)
    source = _store_source(d, ctx, nbytes, form)
    issue = _issuer(ins, ctx, LDS, (), lds_store=True)

    def write(w: Wave) -> None:
        addresses = addr(w).astype(I64) + offset
        idx, rows = _lds_bytes(w, addresses, nbytes, w.exec_mask, ins, True)
        data = source(w)[rows]
        _race_write(w, idx, ins, data)
        w.workgroup.lds[idx] = data
        if issue is not None:
            issue(w)
    return write


def _ds2(ins: Instr, ctx: Ctx) -> Op:
    m = _DS2_RE.match(ins.base)
    assert m is not None
    verb, width = m.groups()
    size = 4 if width == "b32" else 8
    scale = size * (64 if ("st64" in verb or "stride64" in verb) else 1)
    offsets = (ins.int_mod("offset0") * scale, ins.int_mod("offset1") * scale)
    is_read = verb.startswith(("read", "load"))
    if is_read:
        d, a = ins.operands
        addr = _ds_address(ins, ctx, a)
        sink, keys = _load_sink(d, ctx, 2 * size, "dw")
        issue = _issuer(ins, ctx, LDS, keys)

        def read2(w: Wave) -> None:
            base = addr(w).astype(I64)
            data = np.zeros((w.lanes, 2 * size), dtype=np.uint8)
            for k, off in enumerate(offsets):
                idx, rows = _lds_bytes(w, base + off, size, w.exec_mask, ins, False)
                _race_read(w, idx, ins)
                data[rows, k * size:(k + 1) * size] = w.workgroup.lds[idx]
            sink(w, data)
            if issue is not None:
                issue(w)
        return read2
    a, d0, d1 = ins.operands
    addr = _ds_address(ins, ctx, a)
    srcs = (_store_source(d0, ctx, size, "dw"), _store_source(d1, ctx, size, "dw"))
    issue = _issuer(ins, ctx, LDS, (), lds_store=True)

    def write2(w: Wave) -> None:
        base = addr(w).astype(I64)
        for off, src in zip(offsets, srcs, strict=True):
            idx, rows = _lds_bytes(w, base + off, size, w.exec_mask, ins, True)
            data = src(w)[rows]
            _race_write(w, idx, ins, data)
            w.workgroup.lds[idx] = data
        if issue is not None:
            issue(w)
    return write2


def _bpermute(forward: bool) -> Factory:
    def make(ins: Instr, ctx: Ctx) -> Op:
        d, a, s = ins.operands
        offset = ins.int_mod("offset")
        addr = _ds_address(ins, ctx, a)
        rs = read_b32(s, ctx, MEM_READ)
        wd = write_block(d, ctx, 1, check=False)
        issue = _issuer(ins, ctx, LDS, vkeys(vgpr_index(d, ctx, 1), 1))

        def run(w: Wave) -> None:
            lane = ((addr(w).astype(I64) + offset) >> 2) & (w.lanes - 1)
            src = np.where(w.exec_mask, np.broadcast_to(np.asarray(rs(w), dtype=U32), (w.lanes,)), U32(0))
            if forward:
                out = np.zeros(w.lanes, dtype=U32)
                active = np.flatnonzero(w.exec_mask)
                out[lane[active]] = src[active]
            else:
                out = src[lane]
            wd(w, out.reshape(w.lanes, 1))
            if issue is not None:
                issue(w)
        return run
    return make


_DS_ATOMIC_RE = re.compile(r"^ds_(add|sub|min|max|and|or|xor|inc|dec)(_rtn)?_(u32|i32|f32|b32)$")


def _ds_atomic(ins: Instr, ctx: Ctx) -> Op:
    m = _DS_ATOMIC_RE.match(ins.base)
    assert m is not None
    name, rtn, kind = m.groups()
    fns = {"add": "add", "sub": "sub", "and": "and", "or": "or", "xor": "xor", "inc": "inc", "dec": "dec",
           "min": "smin" if kind == "i32" else "umin", "max": "smax" if kind == "i32" else "umax"}
    key = "add_f32" if (name == "add" and kind == "f32") else fns[name]
    if kind == "f32" and name != "add":
        raise UnsupportedInstruction(f"`{ins.text}`: LDS float atomic {name} is not emulated")
    fn = _ATOMIC32[key]
    offset = ins.int_mod("offset")
    if rtn:
        d, a, s = ins.operands
        wd = write_block(d, ctx, 1, check=False)
        keys = vkeys(vgpr_index(d, ctx, 1), 1)
    else:
        a, s = ins.operands
        wd = None
        keys = ()
    addr = _ds_address(ins, ctx, a)
    rs = read_b32(s, ctx, MEM_READ)
    issue = _issuer(ins, ctx, LDS, keys, lds_store=True)

    def run(w: Wave) -> None:
        addresses = addr(w).astype(I64) + offset
        idx, rows = _lds_bytes(w, addresses, 4, w.exec_mask, ins, True)
        values = np.broadcast_to(np.asarray(rs(w), dtype=U32), (w.lanes,))
        lds = w.workgroup.lds
        old = np.zeros(w.lanes, dtype=U32)
        for r, i in zip(rows.tolist(), idx[:, 0].tolist(), strict=True):
            cur = int(lds[i:i + 4].view("<u4")[0])
            old[r] = cur
            lds[i:i + 4] = np.array([fn(cur, int(values[r])) & 0xFFFFFFFF], dtype="<u4").view(np.uint8)
        if wd is not None:
            wd(w, old.reshape(w.lanes, 1))
        if issue is not None:
            issue(w)
    return run


EXACT: Mapping[str, Factory] = MappingProxyType({
    "ds_bpermute_b32": _bpermute(False), "ds_permute_b32": _bpermute(True),
})

PATTERNS: tuple[tuple[re.Pattern[str], Factory], ...] = (
    (_ATOMIC_RE, _atomic),
    (_BUFFER_RE, _buffer),
    (_GLOBAL_RE, _global),
    (_SMEM_RE, _smem),
    (_SATOMIC_RE, _satomic),
    (_DS2_RE, _ds2),
    (_DS_ATOMIC_RE, _ds_atomic),
    (_DS_RE, _ds),
)
