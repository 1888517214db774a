"""verify-library keeps memory bounded: each kernel's compiled image is released once the kernel is
verified, and a code object's emulator (its disassembly with it) is dropped after its last kernel. Also the
emulator's side of it: `Emulator.release`, and the zero fill after a gfx12 kernel's last s_endpgm, which
is padding, not an instruction that keeps the kernel from being verified."""

from __future__ import annotations

from pathlib import Path

from elftools.elf.elffile import ELFFile

from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.emu import Emulator
from tensile_lite.emu.disasm import code_layout
from tensile_lite.verify import select, verify_kernel
from tensile_lite.verify.runner import _Emulators
from tests.emu.kernels import KernelSpec, build


def test_release_forgets_a_compiled_kernel(sample_library: Path) -> None:
    k = select(sample_library, "gfx90a")[0]
    emu = Emulator(k.code_object)
    image = emu.kernel(k.name)
    assert emu.kernel(k.name) is image  # cached until released
    emu.release(k.name)
    emu.release("no_such_kernel")
    again = emu.kernel(k.name)
    assert again is not image and again.program.instrs == image.program.instrs


def test_verifying_a_kernel_releases_it(sample_library: Path) -> None:
    k = select(sample_library, "gfx942")[0]
    emulators = _Emulators()
    image = emulators.get(k.code_object).kernel(k.name)
    assert verify_kernel(k, emulators).status == "passed"
    # the emulator is kept (no list of pending kernels), the kernel's image is not; the override case loads
    # the conversion kernel's code object too
    emu = emulators.get(k.code_object)
    assert emulators.loaded() == 2 and emu.kernel(k.name) is not image


def test_code_objects_are_dropped_after_their_last_kernel(sample_library: Path) -> None:
    todo = select(sample_library)
    by_object: dict[Path, list] = {}
    for k in todo:
        by_object.setdefault(k.code_object, []).append(k)
    assert len(by_object) >= 2 and any(len(ks) >= 2 for ks in by_object.values())
    emulators = _Emulators(todo)
    for ks in by_object.values():
        first = emulators.get(ks[0].code_object)
        for n, k in enumerate(ks):
            assert emulators.get(k.code_object) is first  # one emulator while kernels remain
            emulators.done(k)
            if n < len(ks) - 1:
                assert emulators.get(k.code_object) is first
        assert emulators.loaded() == 0  # this code object's emulator is gone after its last kernel


def test_fill_after_the_last_endpgm_is_not_a_problem(toolchain: Toolchain, tmp_path: Path) -> None:
    """On gfx12 a zero word decodes as v_illegal: after the last s_endpgm it is the linker's fill between
    kernels (a single word, when the kernel ends 4 bytes before the next 256-byte boundary; objdump hides
    longer runs), before it a real illegal instruction the emulator reports."""
    specs = [KernelSpec("padded", "  s_nop 0\n" * 62 + "  s_endpgm"), KernelSpec("illegal", "  .long 0x0\n  s_endpgm")]
    emu = Emulator(build(toolchain, tmp_path, "gfx1200", specs))
    assert [i.mnemonic for i in emu.kernel("padded").program.instrs][-1] == "v_illegal"
    assert emu.problems("padded") == {}
    assert "v_illegal" in emu.problems("illegal")


def test_sized_kernels_end_at_their_symbol_size(sample_library: Path) -> None:
    """Our kernels carry an ELF symbol size: the emulator decodes exactly that much of each, never the
    fill the linker puts between kernels (unsized symbols run to the next entry point instead)."""
    objects = {k.code_object for k in select(sample_library)}
    assert objects
    for path in objects:
        with path.open("rb") as f:
            symtab = ELFFile(f).get_section_by_name(".symtab")
            sized = {s.name: (s.entry.st_value, s.entry.st_value + s.entry.st_size)
                     for s in symtab.iter_symbols() if s.entry.st_info.type == "STT_FUNC" and s.entry.st_size}
        assert sized, path
        layout = code_layout(path, frozenset(sized))
        assert {name: layout.ranges[name] for name in sized} == sized
        starts = sorted(start for start, _ in layout.ranges.values())
        # some kernel ends before the next one starts: the gap is fill the size keeps out
        assert any(end < nxt for (_, end), nxt in zip(sorted(sized.values()), starts[1:], strict=False)) \
            or len(sized) == 1
