"""The build asks the writer's support gate once per solution and hands each verdict (with its plan) to
the kernel that renders it: no kernel's plan is built twice, and none is built where it is rendered."""

from __future__ import annotations

import pickle
from collections import Counter
from pathlib import Path

import pytest

from tensile_lite.asm.gemm import GemmKernel, support
from tensile_lite.build import build_library
from tensile_lite.codeobj.trivial import TrivialKernel
from tensile_lite.model import Solution
from tensile_lite.tcl_args import build_parser, to_request
from tests.shared import shared_dir


def test_each_kernel_is_planned_once_per_build(tmp_path: Path, toolchain, monkeypatch: pytest.MonkeyPatch) -> None:
    planned: Counter[int] = Counter()  # build_plan calls by solution id
    real = support.build_plan

    def counting(sol: Solution):
        planned[id(sol)] += 1
        return real(sol)

    monkeypatch.setattr(support, "build_plan", counting)
    rendered: list[tuple[int, int]] = []  # (solution id, plans built while rendering its kernel)

    def source(sol: Solution, name: str, *, code_object_version: int, decision) -> TrivialKernel:
        before = planned.total()
        kernel = GemmKernel.of(sol, name, code_object_version=code_object_version, decision=decision)
        pickle.loads(pickle.dumps(kernel)).assembly_text()  # what a worker receives and does
        rendered.append((id(sol), planned.total() - before))
        return TrivialKernel(name, sol.arch, code_object_version)  # the real kernels are assembled elsewhere

    logic = shared_dir("logic", "asm_full", "aldebaran", "104CU")
    req = to_request(build_parser().parse_args(["--jobs=1", "--architecture=gfx90a", "--verbose=0",
                                                str(logic), str(tmp_path / "out"), "HIP"]))
    summary = build_library(req, tmp_path / "staging", log=lambda *_: None, kernel_source=source)
    assert summary.kernels == len(rendered) > 0
    assert [extra for _, extra in rendered] == [0] * len(rendered)  # rendering never plans
    assert all(planned[sol_id] == 1 for sol_id, _ in rendered)      # each kernel's plan: once, by the gate
    assert set(planned.values()) == {1}                             # and no solution is planned twice
