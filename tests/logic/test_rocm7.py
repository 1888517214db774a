"""ROCm 7.x logic files: the nine real ones read, and each new format element and error on small files."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import tensile_lite.sample
from tensile_lite.asm.gemm.support import decide
from tensile_lite.cli import main
from tensile_lite.errors import LogicError
from tensile_lite.logic import find_logic_files, read_logic_file, sniff_arch
from tensile_lite.model import DataType
from tensile_lite.model.newkeys import NEW_SOLUTION_KEYS, SCHEDULING_ONLY
from tests.shared import logic7_files

GOOD = next(tensile_lite.sample.path().rglob("*HHS_BH.yaml"))  # gfx90a GridBased, list form
_KEEP_PER_SOLUTION = ("SolutionIndex", "SolutionNameMin", "KernelNameMin", "MacroTile0", "MacroTile1")


def _base() -> list:
    return yaml.load(GOOD.read_text(), Loader=yaml.CSafeLoader)


def _write(tmp_path: Path, data: object, name: str = "case.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _compact(data: list, defaults_first: bool = True) -> dict:
    """The list-form sample as a 7.x compact map: common keys go to DefaultSolution."""
    sols = [{k: v for k, v in s.items() if k != "ProblemType"} for s in data[5]]
    common = {k: v for k, v in sols[0].items() if all(k in s and s[k] == v for s in sols[1:])}
    common = {k: v for k, v in common.items() if k not in _KEEP_PER_SOLUTION}
    slim = [{k: v for k, v in s.items() if k not in common} for s in sols]
    head = {"MinimumRequiredVersion": "5.0.0", "ScheduleName": data[1], "ArchitectureName": data[2],
            "CUCount": None, "DeviceNames": data[3], "ProblemType": data[4]}
    tail = {"IndexOrder": data[6], "ExactLogic": data[7], "RangeLogic": None, "TileSelectionIndices": None,
            "PerfMetric": data[10], "LibraryType": data[11]}
    if defaults_first:
        return {**head, "DefaultSolution": common, "Solutions": slim, **tail}
    return {**head, "Solutions": slim, "DefaultSolution": common, **tail}


# -- the nine real files -------------------------------------------------------------------------------

def test_every_logic7_file_reads_and_is_found_by_its_architecture():
    files = logic7_files()
    assert len(files) == 9
    for path in files:
        lf = read_logic_file(path)
        assert lf.solutions and sniff_arch(path) == lf.arch


def test_logic7_formats_and_types_as_the_index_says():
    by_name = {p.name: read_logic_file(p) for p in logic7_files()}
    grid = by_name["aquavanjaram_Cijk_Ailk_Bjlk_B8F8NB8NS_BH_BiasSHB_AmaxD_HAS_SAB_SCD_SAV_UserArgs.yaml"]
    assert grid.library_type == "GridBased" and len(grid.solutions) == 8 and grid.index_order == (2, 3, 0, 1)
    assert grid.problem_type.data_type is DataType.B8F8 and grid.problem_type.data_type.letter7 == "B8F8N"
    assert all(s.kernel_language == "Assembly" for s in grid.solutions)  # from DefaultSolution
    origami = by_name["gfx1250_Cijk_Ailk_Bjlk_S_B_BiasS_HAS_SAV_UserArgs.yaml"]
    assert origami.library_type == "Prediction" and origami.table == () and origami.index_order is None
    assert origami.library_writer_gap is None  # written as the runtime's Prediction node
    fp4 = by_name["gfx1250_Cijk_Alik_Bljk_F4BS_MXAE8B32_MXBE8B32_BH_UserArgs.yaml"].problem_type
    assert fp4.a_type is DataType.F4 and (fp4.mx_block_a, fp4.mx_scale_a) == (32, DataType.E8)
    assert "_MXAE8B32_MXBE8B32" in fp4.name
    ocp = by_name["gfx1201_Cijk_Alik_Bljk_F8F8S_BH_BiasS_HAS_SAV_UserArgs.yaml"].problem_type
    assert ocp.data_type is DataType.F8O and ocp.data_type.name7 == "Float8"


def test_logic7_commands_read_every_file(capsys):
    root = str(logic7_files()[0].parents[3])
    assert main(["inspect-logic", root]) == 0
    assert "total: 9 files, 39 solutions" in capsys.readouterr().out
    assert main(["coverage", root]) == 0
    out = capsys.readouterr().out
    assert "gfx942" in out and "new key TDMInst" in out


# -- compact map with DefaultSolution ----------------------------------------------------------------

def test_compact_form_reads_as_the_list_form(tmp_path):
    data = _base()
    listed = read_logic_file(GOOD)
    compact = read_logic_file(_write(tmp_path, _compact(data)))
    assert compact.library_type == listed.library_type and compact.table == listed.table
    assert [s.params for s in compact.solutions] == [s.params for s in listed.solutions]
    assert compact.problem_type == listed.problem_type


def test_solution_keys_win_over_default_solution(tmp_path):
    doc = _compact(_base())
    doc["DefaultSolution"]["StaggerU"] = 4
    doc["Solutions"][0]["StaggerU"] = 16
    lf = read_logic_file(_write(tmp_path, doc))
    assert lf.solutions[0].runtime.stagger_u == 16 and lf.solutions[1].runtime.stagger_u == 4


@pytest.mark.parametrize(("edit", "fragments"), [
    (lambda d: d.update(DefaultSolution=[1, 2]), ["DefaultSolution", "must be a map"]),
    (lambda d: d["DefaultSolution"].update(ProblemType={}), ["DefaultSolution", "ProblemType"]),
    (lambda d: d["DefaultSolution"].pop("WorkGroup"), ["solution #0", "WorkGroup", "missing"]),
    (lambda d: d.update(LibraryType="Triangular"), ["library type", "Triangular"]),
])
def test_bad_compact_file_names_file_and_parameter(tmp_path, edit, fragments):
    doc = _compact(_base())
    edit(doc)
    path = _write(tmp_path, doc)
    with pytest.raises(LogicError) as info:
        read_logic_file(path)
    line = info.value.one_line()
    assert str(path) in line
    for frag in fragments:
        assert frag in line, (frag, line)


def test_default_solution_after_the_solutions_is_named(tmp_path):
    path = _write(tmp_path, _compact(_base(), defaults_first=False))
    with pytest.raises(LogicError, match="DefaultSolution must come before Solutions") as info:
        read_logic_file(path)
    assert str(path) in info.value.one_line()


# -- list containers and library types ---------------------------------------------------------------

def test_nine_element_list_reads_as_a_matching_table(tmp_path):
    lf = read_logic_file(_write(tmp_path, _base()[:9]))
    assert lf.library_type == "Euclidean" and lf.is_matching and lf.table
    assert any("no library type element" in n for n in lf.notes)


def test_eight_element_list_is_refused(tmp_path):
    with pytest.raises(LogicError, match="at least 9"):
        read_logic_file(_write(tmp_path, _base()[:8]))


@pytest.mark.parametrize("kind", ["Prediction", "EmbeddingSimilarity"])
def test_runtime_ranked_types_list_solutions_only(tmp_path, kind):
    data = _base()
    data[6:10] = [None, None, None, None]
    data[11] = kind
    lf = read_logic_file(_write(tmp_path, data))
    assert lf.library_type == kind and lf.table == () and len(lf.solutions) == len(data[5])
    # Prediction is written; EmbeddingSimilarity's node needs data whose place in the file is unknown
    assert (lf.library_writer_gap is None) == (kind == "Prediction")
    assert kind == "Prediction" or "EmbeddingSimilarity" in (lf.library_writer_gap or "")


# -- data types and MX keys --------------------------------------------------------------------------

def test_unknown_type_code_names_file_and_parameter(tmp_path):
    data = _base()
    data[4]["DataTypeB"] = 23
    path = _write(tmp_path, data)
    with pytest.raises(LogicError) as info:
        read_logic_file(path)
    line = info.value.one_line()
    assert str(path) in line and "DataTypeB" in line and "unknown data type code 23" in line


def test_mx_keys_read_into_the_problem_type(tmp_path):
    data = _base()
    data[4].update(DataTypeMXSA=22, DataTypeMXSB=22, MXBlockA=32, MXBlockB=0)
    pt = read_logic_file(_write(tmp_path, data)).problem_type
    assert (pt.mx_block_a, pt.mx_scale_a, pt.mx_block_b, pt.mx_scale_b) == (32, DataType.E8, 0, None)


def test_mx_block_without_scale_type_is_named(tmp_path):
    data = _base()
    data[4].update(MXBlockA=32)
    with pytest.raises(LogicError, match="scale type is missing") as info:
        read_logic_file(_write(tmp_path, data))
    assert "DataTypeMXSA" in info.value.one_line()


# -- new solution keys and the gate ------------------------------------------------------------------

def test_new_key_at_its_default_keeps_the_solution_supported(tmp_path):
    data = _base()
    data[5][0].update(TDMInst=0, ClusterDim=[1, 1], MXLoadInst="Auto", SwInstructionPrefetch=1)
    sol = read_logic_file(_write(tmp_path, data)).solutions[0]
    assert sol.params["TDMInst"] == 0  # kept
    assert decide(sol).reasons == ()


@pytest.mark.parametrize(("key", "value"), [("TDMInst", 3), ("ClusterDim", [2, 1]), ("MXLoadInst", "TDM"),
                                            ("UseDualFMAC", True)])
def test_new_key_not_at_its_default_makes_the_solution_unsupported(tmp_path, key, value):
    data = _base()
    data[5][0][key] = value
    lf = read_logic_file(_write(tmp_path, data))
    assert decide(lf.solutions[0]).reasons == (f"new key {key}",)
    assert decide(lf.solutions[1]).reasons == ()


def test_new_problem_key_not_at_its_default_makes_every_solution_unsupported(tmp_path):
    data = _base()
    data[4]["SwizzleTensorA"] = True
    lf = read_logic_file(_write(tmp_path, data))
    assert all("new key SwizzleTensorA" in decide(s).reasons for s in lf.solutions)


def test_new_key_tables_do_not_overlap_and_hold_no_2024_tuning_key():
    from tensile_lite.model.params import TUNING_DEFAULTS
    assert not set(NEW_SOLUTION_KEYS) & SCHEDULING_ONLY
    assert not (set(NEW_SOLUTION_KEYS) | SCHEDULING_ONLY) & set(TUNING_DEFAULTS)


# -- discovery and the pre-scan ----------------------------------------------------------------------

def test_experimental_folders_are_skipped_unless_asked(tmp_path):
    text = GOOD.read_text()
    (tmp_path / "gfx90a" / "Experimental").mkdir(parents=True)
    (tmp_path / "gfx90a" / "a.yaml").write_text(text)
    (tmp_path / "gfx90a" / "Experimental" / "b.yaml").write_text(text)
    assert [p.name for p in find_logic_files([tmp_path])] == ["a.yaml"]
    assert sorted(p.name for p in find_logic_files([tmp_path], experimental=True)) == ["a.yaml", "b.yaml"]


def test_sniff_reads_the_head_only_and_tolerates_other_yaml(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text(GOOD.read_text()[:2000] + "\n  - [unclosed\n")
    assert sniff_arch(broken) == "gfx90a"
    compact = _write(tmp_path, _compact(_base()), "compact.yaml")
    assert sniff_arch(compact) == "gfx90a"
    other = tmp_path / "other.yaml"
    other.write_text("name: ci\njobs: [1, 2]\n")
    assert sniff_arch(other) is None


def test_unreadable_file_is_listed_under_its_architecture_and_stops_nothing(tmp_path, capsys):
    (tmp_path / "good.yaml").write_text(GOOD.read_text())
    (tmp_path / "broken.yaml").write_text(GOOD.read_text()[:3000] + "\n  - [unclosed\n")
    assert main(["coverage", "--json", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    import json
    report = json.loads(captured.out)
    gfx90a = report["architectures"]["gfx90a"]
    assert gfx90a["solutions"] > 0 and gfx90a["unreadable_files"] == [str(tmp_path / "broken.yaml")]
    assert "broken.yaml" in captured.err and "not valid YAML" in captured.err
    assert main(["inspect-logic", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert "good.yaml" in captured.out and "[gfx90a]" in captured.err


def test_mx_scaling_changes_the_kernel_key_and_its_absence_does_not(tmp_path):
    from tensile_lite.model import kernel_key
    from tensile_lite.model.kernel_key import problem_signature
    plain = read_logic_file(GOOD)
    data = _base()
    data[4].update(DataTypeMXSA=22, MXBlockA=0)  # a scale type with the block at 0 is off
    off = read_logic_file(_write(tmp_path, data, "off.yaml"))
    data[4].update(MXBlockA=32)
    on = read_logic_file(_write(tmp_path, data, "on.yaml"))
    assert problem_signature(off.problem_type) == problem_signature(plain.problem_type)
    assert not any(name.startswith("mx_") for name, _ in problem_signature(plain.problem_type))
    assert kernel_key(on.solutions[0]) != kernel_key(plain.solutions[0])


def test_compact_form_with_solutions_ahead_of_the_problem_type_is_merged_too(tmp_path):
    doc = _compact(_base())
    doc = {"Solutions": doc.pop("Solutions"), **doc}  # kept raw while parsing, merged afterwards
    lf = read_logic_file(_write(tmp_path, doc))
    assert [s.params for s in lf.solutions] == [s.params for s in read_logic_file(GOOD).solutions]
