"""verify/device.py, the one launch path of verify-library and the emulator tests: real kernels made by
the writer and the real assembler, run on the emulator through `device` and compared with numpy; a
split-K call as its two launches (GEMM, then the runtime's conversion kernel); grouped launches with
an empty GEMM; and a launch packed wrong, or a buffer too small, failing with a message that says so."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import attrs
import numpy as np
import pytest

from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.emu import DeviceMemory, Emulator, LaunchError, MemoryFault
from tensile_lite.host import ARG_TYPE_TABLE, ARG_TYPE_USER, GemmProblem
from tensile_lite.model import Solution
from tensile_lite.verify import device, splitk
from tensile_lite.verify.runtime_view import from_model
from tests.gemm import harness
from tests.gemm.solutions import problem_type, solution

Build = Callable[[Solution], tuple[harness.Built, Emulator]]


@pytest.fixture(scope="module")
def build(toolchain: Toolchain, tmp_path_factory: pytest.TempPathFactory) -> Build:
    """Assemble and link a solution's kernel once per module; (the kernel, an emulator of it)."""
    out = tmp_path_factory.mktemp("device")
    made: dict[str, tuple[harness.Built, Emulator]] = {}

    def get(sol: Solution) -> tuple[harness.Built, Emulator]:
        name = harness.kernel_name(sol)
        if name not in made:
            built = harness.build(toolchain, sol, Path(out))
            made[name] = (built, harness.emulator_for(built))
        return made[name]

    return get


def _f32_gemm() -> Solution:
    return solution(problem_type("SS"), mi=(16, 16, 4), wave_tile=(2, 1), depth_u=16)


def _f32_call(built: harness.Built, emu: Emulator, m: int, n: int, k: int, rng: np.random.Generator,
              d_words: int | None = None) -> tuple[device.Launch, np.ndarray, np.ndarray]:
    """D = 0.5 A B - C of packed column-major f32 tensors (Ailk, Bljk, Cijk): the launch, the exact
    product in float64 and the f32 inputs' magnitude bound per element. `d_words`: D's buffer size."""
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    c = rng.uniform(-1, 1, (m, n)).astype(np.float32)
    flat = {"A": a.flatten(order="F"), "B": b.flatten(order="F"), "C": c.flatten(order="F"),
            "D": np.full(d_words if d_words is not None else m * n, np.nan, np.float32)}
    buffers = device.place(DeviceMemory(), flat)
    launch = device.gemm(emu, built.name, from_model(built.solution), GemmProblem(m, n, k, 1), buffers, 0.5, -1.0)
    exact = 0.5 * (a.astype(np.float64) @ b.astype(np.float64)) - c
    bound = 0.5 * (np.abs(a).astype(np.float64) @ np.abs(b)) + np.abs(c)
    return launch, exact, bound


def test_real_kernel_matches_numpy(build: Build) -> None:
    """An f32 MFMA kernel with edge tiles and a K tail, launched as a `device.Launch`, against numpy;
    the D buffer past M x N keeps its NaN fill."""
    built, emu = build(_f32_gemm())
    m, n, k = 45, 38, 37
    launch, exact, bound = _f32_call(built, emu, m, n, k, np.random.default_rng(1), d_words=m * n + 16)
    mt0, mt1 = built.solution.macro_tile
    tiles = -(-m // mt0) * -(-n // mt1)
    assert tiles > 1 and launch.grid == (tiles, 1, 1) and launch.workgroup == (built.solution.num_threads, 1, 1)
    ran = device.run(launch)
    assert ran.workgroups == tiles and ran.instructions > 0
    d = launch.buffers[0].read("D")
    got = d[:m * n].reshape(n, m).T.astype(np.float64)
    assert np.all(np.abs(got - exact) <= 2.0 ** -20 * (k + 2) * bound), np.abs(got - exact).max()
    assert np.isnan(d[m * n:]).all()


def test_subset_of_workgroups_writes_only_their_tiles(build: Build) -> None:
    """`Launch.only` runs the workgroups listed: one workgroup writes one macro tile, D elsewhere keeps NaN."""
    built, emu = build(_f32_gemm())
    m, n, k = 70, 38, 16
    launch, exact, _ = _f32_call(built, emu, m, n, k, np.random.default_rng(2))
    assert device.run(launch.only([(0, 0, 0)])).workgroups == 1
    got = launch.buffers[0].read("D").reshape(n, m).T
    mt0, mt1 = built.solution.macro_tile
    assert np.isfinite(got[:mt0, :mt1]).all() and np.isnan(got[mt0:, :]).all() and np.isnan(got[:, mt1:]).all()
    assert np.allclose(got[:mt0, :mt1], exact[:mt0, :mt1], rtol=1e-5, atol=1e-5)


def test_multiple_buffer_split_k_is_two_launches(build: Build) -> None:
    """A MultipleBuffer GSU-3 call: the GEMM launch writes GSU slices to the workspace (D untouched in
    between), the conversion launch sums them into D; together they match the reference."""
    pt = problem_type("HHS", True, False)
    built, emu = build(solution(pt, wave_tile=(2, 1), GlobalSplitU=3, GlobalSplitUAlgorithm="MultipleBuffer"))
    made = harness.setup(built, GemmProblem(37, 21, 150, 2), alpha=0.5, beta=-1.5, emulator=emu, seed=4)
    gemm, convert = made.launches
    assert made.gsu == 3 and convert.kernel != built.name and convert.workgroup == (256, 1, 1)
    device.run(gemm)
    ws = made.call.buffers.read(splitk.WORKSPACE)
    assert (ws[:3 * 37 * 21 * 2] != splitk.POISON).all() and np.isnan(made.call.buffers.read("D").view(np.float16)).all()
    device.run(convert)
    harness.result(built.solution, made.call, 0).check()


def _mbsk(gsu: int = 3) -> Solution:
    return solution(problem_type("HHS", False, True), GlobalSplitU=gsu,
                    GlobalSplitUAlgorithm="MultipleBufferSingleKernel")


def test_result_check_wants_the_synchronizer_back_at_zero(build: Build) -> None:
    """In-kernel split-K: with the workgroups of one slice held back, the counters wait at GSU - 1 and
    the result check says so; running the rest brings them to 0 and D to the reference."""
    built, emu = build(_mbsk())
    made = harness.setup(built, GemmProblem(40, 36, 130, 1), beta=0.5, emulator=emu)
    (gemm,) = made.launches
    mt0, mt1 = built.solution.macro_tile
    nwg0, tiles = -(-40 // mt0), -(-40 // mt0) * -(-36 // mt1)
    # slice of workgroup w (GSUWGMRR 0): (w % (tiles x GSU)) / nwg0 % GSU
    everything = [(w, 0, 0) for w in range(gemm.grid[0])]
    held = [i for i in everything if (i[0] % (tiles * 3)) // nwg0 % 3 == 2]
    device.run(gemm.only(i for i in everything if i not in held))
    with pytest.raises(AssertionError, match="Synchronizer counters are not back to 0"):
        harness.result(built.solution, made.call, 0).check()
    device.run(gemm.only(held))
    harness.result(built.solution, made.call, 0).check()


@pytest.mark.parametrize("arg_type", [ARG_TYPE_TABLE, ARG_TYPE_USER])
def test_grouped_split_k_with_an_empty_gemm(build: Build, arg_type: int) -> None:
    """A grouped split-K launch where one GEMM is empty (M = 0): it still gets its (one-dword)
    workspace, packs and runs nothing, and the others match the reference."""
    built, emu = build(_mbsk())
    problems = [GemmProblem(40, 20, 90, 2), GemmProblem(0, 20, 32, 1), GemmProblem(16, 50, 33, 1)]
    rs = from_model(built.solution)
    assert splitk.workspace(rs, problems[1], 3)[splitk.WORKSPACE].size == 1
    results = harness.run_grouped(built, problems, arg_type=arg_type, alphas=[1.0, 2.0, -0.5],
                                  betas=[0.5, 0.0, 1.0], emulator=emu, seed=2)
    for r in results:
        r.check()
    assert results[1].got.size == 0 and results[0].instructions > 0


def test_grouped_launch_of_only_empty_gemms_runs_nothing(build: Build) -> None:
    built, emu = build(_mbsk())
    rs = from_model(built.solution)
    problems = [GemmProblem(0, 8, 16, 1), GemmProblem(8, 0, 16, 1)]
    contents = [{name: np.zeros(1, np.uint32) for name in "ABCD"} | splitk.buffers(rs, p, 3) for p in problems]
    buffers = device.place_group(DeviceMemory(), contents)
    launch = device.grouped(emu, built.name, rs, problems, buffers, [1.0, 1.0], [0.0, 0.0], [None, None])
    assert launch.workgroups == () and device.run(launch) == device.Ran()


def test_kernargs_short_of_the_kernel_fail_clearly(build: Build) -> None:
    """Arguments packed for less than the kernel declares (another kernel's layout, a truncated blob)
    are refused before anything runs, naming the kernel and the argument."""
    built, emu = build(_f32_gemm())
    launch, _, _ = _f32_call(built, emu, 16, 16, 16, np.random.default_rng(3))
    short = attrs.evolve(launch, kernargs=launch.kernargs[:-4])
    with pytest.raises(LaunchError, match=f"kernel {built.name} declares arguments up to byte "
                                          f"{len(launch.kernargs)} .*the launch packs {len(launch.kernargs) - 4}"):
        device.run(short)
    assert np.isnan(launch.buffers[0].read("D")).all()


def test_buffer_too_small_fails_naming_it(build: Build) -> None:
    """D allocated for half the problem: the kernel's store past its end is a memory fault that names
    the kernel and buffer D."""
    built, emu = build(_f32_gemm())
    m, n = 32, 32
    launch, _, _ = _f32_call(built, emu, m, n, 16, np.random.default_rng(4), d_words=m * n // 2)
    with pytest.raises(MemoryFault, match=f"kernel {built.name}.* is 0 bytes past the end of buffer D "):
        device.run(launch)
