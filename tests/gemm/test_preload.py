"""PreloadKernArgs: kernel arguments preloaded into user SGPRs on gfx940+ (AMDGPUUsage, "Preloaded
Kernel Arguments"), with the 256-byte block that keeps the kernel correct on firmware without it.

Every kernel runs on the emulator in both modes: `preload=True` (the firmware fills s[2:2+n] and
starts at entry + 256) and `preload=False` (older firmware starts at the entry and fills nothing),
and must give the same, numpy-checked results.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from tensile_lite.asm import ARCHS, AsmError, AsmWriter, KernelArgument, KernelSpec, Registers, isa_for
from tensile_lite.asm.gemm import generate, unsupported_reasons
from tensile_lite.asm.gemm.preload import preload_dwords
from tensile_lite.asm.kernel import (
    MAX_KERNARG_PRELOAD,
    entry_registers,
    kernel_header,
    kernel_trailer,
    reserve_entry_registers,
)
from tensile_lite.asm.modifiers import Glb
from tensile_lite.asm.operands import Label, vgpr
from tensile_lite.asm.preload import PRELOAD_ENTRY_SKIP, compat_block, compat_loads
from tensile_lite.asm.waitcnt import waitcnt
from tensile_lite.codeobj.assemble import assemble, link
from tensile_lite.codeobj.elf import read_code_object
from tensile_lite.codeobj.toolchain import Toolchain, find_toolchain_for
from tensile_lite.emu import DeviceMemory, Emulator
from tensile_lite.errors import TensileLiteError
from tensile_lite.host import GemmProblem
from tensile_lite.model import Solution
from tests.gemm import harness
from tests.gemm.devset import supported_kernels
from tests.gemm.solutions import problem_type, solution

PRELOAD_ARCHS = {"gfx940", "gfx941", "gfx942", "gfx950"}


def _args(count: int, pointer: bool = True) -> list[KernelArgument]:
    args = [KernelArgument.value(f"a{i}", "u32") for i in range(count)]
    return [*args, KernelArgument.pointer("out")] if pointer else args


# ---- the assembly layer ------------------------------------------------------------------------

def test_only_gfx94x_and_gfx950_records_preload() -> None:
    assert {name for name, a in ARCHS.items() if a.kernarg_preload} == PRELOAD_ARCHS


@pytest.mark.parametrize(("arch", "count", "preload", "message"), [
    ("gfx90a", 20, 4, "cannot preload"),
    ("gfx1201", 20, 4, "cannot preload"),
    ("gfx942", 20, MAX_KERNARG_PRELOAD + 1, "must be 1.."),
    ("gfx942", 3, 6, "within the 5 dwords"),
])
def test_spec_refuses_preload_it_cannot_have(arch: str, count: int, preload: int, message: str) -> None:
    with pytest.raises(AsmError, match=message):
        KernelSpec("k", arch, _args(count), 64, kernarg_preload=preload)


def test_preloaded_sgprs_come_before_the_workgroup_ids() -> None:
    spec = KernelSpec("k", "gfx942", _args(16), 64, workgroup_ids=(True, True, False), kernarg_preload=11)
    regs = Registers("gfx942", "k")
    reserved = reserve_entry_registers(spec, regs)
    assert reserved == entry_registers(spec)
    assert reserved.kernarg.text == "s[0:1]"
    assert reserved.preloaded is not None and reserved.preloaded.text == "s[2:12]"
    assert [r.text if r else None for r in reserved.workgroup_ids] == ["s13", "s14", None]
    assert regs.s.alloc(1).text == "s15"
    assert spec.user_sgprs == 13
    plain = KernelSpec("k", "gfx942", _args(16), 64)
    assert entry_registers(plain).preloaded is None and plain.user_sgprs == 2


@pytest.mark.parametrize("n", range(1, MAX_KERNARG_PRELOAD + 1))
def test_compat_loads_fill_exactly_the_preloaded_sgprs(n: int) -> None:
    """Load k writes s[2+d] with kernarg dword d, for every d < n exactly once, at legal alignments."""
    spec = KernelSpec("k", "gfx942", _args(16), 64, kernarg_preload=n)
    filled: list[int] = []
    for ins in compat_loads(spec):
        dst, base, offset = ins.text.split(" ", 1)[1].split(", ")
        assert base == "s[0:1]"
        first, _, last = dst.strip("s[]").partition(":")
        width = int(last or first) - int(first) + 1
        assert int(first) % min(width, 4) == 0
        assert int(first) - 2 == int(offset) // 4
        filled += range(int(first) - 2, int(first) - 2 + width)
    assert filled == list(range(n))
    assert len(compat_loads(spec)) <= 4


def test_no_block_without_preload() -> None:
    assert compat_block(KernelSpec("k", "gfx942", _args(4), 64), Label("main")) == []


# ---- a probe kernel: where every preloaded dword lands ----------------------------------------

def _probe(arch: str, n: int, args: int, *, with_block: bool = True) -> tuple[KernelSpec, str]:
    """Stores s[2:2+n] and the workgroup id to `out`: out[i] = s[2+i], out[n] = workgroup id x.
    Without the block, byte 256 is reached through s_nop padding only (what a kernel that ignored
    older firmware would look like)."""
    spec = KernelSpec(f"probe{n}", arch, _args(args), 64, kernarg_preload=n)
    regs = Registers(arch, spec.name)
    entry = reserve_entry_registers(spec, regs)
    isa = isa_for(arch)
    out = regs.s.alloc(2, align=2)
    regs.v.alloc(2)
    main = Label("label_main")
    lines: list[str] = []
    with AsmWriter(lines) as w:
        w.lines_of(kernel_header(spec))
        if with_block:
            w.lines_of(compat_block(spec, main))
        else:
            w.emit(isa.s_nop(0))
            w.lines_of([".p2align 8", f"{main.text}:"])
        w.emit(isa.s_load_dwordx2(out, entry.kernarg, spec.layout.offset_of("out")))
        w.emit(isa.v_mov_b32(vgpr(1), 0))
        w.extend(waitcnt(isa, lgkmcnt=0))
        assert entry.preloaded is not None and entry.workgroup_ids[0] is not None
        for i, reg in enumerate([*(entry.preloaded[k] for k in range(n)), entry.workgroup_ids[0]]):
            w.emit(isa.v_mov_b32(vgpr(2), reg))
            w.emit(isa.global_store_dword(vgpr(1), vgpr(2), out, mods=Glb(offset=4 * i)))
        w.emit(isa.s_endpgm())
        w.lines_of(kernel_trailer(spec, regs.counts()))
    return spec, "\n".join(lines) + "\n"


def _co(toolchain: Toolchain, text: str, arch: str, path: Path) -> Path:
    if not toolchain.check_target_ok(arch):
        pytest.skip(f"{toolchain.describe()} cannot assemble {arch}")
    obj = assemble(toolchain, text, arch, path.with_suffix(".o"))
    return link(toolchain, [obj], path)


def _run_probe(co: Path, spec: KernelSpec, n: int, *, preload: bool) -> tuple[list[int], int, bytes]:
    words = [0x1000 + 17 * i for i in range(len(spec.arguments) - 1)]
    mem = DeviceMemory()
    out = mem.alloc(np.zeros(n + 1, dtype=np.uint32))
    kernargs = struct.pack(f"<{len(words)}IQ", *words, out)
    stats = Emulator(co).launch(spec.name, grid=(3, 1, 1), block=(64, 1, 1), kernargs=kernargs, memory=mem,
                                workgroups=[(2, 0, 0)], preload=preload)
    return [int(x) for x in mem.array(out, np.uint32, n + 1)], stats.instructions, kernargs


@pytest.mark.parametrize(("n", "args"), [(1, 4), (5, 5), (13, 20), (14, 14)])
def test_preloaded_sgpr_i_holds_kernarg_dword_i(n: int, args: int, toolchain: Toolchain, tmp_path: Path) -> None:
    spec, text = _probe("gfx942", n, args)
    co = _co(toolchain, text, "gfx942", tmp_path / "probe.co")
    desc = read_code_object(co).kernel(spec.name).descriptor
    assert struct.unpack_from("<H", desc, 58)[0] == n                  # preload length, offset 0
    assert (struct.unpack_from("<I", desc, 52)[0] >> 1) & 0x1F == 2 + n  # USER_SGPR_COUNT
    runs = {}
    for preload in (True, False):
        got, instructions, kernargs = _run_probe(co, spec, n, preload=preload)
        want = list(struct.unpack_from(f"<{n}I", kernargs))
        assert got == [*want, 2], f"preload={preload}"
        runs[preload] = instructions
    # older firmware runs the block: its loads, one wait, the branch
    assert runs[False] - runs[True] == len(compat_loads(spec)) + 2


@pytest.mark.parametrize("arch", ["gfx940", "gfx950"])
def test_probe_on_the_other_preloading_targets(arch: str, tmp_path: Path) -> None:
    """gfx940 assembles with an LLVM older than 21 (find_toolchain_for), gfx950 with 20+."""
    try:
        toolchain = find_toolchain_for(arch)
    except TensileLiteError as exc:
        pytest.skip(str(exc))
    spec, text = _probe(arch, 8, 10)
    co = _co(toolchain, text, arch, tmp_path / "probe.co")
    for preload in (True, False):
        got, _, kernargs = _run_probe(co, spec, 8, preload=preload)
        assert got == [*struct.unpack_from("<8I", kernargs), 2], f"preload={preload}"


def test_older_firmware_needs_the_block(toolchain: Toolchain, tmp_path: Path) -> None:
    """The emulator leaves the preload SGPRs unwritten when the firmware does not preload: a kernel
    without the block reads garbage there, while the workgroup id still follows USER_SGPR_COUNT."""
    spec, text = _probe("gfx942", 6, 8, with_block=False)
    co = _co(toolchain, text, "gfx942", tmp_path / "bare.co")
    got, _, kernargs = _run_probe(co, spec, 6, preload=True)
    assert got == [*struct.unpack_from("<6I", kernargs), 2]
    got, _, _ = _run_probe(co, spec, 6, preload=False)
    assert got[6] == 2
    assert not set(got[:6]) & set(struct.unpack_from("<6I", kernargs))


# ---- GEMM kernels --------------------------------------------------------------------------------

def _dev(arch: str, grouped: bool, count: int) -> list[Solution]:
    try:
        sols = supported_kernels()
    except BaseException:  # shared material absent: the test itself skips
        return []
    picked = [s for s in sols if s.arch == arch and s.tuning("PreloadKernArgs") == 1
              and s.problem_type.grouped_gemm == grouped]
    picked.sort(key=lambda s: (s.macro_tile[0] * s.macro_tile[1] * s.depth_u, s.index))
    out: list[Solution] = []
    for s in picked:  # one per problem type, smallest first
        if all(o.problem_type.name != s.problem_type.name for o in out):
            out.append(s)
    return out[:count]


def _ids(sols: list[Solution]) -> list[str]:
    return [f"{s.problem_type.name}-MT{s.macro_tile[0]}x{s.macro_tile[1]}x{s.depth_u}" for s in sols]


def _build(toolchain: Toolchain, sol: Solution, kernel_dir: Path) -> harness.Built:
    if not toolchain.check_target_ok(sol.arch):
        pytest.skip(f"{toolchain.describe()} cannot assemble {sol.arch}")
    assert unsupported_reasons(sol) == (), unsupported_reasons(sol)
    return harness.build(toolchain, sol, kernel_dir)


def _check_descriptor(built: harness.Built, dwords: int) -> None:
    kernel = read_code_object(built.path).kernel(built.name)
    assert struct.unpack_from("<H", kernel.descriptor, 58)[0] == dwords
    user = (struct.unpack_from("<I", kernel.descriptor, 52)[0] >> 1) & 0x1F
    assert user == 2 + dwords


def _check_entry_block(emu: Emulator, built: harness.Built) -> None:
    """Byte 256 starts an instruction; before it: the loads, a wait, the branch to it, s_nops."""
    instrs = emu.kernel(built.name).program.instrs
    start = next(i for i, ins in enumerate(instrs) if ins.address - instrs[0].address == PRELOAD_ENTRY_SKIP)
    head = [ins.mnemonic for ins in instrs[:start]]
    loads = sum(1 for m in head if m.startswith("s_load"))
    assert head[:loads + 2] == [*head[:loads], "s_waitcnt", "s_branch"]
    assert set(head[loads + 2:]) == {"s_nop"}


@pytest.mark.parametrize("sol", _dev("gfx942", False, 2), ids=_ids(_dev("gfx942", False, 2)))
def test_dev_set_gfx942_kernels_in_both_modes(sol: Solution, toolchain: Toolchain, kernel_dir: Path) -> None:
    n = preload_dwords(sol)
    assert n == 12  # the header, the sizes, D and C
    built = _build(toolchain, sol, kernel_dir)
    _check_descriptor(built, n)
    mt0, mt1 = sol.macro_tile
    pt = sol.problem_type
    problem = harness.padded(pt, mt0 + 3, mt1 - 5, sol.depth_u + 9, 2)
    beta = -0.5 if pt.use_beta else 0.0
    got = {}
    for preload in (True, False):
        emu = Emulator(built.path, kernarg_preload=preload)
        if preload:
            _check_entry_block(emu, built)
        result = harness.run(built, problem, alpha=1.5, beta=beta, emulator=emu)
        result.check()
        got[preload] = result.got
    np.testing.assert_array_equal(got[True], got[False])


@pytest.mark.parametrize("sol", _dev("gfx942", True, 1), ids=_ids(_dev("gfx942", True, 1)))
def test_dev_set_grouped_kernel_in_both_modes(sol: Solution, toolchain: Toolchain, kernel_dir: Path) -> None:
    """A grouped launch preloads the header and the table pointer; the rest comes from the table."""
    built = _build(toolchain, sol, kernel_dir)
    _check_descriptor(built, preload_dwords(sol))
    mt0, mt1 = sol.macro_tile
    problems = [GemmProblem(mt0 + 1, mt1, 8, 1), GemmProblem(mt0, 2 * mt1 - 3, sol.depth_u + 1, 1)]
    for preload in (True, False):
        emu = Emulator(built.path, kernarg_preload=preload)
        for arg_type in (1, 2):
            for r in harness.run_grouped(built, problems, arg_type=arg_type, alphas=[1.0, -0.5], betas=[0.0, 1.0],
                                         emulator=emu):
                r.check()


def test_gfx90a_ignores_preload(toolchain: Toolchain, kernel_dir: Path) -> None:
    sols = _dev("gfx90a", True, 1) or [solution(problem_type("HSS", True, False), arch="gfx90a", PreloadKernArgs=1)]
    sol = sols[0]
    assert sol.tuning("PreloadKernArgs") == 1 and preload_dwords(sol) == 0
    assert "kernarg_preload" not in generate(sol)
    built = _build(toolchain, sol, kernel_dir)
    _check_descriptor(built, 0)
    mt0, mt1 = sol.macro_tile
    harness.run(built, GemmProblem(mt0 + 2, mt1 - 1, sol.depth_u + 3, 1), alpha=0.5).check()


def test_preload_knob_off_gives_the_plain_kernel() -> None:
    pt = problem_type("HHS", False, True)
    on, off = solution(pt, PreloadKernArgs=1), solution(pt, PreloadKernArgs=0)
    assert (preload_dwords(on), preload_dwords(off)) == (12, 0)
    text_on, text_off = generate(on, "k"), generate(off, "k")
    assert "kernarg_preload_length 12" in text_on and "kernarg_preload" not in text_off
    # the main entry copies s[2:14] into the argument registers in pairs and loads the rest
    assert text_on.count("s_mov_b64") - text_off.count("s_mov_b64") == 6
