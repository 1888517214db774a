"""Compile a kernel's decoded instructions into a list of closures, one per instruction.

Handlers are looked up by mnemonic (exact table first, then per-family patterns). An instruction
that cannot be compiled (unknown mnemonic, operand form not emulated, register outside the
allocation) becomes a closure that raises when executed, and is listed in `Program.problems`, so a
kernel with a rare unsupported path still runs its supported paths and never skips anything.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import MappingProxyType

import attrs

from tensile_lite.emu import ops_convert, ops_matrix, ops_memory, ops_scalar, ops_vector
from tensile_lite.emu.access import Ctx
from tensile_lite.emu.errors import CodeObjectError, EmulatorError, UnsupportedInstruction
from tensile_lite.emu.operands import Instr
from tensile_lite.emu.sdwa import sdwa
from tensile_lite.emu.state import Wave

Op = Callable[[Wave], int | None]
Factory = Callable[[Instr, Ctx], Op]

_MODULES = (ops_scalar, ops_vector, ops_convert, ops_memory, ops_matrix)
_EXACT: Mapping[str, Factory] = MappingProxyType({k: v for m in _MODULES for k, v in m.EXACT.items()})
_PATTERNS: tuple[tuple[re.Pattern[str], Factory], ...] = tuple(p for m in _MODULES for p in m.PATTERNS)


def handler_for(base: str) -> Factory | None:
    """The factory for a mnemonic without its encoding suffix, or None if the emulator lacks it."""
    f = _EXACT.get(base)
    if f is not None:
        return f
    for rx, factory in _PATTERNS:
        if rx.match(base):
            return factory
    return None


@attrs.frozen(slots=True)
class Program:
    kernel: str
    instrs: tuple[Instr, ...]
    ops: tuple[Op, ...] = attrs.field(repr=False)
    ctx: Ctx
    # mnemonic -> why it cannot run (first occurrence), for reports and `verify-library` skips.
    problems: Mapping[str, str] = attrs.field(factory=dict)

    def index_of(self, address: int) -> int | None:
        return self.ctx.address_index.get(address)


def _raiser(exc: EmulatorError) -> Op:
    def run(w: Wave) -> None:
        raise type(exc)(exc.message)
    return run


def _past_end(kernel: str) -> Op:
    def run(w: Wave) -> None:
        raise CodeObjectError(f"kernel {kernel} ran past its last instruction without s_endpgm")
    return run


def compile_instruction(ins: Instr, ctx: Ctx) -> Op:
    if ins.encoding in ("dpp", "e64_dpp"):
        raise UnsupportedInstruction(f"`{ins.text}`: DPP is not emulated")
    factory = handler_for(ins.base)
    if factory is None:
        raise UnsupportedInstruction(f"instruction {ins.mnemonic} is not emulated (`{ins.text}`)")
    if ins.encoding == "sdwa":
        return sdwa(ins, ctx, factory)
    return factory(ins, ctx)


# What the linker's zero fill between kernels disassembles as on gfx12 (it ends some kernels' spans).
_FILL = frozenset({"v_illegal"})


def compile_program(kernel: str, instrs: tuple[Instr, ...], ctx: Ctx) -> Program:
    index = {ins.address: n for n, ins in enumerate(instrs)}
    ctx = attrs.evolve(ctx, address_index=MappingProxyType(index))
    ops: list[Op] = []
    problems: dict[str, str] = {}
    # fill after the last s_endpgm is padding, not code: it still raises if reached, but is no problem
    # (kernels with an ELF symbol size never include it: disasm.code_layout stops at the size)
    last_end = max((n for n, ins in enumerate(instrs) if ins.base == "s_endpgm"), default=len(instrs))
    for n, ins in enumerate(instrs):
        try:
            ops.append(compile_instruction(ins, ctx))
        except EmulatorError as exc:
            if not (n > last_end and ins.mnemonic in _FILL):
                problems.setdefault(ins.mnemonic, exc.message)
            ops.append(_raiser(exc))
    ops.append(_past_end(kernel))
    return Program(kernel, instrs, tuple(ops), ctx, MappingProxyType(problems))
