"""Every kind of bad logic file gets one clear line naming file, solution and parameter, and exit code 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import tensile_lite.sample
from tensile_lite.cli import main
from tensile_lite.errors import LogicError
from tensile_lite.logic import read_logic_file

GOOD = next(tensile_lite.sample.path().rglob("*HHS_BH.yaml"))


def _variant(tmp_path: Path, name: str, edit) -> Path:
    text = GOOD.read_text()
    out = tmp_path / f"{name}.yaml"
    out.write_text(edit(text))
    return out


def _replace_once(pattern: str, repl: str):
    def edit(text: str) -> str:
        new, n = re.subn(pattern, repl, text, count=1, flags=re.M)
        assert n == 1, pattern
        return new
    return edit


CASES = {
    # name: (edit, expected fragments of the message)
    "truncated": (lambda t: t[: len(t) // 2].rsplit("\n", 3)[0] + "\n  - [unclosed", ["not valid YAML", "line"]),
    "non_list_root": (lambda t: "just a string\n", ["root must be"]),
    "missing_element": (lambda t: t[: t.index("\n- [2, 3, 0, 1]")] + "\n", ["12 elements", "element 11"]),
    "wrong_type": (_replace_once(r"^    DepthU: 32$", "    DepthU: deep"), ["solution #0", "DepthU", "positive integer"]),
    "unknown_data_type": (_replace_once(r"^  DataType: 4$", "  DataType: 99"), ["DataType", "unknown data type"]),
    "missing_required": (_replace_once(r"^    WorkGroup: \[.*\]\n", ""), ["solution #0", "WorkGroup", "missing"]),
    "contradictory": (_replace_once(r"^    MacroTile0: 128$", "    MacroTile0: 96"),
                      ["solution #0", "MacroTile0", "MatrixInstruction"]),
    "bad_library_type": (_replace_once(r"^- GridBased$", "- Triangular"), ["library type", "Triangular"]),
    "table_out_of_range": (_replace_once(r"\[1, 0\.0\]", "[7, 0.0]"), ["refers to solution 7"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_file_names_what_is_wrong(tmp_path, case):
    edit, fragments = CASES[case]
    path = _variant(tmp_path, case, edit)
    with pytest.raises(LogicError) as info:
        read_logic_file(path)
    line = info.value.one_line()
    assert str(path) in line and "\n" not in line
    for frag in fragments:
        assert frag in line, (frag, line)


def test_solution_named_by_index_and_name(tmp_path):
    path = _variant(tmp_path, "named", _replace_once(r"^    MacroTile0: 128$", "    MacroTile0: 96"))
    with pytest.raises(LogicError) as info:
        read_logic_file(path)
    assert "solution #0 (Cijk_Ailk_Bjlk_HHS_BH_MT128x" in info.value.one_line()


def test_cli_exit_code_2_no_traceback_and_keeps_going(tmp_path, capsys):
    bad = _variant(tmp_path, "bad", _replace_once(r"^  DataType: 4$", "  DataType: 99"))
    rc = main(["inspect-logic", str(bad), str(GOOD), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 2
    assert out["total"] == {"files": 1, "solutions": 2, "kernels": 2}
    assert len(out["errors"]) == 1 and "unknown data type" in out["errors"][0]["error"]


def test_cli_error_line_without_traceback(tmp_path, capsys):
    bad = _variant(tmp_path, "bad", CASES["wrong_type"][0])
    assert main(["inspect-logic", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "DepthU" in err


def test_missing_path_is_a_clear_error(tmp_path, capsys):
    assert main(["inspect-logic", str(tmp_path / "nope")]) == 2
    assert "no such file or folder" in capsys.readouterr().err
