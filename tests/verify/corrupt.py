"""Ways to break a built library on purpose: edit a placeholder `.dat` entry, or patch one instruction
word of a kernel in its code object."""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

from elftools.elf.elffile import ELFFile

from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.emu.disasm import disassemble
from tensile_lite.library.formats import detect_format, encode, read_dat


def placeholder(out: Path, arch: str, contains: str) -> Path:
    """The placeholder `.dat` of `arch` whose name contains `contains`."""
    found = sorted(p for p in (out / "library").glob(f"TensileLibrary_*{contains}*_{arch}.dat"))
    assert len(found) == 1, found
    return found[0]


def edit_entries(dat: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Apply `change` to every solution entry of a placeholder library, keeping its format."""
    doc = read_dat(dat)
    for entry in doc["solutions"]:
        change(entry)
    dat.write_bytes(encode(doc, detect_format(dat)))


def _locate(toolchain: Toolchain, co: Path, kernel: str, pattern: str, after: str | None = None) -> tuple[Any, int]:
    """The first instruction of `kernel` whose text matches `pattern` (after the first one matching
    `after`, when given), and its offset in the file."""
    dis = disassemble(toolchain, co)
    start = dis.symbols[kernel]
    later = [a for name, a in dis.symbols.items() if a > start and not name.startswith("label_")]
    end = min(later) if later else 1 << 64
    lines = list(dis.lines_in(start, end))
    if after is not None:
        lines = lines[next(i for i, ln in enumerate(lines) if re.fullmatch(after, ln.text)) + 1:]
    line = next(ln for ln in lines if re.fullmatch(pattern, ln.text))
    with co.open("rb") as f:
        text = ELFFile(f).get_section_by_name(".text").header
    return line, line.address - text.sh_addr + text.sh_offset


def _reread(toolchain: Toolchain, co: Path, address: int) -> str:
    return next(ln.text for ln in disassemble(toolchain, co).lines if ln.address == address)


def patch_instruction(toolchain: Toolchain, co: Path, kernel: str, pattern: str, opcode: int, *,
                      after: str | None = None) -> str:
    """Give the first VOP2 instruction of `kernel` whose text matches `pattern` (after the first one
    matching `after`, when given) the opcode `opcode`; returns the instruction's new text as
    llvm-objdump reads it back."""
    line, offset = _locate(toolchain, co, kernel, pattern, after)
    data = bytearray(co.read_bytes())
    assert struct.unpack_from("<I", data, offset)[0] == line.words[0]
    struct.pack_into("<I", data, offset, (line.words[0] & ~(0x3F << 25)) | (opcode << 25))  # VOP2 opcode bits
    co.write_bytes(bytes(data))
    return _reread(toolchain, co, line.address)


def patch_literal(toolchain: Toolchain, co: Path, kernel: str, pattern: str, value: int) -> str:
    """Give the first instruction of `kernel` whose text matches `pattern`, one with a 32-bit literal
    operand, the literal `value`; returns its new text as llvm-objdump reads it back."""
    line, offset = _locate(toolchain, co, kernel, pattern)
    assert len(line.words) == 2, f"{line.text} has no literal"
    data = bytearray(co.read_bytes())
    assert struct.unpack_from("<I", data, offset + 4)[0] == line.words[1]
    struct.pack_into("<I", data, offset + 4, value)
    co.write_bytes(bytes(data))
    return _reread(toolchain, co, line.address)
