"""Helpers: magic-number division, runtime division, 64-bit arithmetic, buffer resources.

The emitted sequences are run through a small lane-parallel model of the handful of instructions
they use (numpy arrays stand for per-lane register values), and assembled with the real assembler.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from tensile_lite.asm import (
    AsmError,
    Instruction,
    Reg,
    Special,
    add64,
    buffer_resource,
    get_arch,
    isa_for,
    magic_divisor,
    mul32x32_64,
    sgpr,
    udiv_const,
    udiv_scalar,
    udiv_vector,
    vgpr,
)
from tensile_lite.codeobj.toolchain import Toolchain
from tests.asm.llvm_roundtrip import disassemble

U32 = np.uint32
RNG = np.random.default_rng(20240517)


def _edge_dividends(d: int) -> np.ndarray:
    top = 0xFFFFFFFF
    edges = [0, 1, 2, d - 1, d, d + 1, top, top - 1, top // d * d, top // d * d - 1, 0x80000000, 0x7FFFFFFF]
    return np.array([e for e in edges if 0 <= e <= top], dtype=np.uint64)


def _divisors() -> list[int]:
    ds = set(range(1, 1500))
    for k in range(2, 32):
        ds |= {(1 << k) + j for j in (-3, -1, 0, 1, 3)}
    ds |= {0xFFFFFFFF, 0xFFFFFFFE, 0x80000001, 641, 6700417, 0x55555555, 0xAAAAAAAB}
    ds |= {int(x) for x in RNG.integers(1, 1 << 32, 1500, dtype=np.uint64)}
    return sorted(d for d in ds if 1 <= d <= 0xFFFFFFFF)


def test_magic_divisor_is_exact() -> None:
    random_n = RNG.integers(0, 1 << 32, 600, dtype=np.uint64)
    kinds = set()
    for d in _divisors():
        m = magic_divisor(d)
        kinds.add(m.kind)
        n = np.concatenate([random_n, _edge_dividends(d)])
        if m.kind == "shift":
            q = n >> np.uint64(m.shift)
        else:
            t = (n * np.uint64(m.multiplier)) >> np.uint64(32)
            q = t >> np.uint64(m.shift) if m.kind == "mul" else (t + ((n - t) >> np.uint64(1))) >> np.uint64(m.shift - 1)
        bad = np.nonzero(q != n // np.uint64(d))[0]
        assert bad.size == 0, f"d={d} {m}: wrong for n={int(n[bad[0]])}"
        assert m.divide(int(n[-1])) == int(n[-1]) // d
    assert kinds == {"shift", "mul", "add"}
    with pytest.raises(AsmError, match="divisor 0"):
        magic_divisor(0)


# ---------------------------------------------------------------- a lane-parallel model

class Machine:
    """Per-lane values of the registers a sequence touches; enough semantics for these helpers."""

    def __init__(self, lanes: int, rcp_ulps: int = 0):
        self.regs: dict[str, np.ndarray] = {}
        self.lanes = lanes
        self.rcp_ulps = rcp_ulps
        self.scc = np.zeros(lanes, dtype=bool)

    def set(self, reg: Reg, value: np.ndarray | int) -> None:
        self.regs[reg.text] = np.broadcast_to(np.asarray(value, dtype=np.uint64) & 0xFFFFFFFF,
                                              (self.lanes,)).astype(U32)

    def get(self, op: object) -> np.ndarray:
        if isinstance(op, Reg):
            return self.regs[op.text]
        if isinstance(op, Special):
            return self.regs[op.text]
        if isinstance(op, float):
            return np.full(self.lanes, np.float32(op).view(U32), dtype=U32)
        return np.full(self.lanes, int(op) & 0xFFFFFFFF, dtype=U32)

    def put(self, op: object, value: np.ndarray) -> None:
        self.regs[op.text] = np.asarray(value).astype(np.uint64).astype(U32) if value.dtype != U32 else value  # type: ignore[attr-defined]

    def run(self, instructions: Sequence[Instruction]) -> None:
        for ins in instructions:
            getattr(self, "op_" + ins.name)(*ins.operands)

    @staticmethod
    def _f(x: np.ndarray) -> np.ndarray:
        return x.view(np.float32)

    def op_s_nop(self, _n: int) -> None:
        pass

    def op_v_cvt_f32_u32(self, d, s) -> None:
        self.put(d, self.get(s).astype(np.float32).view(U32))

    def op_v_rcp_iflag_f32(self, d, s) -> None:
        # The hardware is within 1 ULP: model round-to-nearest (0), or the f32 neighbour above (+1)
        # or below (-1) the exact reciprocal, i.e. the worst faithful roundings.
        exact = 1.0 / self._f(self.get(s)).astype(np.float64)
        r = exact.astype(np.float32)
        if self.rcp_ulps > 0:
            r = np.where(r.astype(np.float64) < exact, np.nextafter(r, np.float32(np.inf)), r)
        elif self.rcp_ulps < 0:
            r = np.where(r.astype(np.float64) > exact, np.nextafter(r, np.float32(-np.inf)), r)
        self.put(d, r.astype(np.float32).view(U32))

    def op_v_mul_f32(self, d, a, b) -> None:
        self.put(d, (self._f(self.get(a)) * self._f(self.get(b))).astype(np.float32).view(U32))

    def op_v_cvt_u32_f32(self, d, s) -> None:
        f = self._f(self.get(s)).astype(np.float64)
        self.put(d, np.clip(np.nan_to_num(np.trunc(f)), 0, 0xFFFFFFFF).astype(np.uint64).astype(U32))

    def _alu(self, d, value) -> None:
        self.put(d, (np.asarray(value, dtype=np.uint64) & 0xFFFFFFFF).astype(U32))

    def op_v_sub_u32(self, d, a, b) -> None:
        self._alu(d, self.get(a).astype(np.uint64) + (1 << 32) - self.get(b).astype(np.uint64))

    def op_v_add_u32(self, d, a, b) -> None:
        self._alu(d, self.get(a).astype(np.uint64) + self.get(b).astype(np.uint64))

    def op_v_mul_lo_u32(self, d, a, b) -> None:
        self._alu(d, self.get(a).astype(np.uint64) * self.get(b).astype(np.uint64))

    def op_v_mul_hi_u32(self, d, a, b) -> None:
        self._alu(d, (self.get(a).astype(np.uint64) * self.get(b).astype(np.uint64)) >> np.uint64(32))

    def op_v_lshrrev_b32(self, d, shift, s) -> None:
        self._alu(d, self.get(s) >> (self.get(shift) & 31))

    def op_v_mov_b32(self, d, s) -> None:
        self.put(d, self.get(s))

    op_v_readfirstlane_b32 = op_v_mov_b32  # lanes stand for independent waves here
    op_s_mov_b32 = op_v_mov_b32

    def op_v_cmp_ge_u32(self, mask, a, b) -> None:
        self.regs[mask.text] = (self.get(a) >= self.get(b)).astype(U32)

    def op_v_cndmask_b32(self, d, a, b, mask) -> None:
        self.put(d, np.where(self.regs[mask.text] != 0, self.get(b), self.get(a)))

    def op_v_add_co_u32(self, d, mask, a, b) -> None:
        s = self.get(a).astype(np.uint64) + self.get(b).astype(np.uint64)
        self.regs[mask.text] = (s >> np.uint64(32)).astype(U32)
        self._alu(d, s)

    def op_v_addc_co_u32(self, d, mask, a, b, carry) -> None:
        s = self.get(a).astype(np.uint64) + self.get(b).astype(np.uint64) + self.regs[carry.text]
        self.regs[mask.text] = (s >> np.uint64(32)).astype(U32)
        self._alu(d, s)

    def op_s_add_u32(self, d, a, b) -> None:
        s = self.get(a).astype(np.uint64) + self.get(b).astype(np.uint64)
        self.scc = (s >> np.uint64(32)) != 0
        self._alu(d, s)

    def op_s_addc_u32(self, d, a, b) -> None:
        s = self.get(a).astype(np.uint64) + self.get(b).astype(np.uint64) + self.scc
        self.scc = (s >> np.uint64(32)) != 0
        self._alu(d, s)

    def op_s_sub_u32(self, d, a, b) -> None:
        self.op_v_sub_u32(d, a, b)

    def op_s_mul_i32(self, d, a, b) -> None:
        self.op_v_mul_lo_u32(d, a, b)

    def op_s_mul_hi_u32(self, d, a, b) -> None:
        self.op_v_mul_hi_u32(d, a, b)

    def op_s_lshr_b32(self, d, s, shift) -> None:
        self._alu(d, self.get(s) >> (self.get(shift) & 31))


def _check_div(q: np.ndarray, r: np.ndarray | None, n: np.ndarray, d: np.ndarray | int) -> None:
    n64 = n.astype(np.uint64)
    d64 = np.asarray(d, dtype=np.uint64)
    bad = np.nonzero(q.astype(np.uint64) != n64 // d64)[0]
    assert bad.size == 0, f"quotient wrong for n={int(n[bad[0]])}, d={int(np.broadcast_to(d64, n.shape)[bad[0]])}"
    if r is not None:
        assert np.array_equal(r.astype(np.uint64), n64 % d64)


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942", "gfx1100", "gfx1201"])
@pytest.mark.parametrize("d", [1, 2, 3, 7, 10, 64, 65, 641, 1000, 0x7FFFFFFF, 0x80000001, 0xFFFFFFFF])
def test_udiv_const_sequences_compute_quotient_and_remainder(arch: str, d: int) -> None:
    isa = isa_for(arch)
    n = np.concatenate([RNG.integers(0, 1 << 32, 300, dtype=np.uint64), _edge_dividends(d)]).astype(U32)
    for q, src, tmp, r in ((vgpr(1), vgpr(0), vgpr(2), vgpr(3)), (vgpr(1), sgpr(4), vgpr(2), vgpr(3)),
                           (sgpr(1), sgpr(0), sgpr(2), sgpr(3))):
        m = Machine(n.size)
        m.set(src, n)
        m.run(udiv_const(isa, q, src, d, tmp, r))
        _check_div(m.get(q), m.get(r), n, d)


def test_udiv_const_rejects_aliasing() -> None:
    isa = isa_for("gfx942")
    with pytest.raises(AsmError, match="distinct"):
        udiv_const(isa, vgpr(1), vgpr(1), 3, vgpr(2))
    with pytest.raises(AsmError, match="share a file"):
        udiv_const(isa, vgpr(1), vgpr(0), 3, sgpr(2))


@pytest.mark.parametrize("rcp_ulps", [0, 1, -1])
@pytest.mark.parametrize("arch", ["gfx90a", "gfx942", "gfx1201"])
def test_udiv_by_runtime_value(arch: str, rcp_ulps: int) -> None:
    isa = isa_for(arch)
    special = np.array([1, 2, 3, 7, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF], dtype=np.uint64)
    d = np.concatenate([RNG.integers(1, 1 << 32, 3000, dtype=np.uint64), RNG.integers(1, 1 << 12, 3000, dtype=np.uint64),
                        np.repeat(special, 40)])
    n = np.concatenate([RNG.integers(0, 1 << 32, d.size - 200, dtype=np.uint64),
                        np.full(100, 0xFFFFFFFF, dtype=np.uint64), np.zeros(100, dtype=np.uint64)])
    d, n = d.astype(U32), n.astype(U32)
    m = Machine(n.size, rcp_ulps)
    m.set(vgpr(0), n)
    m.set(sgpr(6), d)
    code = udiv_vector(isa, vgpr(1), vgpr(2), vgpr(0), sgpr(6), vgpr(3), vgpr(4))
    m.run(code)
    _check_div(m.get(vgpr(1)), m.get(vgpr(2)), n, d)
    assert any(i.name == "s_nop" for i in code) == bool(get_arch(arch).hazards.trans_use)

    ms = Machine(n.size, rcp_ulps)
    ms.set(sgpr(0), n)
    ms.set(sgpr(1), d)
    ms.run(udiv_scalar(isa, sgpr(2), sgpr(3), sgpr(0), sgpr(1), vgpr(4, 4)))
    _check_div(ms.get(sgpr(2)), ms.get(sgpr(3)), n, d)


@pytest.mark.parametrize("arch", ["gfx90a", "gfx1100", "gfx1201"])
def test_add64_and_mul64(arch: str) -> None:
    isa = isa_for(arch)
    a = RNG.integers(0, 1 << 63, 500, dtype=np.uint64)
    b = RNG.integers(0, 1 << 63, 500, dtype=np.uint64)
    x = RNG.integers(0, 1 << 32, 500, dtype=np.uint64)
    for dst, src in ((vgpr(0, 2), vgpr(2, 2)), (sgpr(0, 2), sgpr(2, 2))):
        for addend, value in ((vgpr(4, 2) if dst.kind == src.kind and dst.file == "v" else sgpr(4, 2), b),
                              (vgpr(6) if dst.file == "v" else sgpr(6), x), (-5, np.uint64(2**64 - 5))):
            m = Machine(a.size)
            m.set(src[0], a & 0xFFFFFFFF)
            m.set(src[1], a >> np.uint64(32))
            if isinstance(addend, Reg):
                m.set(addend[0], value & 0xFFFFFFFF)
                if addend.count == 2:
                    m.set(addend[1], value >> np.uint64(32))
            m.regs[isa.arch.vcc.text] = np.zeros(a.size, dtype=U32)
            m.run(add64(isa, dst, src, addend))
            got = m.get(dst[0]).astype(np.uint64) | (m.get(dst[1]).astype(np.uint64) << np.uint64(32))
            assert np.array_equal(got, a + np.asarray(value, dtype=np.uint64))
    m = Machine(x.size)
    m.set(sgpr(0), x)
    m.set(sgpr(1), x[::-1])
    m.run(mul32x32_64(isa, sgpr(2, 2), sgpr(0), sgpr(1)))
    got = m.get(sgpr(2)).astype(np.uint64) | (m.get(sgpr(3)).astype(np.uint64) << np.uint64(32))
    assert np.array_equal(got, x * x[::-1])
    with pytest.raises(AsmError, match="overlaps"):
        mul32x32_64(isa, vgpr(0, 2), vgpr(1), vgpr(4))


@pytest.mark.parametrize(("arch", "word3"), [("gfx90a", 0x00020000), ("gfx942", 0x00020000),
                                             ("gfx1100", 0x31004000), ("gfx1201", 0x30020000)])
def test_buffer_resource_uses_the_targets_word3(arch: str, word3: int) -> None:
    code = buffer_resource(isa_for(arch), sgpr(8, 4), sgpr(0, 2), sgpr(4))
    assert [i.text for i in code] == ["s_mov_b32 s8, s0", "s_mov_b32 s9, s1", "s_mov_b32 s10, s4",
                                      f"s_mov_b32 s11, {word3}"]
    assert len(buffer_resource(isa_for(arch), sgpr(8, 4), sgpr(8, 2), 1024)) == 2


@pytest.mark.parametrize("arch", ["gfx908", "gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201"])
def test_helper_sequences_assemble(arch: str, toolchain: Toolchain) -> None:
    isa = isa_for(arch)
    code: list[Instruction] = []
    for d in (3, 7, 16, 0x80000001):
        code += udiv_const(isa, vgpr(1), vgpr(0), d, vgpr(2), vgpr(3))
        code += udiv_const(isa, sgpr(1), sgpr(0), d, sgpr(2), sgpr(3))
    code += udiv_vector(isa, vgpr(1), vgpr(2), vgpr(0), sgpr(6), vgpr(3), vgpr(4))
    code += udiv_scalar(isa, sgpr(2), sgpr(3), sgpr(0), sgpr(1), vgpr(4, 4))
    code += add64(isa, vgpr(0, 2), vgpr(2, 2), sgpr(4))
    code += add64(isa, sgpr(0, 2), sgpr(2, 2), 0x123456789)
    code += mul32x32_64(isa, vgpr(0, 2), vgpr(4), sgpr(1))
    code += buffer_resource(isa, sgpr(8, 4), sgpr(0, 2), 0xFFFFFFFF)
    with tempfile.TemporaryDirectory() as tmp:
        lines = disassemble(toolchain, arch, [i.text for i in code], Path(tmp))
    assert len(lines) >= len(code)
