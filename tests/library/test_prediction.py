"""ROCm 7.x Prediction libraries: the real gfx1250 Origami file planned and written as the 7.x runtime
reads it (a `PredictionMatching` row over a `Prediction` node whose table is the plain list of the
placeholder's solution indices; docs/rocm7_library_types.md), decoded back, merged, and damage refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from tensile_lite.cli import main
from tensile_lite.interfaces import INTERFACES, ROCM_7_2, ROCM_DEVELOP
from tensile_lite.library import build_plan, read_dat, write_library
from tensile_lite.library.documents import placeholder_document
from tensile_lite.library.formats import DatError, decode, encode
from tensile_lite.logic import read_logic_file
from tensile_lite.model import LogicFile
from tensile_lite.verify.integrity import check_document
from tests.shared import logic7_files


def _origami() -> LogicFile:
    found = [p for p in logic7_files() if p.parent.name == "Origami"]
    assert len(found) == 1
    lf = read_logic_file(found[0])
    assert lf.library_type == "Prediction" and len(lf.solutions) == 5
    return lf


def _selection(doc: dict[str, Any]) -> list[dict[str, Any]]:
    assert doc["library"]["type"] == "Problem"
    return doc["library"]["rows"]


@pytest.mark.parametrize("interface", [ROCM_7_2, ROCM_DEVELOP])
def test_real_prediction_file_is_one_prediction_row_over_all_its_solutions(interface):
    lf = _origami()
    plan = build_plan([lf], interface=INTERFACES[interface])
    (ap,) = plan.archs
    (ph,) = ap.placeholders
    assert ap.arch == "gfx1250" and len(ph.solutions) == 5 and not plan.excluded
    doc = placeholder_document(ph)
    indices = [s["index"] for s in doc["solutions"]]
    assert indices == list(range(indices[0], indices[0] + 5))
    assert _selection(doc) == [{"predicate": {"type": "PredictionMatching"},
                                "library": {"type": "Prediction", "table": indices}}]
    check_document(doc, "prediction.dat")


def test_written_prediction_library_decodes_to_the_runtime_structure(tmp_path, capsys):
    lf = _origami()
    plan = build_plan([lf], interface=INTERFACES[ROCM_7_2])
    written = write_library(plan, tmp_path)
    (placeholder,) = [p for p in written if p.name == plan.archs[0].placeholders[0].name + ".dat"]
    doc = read_dat(placeholder)  # checks the structure on the way
    assert decode(encode(doc)) == doc  # msgpack round trip
    (row,) = _selection(doc)
    assert row["library"]["table"] == [s["index"] for s in doc["solutions"]]
    # each pooled solution carries what the runtime's Origami config reads from its sizeMapping
    for entry in doc["solutions"]:
        sm = entry["sizeMapping"]
        assert len(sm["macroTile"]) == 3 and sm["depthU"] > 0 and len(sm["matrixInstruction"]) == 4
        assert {"workGroupMapping", "streamK", "grvwA", "grvwB"} <= sm.keys()
    assert main(["inspect-dat", str(placeholder), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["library"] == doc["library"]
    assert main(["inspect-dat", str(placeholder)]) == 0
    out = capsys.readouterr().out
    assert "library nodes: Prediction 1, Problem 1" in out and "table rows: 5" in out


def test_prediction_files_of_one_placeholder_pool_together_beside_freesize(tmp_path):
    lf = _origami()
    twin = attrs.evolve(lf, path=lf.path + ".twin.yaml")
    free = attrs.evolve(lf, path=lf.path + ".free.yaml", library_type="FreeSize")
    plan = build_plan([lf, twin, free], interface=INTERFACES[ROCM_7_2])
    (ph,) = plan.archs[0].placeholders
    rows = _selection(placeholder_document(ph))
    by_type = {r["library"]["type"]: r for r in rows}
    assert set(by_type) == {"Prediction", "FreeSize"} and len(rows) == 2
    pooled = by_type["Prediction"]["library"]["table"]
    freesize = [e["index"] for e in by_type["FreeSize"]["library"]["table"]]
    assert len(pooled) == 10 and len(freesize) == 5 and not set(pooled) & set(freesize)
    assert by_type["Prediction"]["predicate"] == {"type": "PredictionMatching"}


def test_excluded_solutions_leave_the_pool():
    lf = _origami()
    plan = build_plan([lf], interface=INTERFACES[ROCM_7_2], supported=lambda s: s.index != 2 or "test")
    (ph,) = plan.archs[0].placeholders
    (row,) = _selection(placeholder_document(ph))
    assert len(row["library"]["table"]) == 4 and len(plan.excluded) == 1


@pytest.mark.parametrize("table, what", [([], "non-empty"), ([0, "1"], "integer"), ([12345], "not in the file")])
def test_damaged_prediction_node_is_refused(table, what):
    lf = _origami()
    doc = placeholder_document(build_plan([lf], interface=INTERFACES[ROCM_7_2]).archs[0].placeholders[0])
    _selection(doc)[0]["library"]["table"] = table
    with pytest.raises(DatError, match=what):
        check_document(doc, "damaged.dat")


def test_embedding_similarity_is_left_out_with_its_reason(tmp_path, capsys):
    lf = _origami()
    assert lf.library_writer_gap is None
    source = Path(lf.path).read_text()
    folder = tmp_path / "logic"
    folder.mkdir()
    (folder / "emb.yaml").write_text(source.replace("- Prediction", "- EmbeddingSimilarity"))
    (folder / "pred.yaml").write_text(source)
    assert main(["build-metadata", str(folder), str(tmp_path / "out")]) == 0
    captured = capsys.readouterr()
    assert "emb.yaml left out" in captured.err and "encoder" in captured.err
    assert "gfx1250: 1 placeholder libraries, 5 solutions" in captured.out
