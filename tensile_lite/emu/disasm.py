"""Disassemble a code object with the real toolchain's llvm-objdump and split it per kernel.

Each output line carries the address and the encoding words in its trailing comment
(`// 000000001300: C0060100 00000000`); branch targets are computed from the encoding, so they do
not depend on how objdump prints labels.
"""

from __future__ import annotations

import bisect
import re
import subprocess
from pathlib import Path

import attrs
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.emu.errors import CodeObjectError
from tensile_lite.emu.operands import Instr, parse_instruction

_SYMBOL = re.compile(r"^([0-9a-fA-F]+) <(.+)>:\s*$")
_LINE = re.compile(r"^\s+(\S.*?)\s*//\s*([0-9a-fA-F]+):((?:\s+[0-9a-fA-F]{8})+)\s*(?:<.*>)?\s*$")
# SOPP branches whose simm16 is a word offset from the next instruction.
_BRANCHES = frozenset({
    "s_branch", "s_cbranch_scc0", "s_cbranch_scc1", "s_cbranch_vccz", "s_cbranch_vccnz",
    "s_cbranch_execz", "s_cbranch_execnz",
})


@attrs.frozen(slots=True)
class RawLine:
    address: int
    words: tuple[int, ...]
    text: str


@attrs.frozen(slots=True)
class Disassembly:
    """Instruction lines in address order, and the address of each symbol objdump printed."""

    lines: tuple[RawLine, ...]
    symbols: dict[str, int] = attrs.field(hash=False)
    addresses: tuple[int, ...] = attrs.field(init=False, repr=False)

    @addresses.default
    def _addresses(self) -> tuple[int, ...]:
        return tuple(ln.address for ln in self.lines)

    def lines_in(self, start: int, end: int) -> tuple[RawLine, ...]:
        """The lines whose address is in [start, end)."""
        lo = bisect.bisect_left(self.addresses, start)
        hi = bisect.bisect_left(self.addresses, end)
        return self.lines[lo:hi]

    def kernel_lines(self, name: str) -> tuple[RawLine, ...]:
        """The lines from `name` up to the next symbol objdump printed. Local labels of a kernel can be
        symbols too, so the emulator itself slices by `CodeLayout` ranges instead."""
        if name not in self.symbols:
            raise CodeObjectError(f"kernel {name!r} has no code in the disassembly; symbols: "
                                  + ", ".join(sorted(self.symbols)[:10]))
        start = self.symbols[name]
        later = [a for a in self.symbols.values() if a > start]
        return self.lines_in(start, min(later) if later else 1 << 64)


@attrs.frozen(slots=True)
class CodeLayout:
    """Where each kernel's code lies in `.text`: name -> (start, end) addresses."""

    ranges: dict[str, tuple[int, int]] = attrs.field(hash=False)
    text_size: int


def code_layout(path: Path, kernels: frozenset[str] = frozenset()) -> CodeLayout:
    """Entry points (function symbols, and the named kernels whatever their symbol type) and their
    extent: the symbol's size when it has one (so the linker's fill between kernels is not decoded
    as code), else up to the next entry point or the end of `.text`. Branch labels that ended up in
    the symbol table are not entry points, so they do not cut a kernel short."""
    try:
        with Path(path).open("rb") as f:
            elf = ELFFile(f)
            text = elf.get_section_by_name(".text")
            if text is None:
                raise CodeObjectError(f"{path} has no .text section")
            lo, hi = text.header.sh_addr, text.header.sh_addr + text.header.sh_size
            symtab = elf.get_section_by_name(".symtab") or elf.get_section_by_name(".dynsym")
            sized = sorted({(s.entry.st_value, s.name, s.entry.st_size)
                            for s in (symtab.iter_symbols() if isinstance(symtab, SymbolTableSection) else ())
                            if (s.entry.st_info.type == "STT_FUNC" or s.name in kernels)
                            and lo <= s.entry.st_value < hi})
    except (OSError, ELFError) as exc:
        raise CodeObjectError(f"cannot read {path}: {exc}") from exc
    ranges = {}
    for n, (addr, name, size) in enumerate(sized):
        end = sized[n + 1][0] if n + 1 < len(sized) else hi
        ranges[name] = (addr, min(end, addr + size) if size else end)
    return CodeLayout(ranges, hi - lo)


def objdump_argv(toolchain: Toolchain, path: Path, wave64: bool | None,
                 span: tuple[int, int] | None = None) -> list[str]:
    tool = toolchain.tool("llvm-objdump")
    if tool is None:
        raise CodeObjectError(f"llvm-objdump not found next to {toolchain.describe()}")
    argv = [str(tool), "-d", "--no-show-raw-insn"]
    if wave64 is not None:
        argv.append("--mattr=+wavefrontsize64" if wave64 else "--mattr=+wavefrontsize32")
    if span is not None:
        argv += [f"--start-address={span[0]:#x}", f"--stop-address={span[1]:#x}"]
    argv.append(str(path))
    return argv


def parse_objdump(text: str) -> Disassembly:
    lines: list[RawLine] = []
    symbols: dict[str, int] = {}
    for raw in text.splitlines():
        sym = _SYMBOL.match(raw)
        if sym:
            symbols[sym.group(2)] = int(sym.group(1), 16)
            continue
        m = _LINE.match(raw)
        if m:
            words = tuple(int(w, 16) for w in m.group(3).split())
            lines.append(RawLine(int(m.group(2), 16), words, m.group(1)))
    return Disassembly(tuple(lines), symbols)


def disassemble(toolchain: Toolchain, path: Path, *, wave64: bool | None = None,
                span: tuple[int, int] | None = None) -> Disassembly:
    """The whole `.text`, or only the addresses in `span` (one kernel of a large library)."""
    argv = objdump_argv(toolchain, path, wave64, span)
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise CodeObjectError(f"cannot run {argv[0]}: {exc}") from exc
    if proc.returncode != 0:
        raise CodeObjectError(f"{argv[0]} failed on {path} (exit {proc.returncode}): "
                              + proc.stderr.strip()[:500])
    dis = parse_objdump(proc.stdout)
    if not dis.lines:
        raise CodeObjectError(f"{path}: llvm-objdump printed no instructions with addresses")
    return dis


def decode_line(line: RawLine) -> Instr:
    """One RawLine -> Instr; an operand the parser does not know is a CodeObjectError naming it."""
    try:
        ins = parse_instruction(line.address, 4 * len(line.words), line.text)
    except ValueError as exc:
        raise CodeObjectError(f"cannot parse `{line.text}` at {line.address:#x}: {exc}") from exc
    if ins.base in _BRANCHES:
        simm = line.words[0] & 0xFFFF
        if simm & 0x8000:
            simm -= 0x10000
        ins = attrs.evolve(ins, branch_target=line.address + 4 + 4 * simm)
    return ins
