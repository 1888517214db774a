"""Every dev-set logic file reads into the model, with the counts upstream's build saw."""

from __future__ import annotations

import collections

import attrs
import pytest

from tensile_lite.logic import read_logic_file
from tensile_lite.model import kernel_key
from tensile_lite.model.kernel_key import splits_into_workspace
from tensile_lite.model.serialize import (
    decode_solution,
    encode_solution,
    solution_from_dict,
    solution_to_dict,
)
from tests.shared import dev_logic_files

# Distinct assembly kernels per architecture in upstream's build of the same files
# (shared/reference/README.md; gfx1200 adds the 8 kernels of the file upstream could not build).
UPSTREAM_KERNELS = {"gfx908": 3, "gfx90a": 369, "gfx940": 463, "gfx941": 11, "gfx942": 770, "gfx1100": 68,
                    "gfx1101": 34, "gfx1102": 130, "gfx1200": 29 + 8, "gfx1201": 127}


@pytest.fixture(scope="module")
def dev_set():
    return [read_logic_file(p) for p in dev_logic_files()]


def test_all_dev_set_files_parse(dev_set):
    assert len(dev_set) == 30
    assert sum(len(lf.solutions) for lf in dev_set) == 2290


def test_distinct_kernels_match_upstream_dedup(dev_set):
    """Upstream's dedup, except that a MultipleBuffer solution splitting K (GSU > 1) never shares the
    kernel of one that does not: both halves of such a pair count, so each pair adds one kernel."""
    per_arch: dict[str, set[str]] = collections.defaultdict(set)
    halves: dict[str, dict[str, set[bool]]] = collections.defaultdict(lambda: collections.defaultdict(set))
    for lf in dev_set:
        per_arch[lf.arch] |= {kernel_key(s) for s in lf.solutions}
        for s in lf.solutions:
            # the key upstream would give: the same content with GSU 1
            plain = attrs.evolve(s, runtime=attrs.evolve(s.runtime, global_split_u=1))
            halves[lf.arch][kernel_key(plain)].add(splits_into_workspace(s))
    split_pairs = {arch: sum(len(v) == 2 for v in keys.values()) for arch, keys in halves.items()}
    assert {arch: len(keys) for arch, keys in per_arch.items()} == \
        {arch: n + split_pairs.get(arch, 0) for arch, n in UPSTREAM_KERNELS.items()}
    assert sum(split_pairs.values()) > 0


def test_library_type_comes_from_element_11_not_the_folder(dev_set):
    # navi31/Equality/navi31_Cijk_Alik_Bljk_SB_Bias_HAS_SAV_UserArgs.yaml is a GridBased file.
    navi = [lf for lf in dev_set if lf.path.endswith("navi31/Equality/navi31_Cijk_Alik_Bljk_SB_Bias_HAS_SAV_UserArgs.yaml")]
    assert [lf.library_type for lf in navi] == ["GridBased"]


def test_cu_count_and_dict_architecture(dev_set):
    cu = {lf.cu_count for lf in dev_set if "/104CU/" in lf.path}
    assert cu == {104}
    assert {lf.arch for lf in dev_set if "/gfx942_20cu/" in lf.path} == {"gfx942"}


def test_normalisation_notes_for_known_quirks(dev_set):
    notes = {lf.path.rsplit("/", 1)[1]: lf.notes for lf in dev_set}
    assert any("SolutionIndex" in n for n in notes["arcturus_Cijk_Ailk_Bjlk_HHS_BH_Bias_BiasSrcB_SAV.yaml"])
    assert any("ISA" in n for n in notes["aquavanjaram_Cijk_Alik_Bljk_B8F8SS_BH_BiasSB_BiasSrcB_SAB_SAV_UserArgs.yaml"])


def test_every_solution_round_trips_through_dict_and_msgpack(dev_set):
    for lf in dev_set:
        for sol in lf.solutions:
            assert decode_solution(encode_solution(sol)) == sol
            again = solution_from_dict(solution_to_dict(sol), sol.arch, sol.index, lf.problem_type)
            # the dict is what a logic file holds: a custom kernel's file is attached by the reader, not kept
            plain_sol = attrs.evolve(sol, custom_source=None)
            assert again == plain_sol and kernel_key(again) == kernel_key(plain_sol)


def test_equal_problem_types_are_shared(dev_set):
    # Interning: all solutions of a file point at one problem-type object.
    for lf in dev_set:
        assert all(s.problem_type is lf.problem_type for s in lf.solutions)


def test_derived_values(dev_set):
    for lf in dev_set:
        for sol in lf.solutions:
            assert sol.macro_tile == (sol.params["MacroTile0"], sol.params["MacroTile1"])
            assert sol.num_threads == sol.params["NumThreads"]
            if "LoopIters" in sol.params and sol.matrix_instruction is not None:
                assert sol.loop_iters == sol.params["LoopIters"]
