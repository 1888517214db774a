"""The logic check 7.x's CMake runs before the build (`Tensile/bin/TensileLogic ... --check-all`,
`python -m tensilelite logic ...`, `tensile-lite check-logic`): good trees pass with a summary, bad files
are named with solution and key and make it exit 2, documented exceptions are honoured."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tensile_lite.cli import main as cli_main
from tensile_lite.commands.check_logic import load_known_bugs, main
from tensile_lite.commands.rocm7_root import KNOWN_BUGS, root
from tensile_lite.errors import EXIT_INPUT, LogicError
from tensile_lite.logic import read_logic_file
from tests.shared import shared_dir

FREESIZE = Path("asm_full/aquavanjaram/gfx942/FreeSize/"
                "aquavanjaram_Cijk_Ailk_Bljk_F8NH_HHS_BH_Bias_HAS_SAB_SAV_Freesize_NTA4_custom_GSU10.yaml")
CMAKE_FLAGS = ["--use-bundled-known-bugs", "--check-all"]


@pytest.fixture
def logic7(tmp_path: Path) -> Path:
    root_dir = tmp_path / "library"
    shutil.copytree(shared_dir("logic7", "asm_full"), root_dir / "asm_full")
    return root_dir


def _break_freesize(logic: Path) -> Path:
    path = logic / FREESIZE
    path.write_text(path.read_text().replace("    WorkGroup: [16, 4, 1]\n", "    WorkGroup: many\n", 1))
    return path


def test_tensile_logic_script_as_cmake_runs_it(logic7: Path, tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, str(root() / "Tensile" / "bin" / "TensileLogic"), str(logic7),
                          "--architecture", "gfx942;", *CMAKE_FLAGS], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(root())}, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "checked 2 logic file(s) of gfx942, 24 solutions (7 file(s) of other architectures not parsed): " \
           "all valid" in res.stdout


def test_a_bad_solution_is_named_and_fails(logic7: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = _break_freesize(logic7)
    assert main([str(logic7), "--architecture", "gfx942;gfx90a", *CMAKE_FLAGS]) == EXIT_INPUT
    out, err = capsys.readouterr()
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert str(broken) in errors[0] and "solution #0" in errors[0] and "parameter WorkGroup" in errors[0]
    assert "1 cannot be read" in out


def test_files_of_other_architectures_do_not_count(logic7: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _break_freesize(logic7)
    assert main([str(logic7), "--architecture", "gfx1201;", *CMAKE_FLAGS]) == 0
    assert "all valid" in capsys.readouterr().out


def test_every_bad_file_is_reported(logic7: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _break_freesize(logic7)
    gfx1201 = next((logic7 / "asm_full" / "gfx1201").rglob("*.yaml"))
    text = gfx1201.read_text()
    # a file naming a target nobody knows, beside a truncated one
    unknown = gfx1201.with_name("gfx1030_copy.yaml")
    unknown.write_text(text.replace("gfx1201", "gfx1030"))
    gfx1201.write_text(text[:4000] + "\n  - [unclosed\n")
    # no --architecture: every file, the unknown target's included
    assert cli_main(["check-logic", str(logic7)]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert err.count("error:") == 3 and "[gfx1201]" in err and "gfx1030" in err


def test_the_validation_filter_form(logic7: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # HipBLASLtCodegen.cmake passes --logic-filter=**/<filter>.yaml to the check
    assert main([str(logic7), "--architecture", "gfx942", "--logic-filter=**/gfx942/FreeSize/*.yaml"]) == 0
    assert "checked 1 logic file(s) of gfx942, 16 solutions" in capsys.readouterr().out


def test_known_bugs_turn_a_named_error_into_a_note(logic7: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    broken = _break_freesize(logic7)
    with pytest.raises(LogicError) as info:
        read_logic_file(broken)
    name = info.value.where.solution_name
    assert name
    bugs = tmp_path / "bugs.yaml"
    bugs.write_text(f"version: 1\nskips:\n  - path: {FREESIZE.as_posix()}\n    solution_name: {name}\n"
                    "    ticket: TL-1\n")
    assert main([str(logic7), "--architecture", "gfx942", "--known-bugs", str(bugs)]) == 0
    assert "note: known bug TL-1, not counted" in capsys.readouterr().err
    bugs.write_text(f"version: 1\nskips:\n  - path: other.yaml\n    solution_name: {name}\n")
    assert main([str(logic7), "--architecture", "gfx942", "--known-bugs", str(bugs)]) == EXIT_INPUT


def test_known_bugs_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert load_known_bugs(root() / KNOWN_BUGS) == ()  # the bundled list parses (and is empty)
    bad = tmp_path / "bugs.yaml"
    bad.write_text("version: 1\nskips:\n  - path: a.yaml\n")
    with pytest.raises(LogicError, match=r"skips\[0\].*solution_name"):
        load_known_bugs(bad)
    assert main([str(tmp_path), "--known-bugs", str(bad)]) == EXIT_INPUT
    assert str(bad) in capsys.readouterr().err


def test_an_empty_selection_is_an_error(logic7: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(logic7), "--architecture", "gfx908"]) == EXIT_INPUT
    assert "no logic files of gfx908" in capsys.readouterr().err
