"""verify-library catches kernels that rely on D16 loads keeping the other half of a register
(spec hardware_semantics.md §1): a 16-bit GEMM kernel whose guarded loads pack two elements into one
VGPR with `*_d16` + `*_d16_hi` fails on gfx942 (SRAM ECC zeroes the other half) and passes on gfx1100
(RDNA keeps it). The library's own kernels pass on both: on CDNA they load each element zero-extended
and pack with ALU ops.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

import tensile_lite.asm.gemm.plan as plan_module
from tensile_lite.asm.arch import Arch, get_arch
from tensile_lite.asm.gemm import generate
from tensile_lite.codeobj.assemble import assemble, link
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.library.naming import kernel_name_for
from tensile_lite.logic import find_logic_files, read_logic_file
from tensile_lite.model import Solution
from tensile_lite.tcl import main as tcl_main
from tensile_lite.verify import KernelOutcome, select, verify_kernel
from tensile_lite.verify.library import LibraryKernel
from tensile_lite.verify.report import FAILED, PASSED
from tensile_lite.verify.runner import _Emulators
from tests.shared import dev_logic_files
from tests.verify.trimmed import write_trimmed

# bf16 kernels whose A and B are read in vectors of 8 (four dwords of two elements each)
PICKS = {"aquavanjaram_Cijk_Alik_Bljk_BBS_BH_UserArgs.yaml": ("gfx942", (0,)),
         "navi31_Cijk_Alik_Bjlk_BBS_BH_Bias_AuxB_HAS_SAV_UserArgs.yaml": ("gfx1100", (1,))}
ARCHS = tuple(arch for arch, _ in PICKS.values())


@pytest.fixture(scope="module")
def logic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    files = {p.name: p for p in dev_logic_files()}
    folder = tmp_path_factory.mktemp("d16") / "logic"
    folder.mkdir()
    for name, (_arch, keep) in PICKS.items():
        if name not in files:
            pytest.skip(f"the dev set has no {name}")
        write_trimmed(files[name], folder / name, keep)
    return folder


@pytest.fixture(scope="module")
def library(logic: Path) -> Path:
    out = logic.parent / "out"
    assert tcl_main([f"--architecture={'_'.join(ARCHS)}", str(logic), str(out), "HIP"]) == 0
    return out


def _solutions(logic: Path) -> dict[str, Solution]:
    return {kernel_name_for(s): s for p in find_logic_files([str(logic)]) for s in read_logic_file(p).solutions}


@pytest.fixture
def d16_packing(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The writer as if every target kept the other half of a D16 load (what RDNA does)."""
    def preserving(name: str) -> Arch:
        return attrs.evolve(get_arch(name), d16_preserves_other_half=True)
    monkeypatch.setattr(plan_module, "get_arch", preserving)
    yield


def _rebuild(toolchain: Toolchain, kernels: list[LibraryKernel], solutions: dict[str, Solution],
             work: Path) -> dict[str, str]:
    """Write each kernel again with the current writer into its code object; returns the texts."""
    texts = {}
    for co in {k.code_object for k in kernels}:
        objects = []
        for k in (k for k in kernels if k.code_object == co):
            texts[k.name] = generate(solutions[k.name], k.name)
            objects.append(assemble(toolchain, texts[k.name], k.arch, work / f"{k.name}.o"))
        link(toolchain, objects, co)
    return texts


def _verify(kernels: list[LibraryKernel]) -> dict[str, KernelOutcome]:
    emulators = _Emulators(kernels)
    return {k.arch: verify_kernel(k, emulators) for k in kernels}


def _guarded_d16_pairs(text: str) -> int:
    return text.count("buffer_load_short_d16_hi") + text.count("buffer_load_d16_hi_b16")


def test_library_kernels_pack_without_d16_on_cdna(library: Path, toolchain: Toolchain, tmp_path: Path) -> None:
    kernels = select(library)
    assert sorted(k.arch for k in kernels) == sorted(ARCHS)
    outcomes = _verify(kernels)
    assert all(o.status == PASSED for o in outcomes.values()), outcomes
    texts = {k.arch: generate(_solutions(library.parent / "logic")[k.name], k.name) for k in kernels}
    assert "_d16" not in texts["gfx942"].replace("store_short_d16_hi", "")
    assert "v_lshl_or_b32" in texts["gfx942"]
    assert _guarded_d16_pairs(texts["gfx1100"]) > 0


def test_d16_packing_fails_on_cdna_only(library_copy: Path, logic: Path, toolchain: Toolchain, tmp_path: Path,
                                        d16_packing: None) -> None:
    kernels = select(library_copy)
    texts = _rebuild(toolchain, kernels, _solutions(logic), tmp_path)
    by_arch = {k.arch: texts[k.name] for k in kernels}
    assert _guarded_d16_pairs(by_arch["gfx942"]) > 0 and _guarded_d16_pairs(by_arch["gfx1100"]) > 0
    outcomes = _verify(select(library_copy))
    assert outcomes["gfx1100"].status == PASSED, outcomes["gfx1100"]
    cdna = outcomes["gfx942"]
    assert cdna.status == FAILED, cdna
    # full tiles take the vector loads; what breaks are the tiles read with guarded element loads
    assert cdna.failures and all(not f.problem.startswith("full") for f in cdna.failures), cdna
