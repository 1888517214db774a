"""Generated kernels run on the emulator and match numpy: a matrix of v1 solutions of our own and the
dev-set solutions in the v1 family, over full tiles, edge tiles in both free dimensions, K not a
multiple of DepthU, K == 0, batches, padded leading dimensions, beta zero (C is all NaN and must
not be read) and non-zero, and alpha zero (A and B are all NaN and must not be read).

The default run covers every data type and transpose with 16x16 and 32x32 MFMAs and a few dev-set
kernels; `-m slow` runs the full product of knobs and every dev-set kernel.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tensile_lite.asm.gemm import generate
from tensile_lite.codeobj.toolchain import Toolchain, find_toolchain_for
from tensile_lite.errors import ToolchainError
from tensile_lite.host import GemmProblem
from tensile_lite.model import Solution
from tests.gemm import harness
from tests.gemm.devset import supported_kernels
from tests.gemm.solutions import TYPES, XF32, problem_type, solution

TRANSPOSES = {"NN": (False, False), "NT": (False, True), "TN": (True, False), "TT": (True, True)}


def _mi(types: str, big: bool) -> tuple[int, int, int]:
    if types == "SS":
        return (32, 32, 2) if big else (16, 16, 4)
    return (32, 32, 8) if big else (16, 16, 16)


def _problems(sol: Solution) -> list[tuple[GemmProblem, float, float]]:
    """(problem, alpha, beta) cases for one kernel, sized from its macro tile and DepthU."""
    pt = sol.problem_type
    mt0, mt1 = sol.macro_tile
    du = sol.depth_u
    batch = 2 if pt.num_indices_c == 3 else 1
    beta = -1.5 if pt.use_beta else 0.0
    return [
        (GemmProblem(mt0, mt1, 2 * du, 1), 1.0, 0.0),                            # full tiles
        (harness.padded(pt, mt0 + 5, 2 * mt1 - 3, du + 9, batch), 0.5, beta),   # edges, K tail, batch
        (GemmProblem(mt0 - 1, mt1 + 1, du, 1), 0.0, 2.0 if pt.use_beta else 0.0),  # alpha == 0
        (GemmProblem(mt0, mt1 + 7, 0, batch), 1.0, 0.5 if pt.use_beta else 0.0),  # K == 0
    ]


def _check(toolchain: Toolchain, kernel_dir: Path, sol: Solution, cases=None) -> None:
    if not toolchain.check_target_ok(sol.arch):
        # gfx940/941 need an older LLVM than the default one (toolchain.find_toolchain_for)
        try:
            toolchain = find_toolchain_for(sol.arch)
        except ToolchainError as exc:
            pytest.skip(str(exc))
    built = harness.build(toolchain, sol, kernel_dir)
    emu = harness.emulator_for(built)
    for problem, alpha, beta in cases or _problems(sol):
        result = harness.run(built, problem, alpha=alpha, beta=beta, emulator=emu)
        try:
            result.check()
        except AssertionError as exc:
            raise AssertionError(f"{built.name} on {problem}, alpha {alpha}, beta {beta}: {exc}") from None


@pytest.mark.parametrize("trans", sorted(TRANSPOSES))
@pytest.mark.parametrize("types", sorted(TYPES))
def test_types_and_transposes(types: str, trans: str, toolchain: Toolchain, kernel_dir: Path) -> None:
    pt = problem_type(types, *TRANSPOSES[trans])
    _check(toolchain, kernel_dir, solution(pt, mi=_mi(types, False), wave_tile=(2, 1), depth_u=32))


@pytest.mark.parametrize("types", sorted(TYPES))
def test_32x32_mfma(types: str, toolchain: Toolchain, kernel_dir: Path) -> None:
    pt = problem_type(types, types in ("HSS", "SS"), types in ("BBS", "SS"))
    _check(toolchain, kernel_dir, solution(pt, mi=_mi(types, True), wave_tile=(1, 2), wave_group=(2, 1),
                                           depth_u=16 if types == "SS" else 32))


@pytest.mark.parametrize("arch, types", [("gfx90a", "HHS"), ("gfx90a", "BSS"), ("gfx90a", "SS"),
                                         ("gfx950", "BBS"), ("gfx950", "HSS")])
def test_other_architectures(arch: str, types: str, toolchain: Toolchain, kernel_dir: Path) -> None:
    pt = problem_type(types, True, False)
    _check(toolchain, kernel_dir, solution(pt, arch=arch, mi=_mi(types, False), wave_tile=(1, 2)))


@pytest.mark.parametrize("mi, wave_tile", [((16, 16, 8), (2, 1)), ((32, 32, 4), (1, 2))])
def test_xf32(mi: tuple[int, int, int], wave_tile: tuple[int, int], toolchain: Toolchain, kernel_dir: Path) -> None:
    """F32XdlMathOp X: f32 tensors through the xf32 MFMAs of gfx942."""
    pt = problem_type("SS", False, True, **XF32)
    sol = solution(pt, mi=mi, wave_tile=wave_tile, depth_u=16)
    assert f"v_mfma_f32_{mi[0]}x{mi[1]}x{mi[2]}_xf32" in generate(sol)
    _check(toolchain, kernel_dir, sol)


def test_unbatched_without_beta(toolchain: Toolchain, kernel_dir: Path) -> None:
    pt = problem_type("HHS", False, True, batched=False, use_beta=False)
    _check(toolchain, kernel_dir, solution(pt, wave_group=(4, 1), depth_u=64))


def test_thread_order_fallback_and_narrow_vectors(toolchain: Toolchain, kernel_dir: Path) -> None:
    """A 96-row tile cannot be split contiguous-first over 256 threads; vectors of one element."""
    pt = problem_type("BBS", False, False)
    _check(toolchain, kernel_dir, solution(pt, wave_tile=(3, 1), GlobalReadVectorWidthA=1,
                                           GlobalReadVectorWidthB=1, LdsPadA=0, LdsPadB=0))


def _dev_ids(sols: list[Solution]) -> list[str]:
    return [f"{s.problem_type.name}-MT{s.macro_tile[0]}x{s.macro_tile[1]}x{s.depth_u}-{i}"
            for i, s in enumerate(sols)]


def _dev_quick() -> list[Solution]:
    """A few dev-set kernels, smallest work per workgroup first, one per problem type."""
    try:
        sols = supported_kernels()
    except BaseException:  # shared material absent: the test itself will skip
        return []
    picked: dict[str, list[Solution]] = {}
    for sol in sorted(sols, key=lambda s: (s.macro_tile[0] * s.macro_tile[1] * s.depth_u, s.index)):
        group = picked.setdefault(sol.problem_type.name, [])
        if len(group) < 3:
            group.append(sol)
    return [s for group in picked.values() for s in group]


@pytest.mark.parametrize("sol", _dev_quick(), ids=_dev_ids(_dev_quick()))
def test_dev_set_sample(sol: Solution, toolchain: Toolchain, kernel_dir: Path) -> None:
    _check(toolchain, kernel_dir, sol)


CHUNKS = 8  # the sweep in interleaved parts, so a parallel runner can share it out


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_dev_set_all(chunk: int, toolchain: Toolchain, kernel_dir: Path) -> None:
    """Every distinct dev-set kernel the writer supports (CDNA and RDNA, every feature), two problems."""
    sols = supported_kernels()
    assert sols
    for sol in sols[chunk::CHUNKS]:
        mt0, mt1 = sol.macro_tile
        pt = sol.problem_type
        _check(toolchain, kernel_dir, sol, [
            (harness.padded(pt, mt0 + 3, mt1 + 5, sol.depth_u + 7, 2), 1.25, -0.5),
            (GemmProblem(mt0, mt1, sol.depth_u, 1), 1.0, 0.0)])


_KNOBS = list(itertools.product(sorted(TYPES), sorted(TRANSPOSES), (False, True), (1, 2), (0, 8), (0, 1)))


@pytest.mark.slow
@pytest.mark.parametrize("types, trans, big, pgr, pad, swap", _KNOBS)
def test_full_matrix(types: str, trans: str, big: bool, pgr: int, pad: int, swap: int, toolchain: Toolchain,
                     kernel_dir: Path) -> None:
    pt = problem_type(types, *TRANSPOSES[trans])
    sol = solution(pt, mi=_mi(types, big), wave_tile=(2, 1) if big else (1, 3), wave_group=(2, 2),
                   depth_u=16 if big and types == "SS" else 32, PrefetchGlobalRead=pgr, LdsPadA=pad,
                   LdsPadB=pad, SourceSwap=swap)
    _check(toolchain, kernel_dir, sol)


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["gfx90a", "gfx950"])
@pytest.mark.parametrize("types, trans, big", list(itertools.product(sorted(TYPES), sorted(TRANSPOSES),
                                                                      (False, True))))
def test_architectures_matrix(arch: str, types: str, trans: str, big: bool, toolchain: Toolchain,
                              kernel_dir: Path) -> None:
    pt = problem_type(types, *TRANSPOSES[trans])
    _check(toolchain, kernel_dir, solution(pt, arch=arch, mi=_mi(types, big), wave_tile=(1, 2),
                                           depth_u=16 if big and types == "SS" else 32))
