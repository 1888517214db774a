"""read_logic_file converts solutions while the parser streams them; the model is the one the whole-file
path builds, for the list form and for the map (decision-tree) form in either key order."""

from __future__ import annotations

import pytest
import yaml

import tensile_lite.sample
from tensile_lite.errors import LogicError
from tensile_lite.logic import read_logic_file, reader

SAMPLES = sorted(tensile_lite.sample.path().rglob("*.yaml"))
_GENERATOR = type(x for x in ())


def _whole_file_model(monkeypatch, path):
    """The reader as it was before streaming: yaml.load the whole file, then convert."""
    with open(path, "rb") as fh:
        data = yaml.load(fh, Loader=yaml.CSafeLoader)
    with monkeypatch.context() as m:
        m.setattr(reader, "load_yaml", lambda _path, _streamed=None: data)
        return read_logic_file(path)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_list_form_model_equals_whole_file_model(monkeypatch, sample):
    assert read_logic_file(sample) == _whole_file_model(monkeypatch, sample)


def _map_form(list_form: list, solutions_first: bool) -> dict:
    fields = {"ArchitectureName": list_form[2], "MinimumRequiredVersion": "4.33.0", "CUCount": 104,
              "DeviceNames": list_form[3], "ProblemType": list_form[4], "PerfMetric": "DeviceEfficiency",
              "Library": [{"region": [0, 1], "tree": [{"feature": 0, "threshold": 128.0}]}]}
    if solutions_first:  # the solutions come before the problem type: kept raw, converted at the end
        return {"Solutions": list_form[5], **fields}
    return {**fields, "Solutions": list_form[5]}


@pytest.mark.parametrize("solutions_first", [False, True])
def test_map_form_model_equals_whole_file_model(monkeypatch, tmp_path, solutions_first):
    data = yaml.load(SAMPLES[0].read_text(), Loader=yaml.CSafeLoader)
    path = tmp_path / "tree.yaml"
    path.write_text(yaml.safe_dump(_map_form(data, solutions_first), sort_keys=False))
    fed = []  # what the conversion loop is fed first: the parser's iterator, or a list of raw dicts
    convert = reader._solutions
    monkeypatch.setattr(reader, "_solutions", lambda raw, *rest: fed.append(type(raw)) or convert(raw, *rest))
    streamed = read_logic_file(path)
    monkeypatch.undo()
    assert fed[0] is (list if solutions_first else _GENERATOR)
    assert streamed.library_type == "DecisionTree" and len(streamed.solutions) == len(data[5])
    assert streamed == _whole_file_model(monkeypatch, path)


def test_bad_architecture_stops_the_streamed_read_naming_the_file(tmp_path):
    text = SAMPLES[0].read_text()
    arch = yaml.load(text, Loader=yaml.CSafeLoader)[2]
    path = tmp_path / "arch.yaml"
    path.write_text(text.replace(f"\n- {arch}\n", "\n- gfx_nope\n", 1))
    with pytest.raises(LogicError, match="expected an architecture such as gfx942, got 'gfx_nope'") as info:
        read_logic_file(path)
    assert str(path) in info.value.one_line() and "Architecture" in info.value.one_line()
